//! Field-level mutations: for a field of a built packet, an edit fitting
//! its kind (a statement id at its boundaries, a length prefix that lies,
//! a parameter type that does not match its value, ...).

use wirebench_protocol::buf::Reader;

use super::dictionary::{ATTRIBUTES, OTHER_COMMANDS, TABLES};
use super::fields::{Edit, Field, FieldKind, LengthForm};
use super::fuzz_rng::FuzzRng;
use super::values::{edge_bytes, edge_lenenc, edge_one_byte_len, edge_u16, edge_u32, edge_u8};

/// Column types a parameter may claim, valid or not.
const PARAM_TYPES: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12,
    0x13, 0x14, 0xF2, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF, 0x15, 0x80,
];

const PLUGINS: &[&str] = &[
    "",
    "caching_sha2_password",
    "client_ed25519",
    "mysql_clear_password",
    "sha256_password",
    "auth_gssapi_client",
    "dialog",
    "mysql_old_password",
    "%s%s%n",
];

/// An edit for `field`; `database` is the run's, the only name a database
/// field may take besides ones that cannot be a database at all.
pub fn edit_for(field: &Field, previous: Option<&Field>, rng: &mut FuzzRng, database: &str) -> Edit {
    if rng.one_in(16) {
        return generic_edit(field, rng);
    }
    let set = Edit::Set;
    match field.kind {
        FieldKind::Command => set(vec![command_byte(rng)]),
        FieldKind::StatementId | FieldKind::IterationCount | FieldKind::RowCount | FieldKind::MaxPacket => {
            set(edge_u32(rng).to_le_bytes().to_vec())
        }
        FieldKind::ParamId | FieldKind::OptionCode => set(edge_u16(rng).to_le_bytes().to_vec()),
        FieldKind::CursorFlags | FieldKind::ParamsBound => set(vec![edge_u8(rng)]),
        FieldKind::Charset if field.bytes.len() == 2 => set(u16::from(edge_u8(rng)).to_le_bytes().to_vec()),
        FieldKind::Charset => set(vec![*rng.pick(&[0u8, 1, 8, 33, 45, 63, 224, 255]).unwrap_or(&0)]),
        FieldKind::NullBitmap => bitmap_edit(field, rng),
        FieldKind::ParamType => {
            set(vec![*rng.pick(PARAM_TYPES).unwrap_or(&0), *rng.pick(&[0u8, 0x80, 0x01, 0xFF]).unwrap_or(&0)])
        }
        FieldKind::ParamValue | FieldKind::Data | FieldKind::Text | FieldKind::Filler => value_edit(field, rng),
        FieldKind::Capabilities | FieldKind::ExtCapabilities => match rng.below(5) {
            0 => set(vec![0xFF; 4]),
            1 => set(vec![0; 4]),
            _ => Edit::FlipBit(rng.below(32) as u32),
        },
        FieldKind::UserName | FieldKind::AttrKey | FieldKind::AttrValue => name_edit(rng),
        FieldKind::AuthData => match rng.below(4) {
            0 => set(Vec::new()),
            1 => set(rng.bytes(field.bytes.len())),
            2 => set(vec![0x41; 300]),
            _ => Edit::Cut(rng.below(field.bytes.len()) as u32),
        },
        FieldKind::DatabaseName => {
            let names = [Vec::new(), [database.as_bytes(), b"\xff\xfe"].concat(), vec![b'x'; 300]];
            set(names.get(rng.below(names.len())).cloned().unwrap_or_default())
        }
        FieldKind::PluginName => set(rng.pick(PLUGINS).map_or_else(Vec::new, |p| p.as_bytes().to_vec())),
        FieldKind::TableName => set(rng.pick(TABLES).map_or_else(Vec::new, |t| t.as_bytes().to_vec())),
        FieldKind::Terminator if previous.is_some_and(|p| p.kind == FieldKind::DatabaseName) => Edit::Repeat(2),
        FieldKind::Terminator => Edit::Repeat(rng.below(3) as u8),
        FieldKind::Length => length_edit(field, rng),
    }
}

/// Any field: gone, doubled, or a bit flipped.
fn generic_edit(field: &Field, rng: &mut FuzzRng) -> Edit {
    if field.kind == FieldKind::DatabaseName {
        // Doubled or flipped, the name could be another database's.
        return Edit::Set(Vec::new());
    }
    match rng.below(3) {
        0 => Edit::Repeat(0),
        1 => Edit::Repeat(2),
        _ => Edit::FlipBit(rng.next_u32()),
    }
}

/// A command byte that is never one the safety check refuses.
pub fn command_byte(rng: &mut FuzzRng) -> u8 {
    const KNOWN: &[u8] = &[0x01, 0x02, 0x03, 0x04, 0x09, 0x0E, 0x11, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1F];
    if rng.one_in(2) {
        *rng.pick(KNOWN).unwrap_or(&0x0E)
    } else {
        *rng.pick(OTHER_COMMANDS).unwrap_or(&0x0E)
    }
}

fn bitmap_edit(field: &Field, rng: &mut FuzzRng) -> Edit {
    match rng.below(4) {
        0 => Edit::Set(vec![0xFF; field.bytes.len()]),
        1 => Edit::Cut(0),
        2 => Edit::Append(vec![0xFF]),
        _ => Edit::FlipBit(rng.next_u32()),
    }
}

fn value_edit(field: &Field, rng: &mut FuzzRng) -> Edit {
    let len = field.bytes.len();
    match rng.below(6) {
        0 => Edit::Cut(rng.below(len.max(1)) as u32),
        1 => Edit::Append(edge_bytes(rng)),
        2 => Edit::Set(edge_bytes(rng)),
        3 => Edit::Set(rng.bytes(len)),
        4 if len == 8 => Edit::Set([i64::MIN, i64::MAX, -1, 0][rng.below(4)].to_le_bytes().to_vec()),
        4 if len == 4 => Edit::Set(edge_u32(rng).to_le_bytes().to_vec()),
        _ => Edit::FlipBit(rng.next_u32()),
    }
}

fn name_edit(rng: &mut FuzzRng) -> Edit {
    match rng.below(5) {
        0 => Edit::Set(Vec::new()),
        1 => Edit::Set(vec![b'n'; [255, 256, 300, 65_536][rng.below(4)]]),
        2 => Edit::Set(b"\xff\xfe\xc3\x28%s%n\0".to_vec()),
        3 => Edit::Append(b"\0".to_vec()),
        _ => {
            let (k, v) = rng.pick(ATTRIBUTES).copied().unwrap_or(("", ""));
            Edit::Set(if rng.one_in(2) { k } else { v }.as_bytes().to_vec())
        }
    }
}

/// A length prefix that lies about what follows.
fn length_edit(field: &Field, rng: &mut FuzzRng) -> Edit {
    let form = field.measures.map_or(LengthForm::Lenenc, |m| m.form);
    match form {
        LengthForm::OneByte => Edit::Set(edge_one_byte_len(rng, field.bytes.first().copied().unwrap_or(0))),
        LengthForm::Lenenc => {
            let actual = Reader::new(&field.bytes).lenenc_int("length").unwrap_or(0);
            Edit::Set(edge_lenenc(rng, actual))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::dictionary::FORBIDDEN_COMMANDS;

    #[test]
    fn command_bytes_are_never_forbidden_ones() {
        let mut rng = FuzzRng::new(9, 9);
        for _ in 0..2000 {
            let b = command_byte(&mut rng);
            assert!(FORBIDDEN_COMMANDS.iter().all(|(f, _)| *f != b), "0x{b:02x}");
        }
    }

    #[test]
    fn database_fields_only_take_names_that_cannot_be_another_database() {
        let mut rng = FuzzRng::new(1, 1);
        let field = Field::new(FieldKind::DatabaseName, b"sbtest");
        for _ in 0..500 {
            let bytes = match edit_for(&field, None, &mut rng, "sbtest") {
                Edit::Set(b) => b,
                other => panic!("{other:?}"),
            };
            assert!(bytes.is_empty() || bytes.starts_with(b"sbtest") || bytes.len() > 64, "{bytes:?}");
        }
    }
}

//! A client packet's payload as a list of typed fields, so that mutations
//! hit fields (a statement id, a length prefix, a null bitmap) instead of
//! random bytes.
//!
//! A valid packet is first encoded by the protocol crate, then split into
//! fields (`encode_spec.rs`); [`FieldEdit`]s change fields; [`Fields::finish`]
//! writes the payload, recomputing every length prefix whose fields
//! changed, unless an edit set that prefix itself (then it keeps the
//! edited value and no longer matches: that is the point).

use std::ops::Range;

use wirebench_protocol::buf::WriteExt;

/// What a field holds, which decides how it is mutated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldKind {
    /// The command byte.
    Command,
    StatementId,
    CursorFlags,
    IterationCount,
    NullBitmap,
    ParamsBound,
    /// A parameter's two type bytes.
    ParamType,
    /// A parameter's value (a string's bytes after its length prefix).
    ParamValue,
    /// COM_STMT_SEND_LONG_DATA's parameter number.
    ParamId,
    RowCount,
    /// COM_SET_OPTION's option.
    OptionCode,
    Capabilities,
    /// MariaDB's extended capabilities in the login's filler.
    ExtCapabilities,
    MaxPacket,
    Charset,
    Filler,
    UserName,
    AuthData,
    /// The default database: mutated only into names that cannot be another database.
    DatabaseName,
    PluginName,
    TableName,
    /// The NUL after a NUL-terminated string.
    Terminator,
    /// A length prefix (length-encoded, or one byte).
    Length,
    AttrKey,
    AttrValue,
    /// Statement text.
    Text,
    /// Bytes to the end of the packet (long data, a wildcard, an unknown command's body).
    Data,
}

/// How a length prefix is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthForm {
    Lenenc,
    OneByte,
}

/// The fields a length prefix measures: the next `count` fields after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    pub count: usize,
    pub form: LengthForm,
}

/// A value that depends on the connection: recomputed when a session is
/// replayed on a new connection, unless an edit replaced it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LiveValue {
    /// The auth plugin's answer to the connection's nonce.
    Scramble { plugin: String },
    /// The id the server gave the session's `prepare`-th COM_STMT_PREPARE (from 0).
    Statement { prepare: usize },
    /// The client's answer to the server's last auth request (a switch's
    /// nonce, caching_sha2_password's steps).
    AuthReply,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub kind: FieldKind,
    pub bytes: Vec<u8>,
    pub measures: Option<Measure>,
    /// A length prefix set by an edit: written as it is.
    pub pinned: bool,
    pub live: Option<LiveValue>,
}

impl Field {
    pub fn new(kind: FieldKind, bytes: &[u8]) -> Self {
        Field { kind, bytes: bytes.to_vec(), measures: None, pinned: false, live: None }
    }

    pub fn length(form: LengthForm, bytes: &[u8], count: usize) -> Self {
        Field { measures: Some(Measure { count, form }), ..Field::new(FieldKind::Length, bytes) }
    }

    #[cfg(test)]
    pub fn live(kind: FieldKind, bytes: &[u8], live: LiveValue) -> Self {
        Field { live: Some(live), ..Field::new(kind, bytes) }
    }
}

/// How an edit changes a field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Edit {
    /// The field's bytes become these.
    Set(Vec<u8>),
    /// Only the first `keep` bytes remain.
    Cut(u32),
    Append(Vec<u8>),
    /// Flips bit `n` (modulo the field's size).
    FlipBit(u32),
    /// The field is sent this many times (0: left out).
    Repeat(u8),
}

/// An edit of the `nth` field of a kind (from 0), so that it applies to the
/// same field whenever the packet is rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldEdit {
    pub kind: FieldKind,
    pub nth: u16,
    pub edit: Edit,
}

/// A value recomputed per connection, found at `range` of the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSpot {
    pub live: LiveValue,
    pub range: Range<usize>,
}

/// The fields of one payload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fields(pub Vec<Field>);

impl Fields {
    pub fn push(&mut self, field: Field) {
        self.0.push(field);
    }

    /// How many fields of `kind` there are.
    #[cfg(test)]
    pub fn count(&self, kind: FieldKind) -> usize {
        self.0.iter().filter(|f| f.kind == kind).count()
    }

    #[cfg(test)]
    pub fn nth(&self, kind: FieldKind, nth: usize) -> Option<&Field> {
        self.0.iter().filter(|f| f.kind == kind).nth(nth)
    }

    /// Applies an edit; one whose field is absent in this build does nothing.
    pub fn apply(&mut self, edit: &FieldEdit) {
        let Some(field) = self.0.iter_mut().filter(|f| f.kind == edit.kind).nth(usize::from(edit.nth)) else {
            return;
        };
        field.live = None;
        if field.kind == FieldKind::Length {
            field.pinned = true;
        }
        let bytes = &mut field.bytes;
        match &edit.edit {
            Edit::Set(new) => bytes.clone_from(new),
            Edit::Cut(keep) => bytes.truncate(*keep as usize),
            Edit::Append(more) => bytes.extend_from_slice(more),
            Edit::FlipBit(bit) => {
                let bits = bytes.len() * 8;
                if bits > 0 {
                    let bit = *bit as usize % bits;
                    if let Some(b) = bytes.get_mut(bit / 8) {
                        *b ^= 1 << (bit % 8);
                    }
                }
            }
            Edit::Repeat(times) => *bytes = bytes.repeat(usize::from(*times)),
        }
    }

    /// Writes the payload to `out` and returns where its live values are.
    /// Length prefixes not pinned by an edit are recomputed first, inner
    /// ones before the outer ones that contain them.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Vec<LiveSpot> {
        for at in (0..self.0.len()).rev() {
            let Some(field) = self.0.get(at) else { continue };
            let (Some(measure), false) = (field.measures, field.pinned) else { continue };
            let measured: usize = self.0.iter().skip(at + 1).take(measure.count).map(|f| f.bytes.len()).sum();
            let mut prefix = Vec::new();
            match measure.form {
                LengthForm::Lenenc => prefix.put_lenenc_int(measured as u64),
                LengthForm::OneByte => prefix.put_u8(measured.min(255) as u8),
            }
            if let Some(field) = self.0.get_mut(at) {
                field.bytes = prefix;
            }
        }
        let mut spots = Vec::new();
        let base = out.len();
        for field in &self.0 {
            let start = out.len() - base;
            out.extend_from_slice(&field.bytes);
            if let Some(live) = &field.live {
                spots.push(LiveSpot { live: live.clone(), range: start..start + field.bytes.len() });
            }
        }
        spots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs() -> Fields {
        // A block length over two lenenc strings: 03 (01 'k') ... as a login writes it.
        let mut f = Fields::default();
        f.push(Field::new(FieldKind::Command, &[0x11]));
        f.push(Field::length(LengthForm::Lenenc, &[4], 4));
        f.push(Field::length(LengthForm::Lenenc, &[1], 1));
        f.push(Field::new(FieldKind::AttrKey, b"k"));
        f.push(Field::length(LengthForm::Lenenc, &[1], 1));
        f.push(Field::live(FieldKind::AttrValue, b"v", LiveValue::Statement { prepare: 0 }));
        f
    }

    #[test]
    fn lengths_follow_edited_contents_inner_first() {
        let mut f = attrs();
        f.apply(&FieldEdit { kind: FieldKind::AttrValue, nth: 0, edit: Edit::Set(vec![b'x'; 300]) });
        let mut out = Vec::new();
        let spots = f.finish(&mut out);
        // Inner prefix 0xFC 2C 01 (300), outer 1+1+3+300 = 305 = 0xFC 31 01.
        assert_eq!(&out[..4], [0x11, 0xFC, 0x31, 0x01]);
        assert_eq!(&out[4..8], [0x01, b'k', 0xFC, 0x2C]);
        assert_eq!(out.len(), 1 + 3 + 2 + 3 + 300);
        assert!(spots.is_empty(), "an edited live value is no longer recomputed");
    }

    #[test]
    fn an_edited_prefix_keeps_its_value() {
        let mut f = attrs();
        f.apply(&FieldEdit { kind: FieldKind::Length, nth: 0, edit: Edit::Set(vec![0xFE, 0xFF]) });
        f.apply(&FieldEdit { kind: FieldKind::AttrKey, nth: 0, edit: Edit::Append(b"ey".to_vec()) });
        let mut out = Vec::new();
        let spots = f.finish(&mut out);
        assert_eq!(out, [0x11, 0xFE, 0xFF, 0x03, b'k', b'e', b'y', 0x01, b'v']);
        assert_eq!(spots, vec![LiveSpot { live: LiveValue::Statement { prepare: 0 }, range: 8..9 }]);
    }

    #[test]
    fn cut_flip_repeat_and_absent_fields() {
        let mut f = attrs();
        f.apply(&FieldEdit { kind: FieldKind::AttrKey, nth: 0, edit: Edit::Repeat(3) });
        f.apply(&FieldEdit { kind: FieldKind::Command, nth: 0, edit: Edit::FlipBit(9) });
        f.apply(&FieldEdit { kind: FieldKind::AttrValue, nth: 0, edit: Edit::Cut(0) });
        f.apply(&FieldEdit { kind: FieldKind::Text, nth: 5, edit: Edit::Cut(0) });
        let mut out = Vec::new();
        f.finish(&mut out);
        assert_eq!(out, [0x13, 0x05, 0x03, b'k', b'k', b'k', 0x00]);
    }
}

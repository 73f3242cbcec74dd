//! Column definitions (Protocol::ColumnDefinition41): one packet per column
//! of a result set, and per parameter and column of a prepared statement.
//!
//! Layout: six length-encoded strings (catalog, schema, table alias, table,
//! column alias, column); with MariaDB's MARIADB_CLIENT_EXTENDED_TYPE_INFO a
//! length-encoded block of extended metadata; then a length-encoded 0x0C and
//! twelve bytes of fixed fields (charset u16, column length u32, type u8,
//! flags u16, decimals u8, two filler bytes).

use std::borrow::Cow;

use crate::buf::{Reader, WriteExt};
use crate::constants::{Capabilities, ColumnFlags, ColumnType};
use crate::error::{ProtocolError, Result};
use crate::framing::{finish_packet, start_packet};

/// The length of the fixed fields, which the packet states before them.
const FIXED_FIELDS_LEN: u64 = 0x0C;

/// MariaDB extended metadata keys ("Result Set Packets", column definition):
/// each entry is a 1-byte key and a length-encoded string.
const EXT_TYPE_NAME: u8 = 0x00;
const EXT_FORMAT_NAME: u8 = 0x01;

/// Decimals value meaning "not fixed" (MySQL's NOT_FIXED_DEC is 31, MariaDB's 39):
/// anything from 31 up says the server did not fix the number of decimals.
pub const NOT_FIXED_DECIMALS: u8 = 31;

/// One column definition. Borrowed from the packet when parsed; use
/// [`ColumnDefinition::into_owned`] (a [`Column`]) to keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDefinition<'a> {
    /// Always "def" on every server that speaks protocol 4.1.
    pub catalog: Cow<'a, [u8]>,
    pub schema: Cow<'a, [u8]>,
    /// The table alias (what the query called it).
    pub table: Cow<'a, [u8]>,
    pub org_table: Cow<'a, [u8]>,
    /// The column alias.
    pub name: Cow<'a, [u8]>,
    pub org_name: Cow<'a, [u8]>,
    /// MariaDB extended type name (e.g. "json", "point"), sent only with
    /// MARIADB_CLIENT_EXTENDED_TYPE_INFO.
    pub ext_type_name: Option<Cow<'a, [u8]>>,
    /// MariaDB extended format name (e.g. "json", "uuid"), likewise.
    pub ext_format_name: Option<Cow<'a, [u8]>>,
    pub charset: u16,
    /// Maximum display length in bytes.
    pub column_length: u32,
    pub column_type: ColumnType,
    pub flags: ColumnFlags,
    /// Digits after the point (fractional seconds for temporal types);
    /// [`NOT_FIXED_DECIMALS`] and above mean "not fixed".
    pub decimals: u8,
}

/// An owned column definition.
pub type Column = ColumnDefinition<'static>;

impl<'a> ColumnDefinition<'a> {
    /// A definition with empty names, for building packets in tests and fake servers.
    pub fn new(name: &'a [u8], column_type: ColumnType) -> Self {
        ColumnDefinition {
            catalog: Cow::Borrowed(b"def"),
            schema: Cow::Borrowed(b""),
            table: Cow::Borrowed(b""),
            org_table: Cow::Borrowed(b""),
            name: Cow::Borrowed(name),
            org_name: Cow::Borrowed(name),
            ext_type_name: None,
            ext_format_name: None,
            charset: u16::from(crate::constants::CHARSET_BINARY),
            column_length: 0,
            column_type,
            flags: ColumnFlags::default(),
            decimals: 0,
        }
    }

    /// Parses a column definition payload under the negotiated capabilities.
    ///
    /// Bytes after the fixed fields are ignored: COM_FIELD_LIST appends a
    /// default value there, and later servers may append more.
    pub fn parse(payload: &'a [u8], caps: Capabilities) -> Result<Self> {
        let mut r = Reader::new(payload);
        let catalog = Cow::Borrowed(r.lenenc_bytes("column catalog")?);
        let schema = Cow::Borrowed(r.lenenc_bytes("column schema")?);
        let table = Cow::Borrowed(r.lenenc_bytes("column table")?);
        let org_table = Cow::Borrowed(r.lenenc_bytes("column org_table")?);
        let name = Cow::Borrowed(r.lenenc_bytes("column name")?);
        let org_name = Cow::Borrowed(r.lenenc_bytes("column org_name")?);
        let mut ext_type_name = None;
        let mut ext_format_name = None;
        if caps.contains(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO) {
            let mut ext = Reader::new(r.lenenc_bytes("column extended metadata")?);
            while !ext.is_empty() {
                let key = ext.u8("column extended metadata key")?;
                let value = ext.lenenc_bytes("column extended metadata value")?;
                match key {
                    EXT_TYPE_NAME => ext_type_name = Some(Cow::Borrowed(value)),
                    EXT_FORMAT_NAME => ext_format_name = Some(Cow::Borrowed(value)),
                    // Keys a later server may add are skipped, as MariaDB's connectors do.
                    _ => {}
                }
            }
        }
        if r.lenenc_int("column fixed fields length")? != FIXED_FIELDS_LEN {
            return Err(ProtocolError::Malformed("column fixed fields length"));
        }
        let charset = r.u16("column charset")?;
        let column_length = r.u32("column length")?;
        let type_byte = r.u8("column type")?;
        let column_type = ColumnType::from_u8(type_byte).ok_or(ProtocolError::Malformed("column type"))?;
        let flags = ColumnFlags(r.u16("column flags")?);
        let decimals = r.u8("column decimals")?;
        r.skip(2, "column filler")?;
        Ok(ColumnDefinition {
            catalog,
            schema,
            table,
            org_table,
            name,
            org_name,
            ext_type_name,
            ext_format_name,
            charset,
            column_length,
            column_type,
            flags,
            decimals,
        })
    }

    pub fn is_unsigned(&self) -> bool {
        self.flags.contains(ColumnFlags::UNSIGNED)
    }

    /// Appends the payload (no header) as the server would send it under `caps`.
    pub fn encode_payload(&self, caps: Capabilities, out: &mut Vec<u8>) {
        out.put_lenenc_bytes(&self.catalog);
        out.put_lenenc_bytes(&self.schema);
        out.put_lenenc_bytes(&self.table);
        out.put_lenenc_bytes(&self.org_table);
        out.put_lenenc_bytes(&self.name);
        out.put_lenenc_bytes(&self.org_name);
        if caps.contains(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO) {
            let mut ext = Vec::new();
            for (key, value) in [(EXT_TYPE_NAME, &self.ext_type_name), (EXT_FORMAT_NAME, &self.ext_format_name)] {
                if let Some(value) = value {
                    ext.put_u8(key);
                    ext.put_lenenc_bytes(value);
                }
            }
            out.put_lenenc_bytes(&ext);
        }
        out.put_lenenc_int(FIXED_FIELDS_LEN);
        out.put_u16(self.charset);
        out.put_u32(self.column_length);
        out.put_u8(self.column_type as u8);
        out.put_u16(self.flags.0);
        out.put_u8(self.decimals);
        out.put_zeros(2);
    }

    /// Appends the whole packet with sequence id `seq`; returns the next id.
    pub fn encode(&self, caps: Capabilities, seq: u8, out: &mut Vec<u8>) -> u8 {
        let start = start_packet(out);
        self.encode_payload(caps, out);
        finish_packet(out, start, seq)
    }

    pub fn into_owned(self) -> Column {
        fn own(c: Cow<'_, [u8]>) -> Cow<'static, [u8]> {
            Cow::Owned(c.into_owned())
        }
        ColumnDefinition {
            catalog: own(self.catalog),
            schema: own(self.schema),
            table: own(self.table),
            org_table: own(self.org_table),
            name: own(self.name),
            org_name: own(self.org_name),
            ext_type_name: self.ext_type_name.map(own),
            ext_format_name: self.ext_format_name.map(own),
            charset: self.charset,
            column_length: self.column_length,
            column_type: self.column_type,
            flags: self.flags,
            decimals: self.decimals,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    const CAPS: Capabilities = Capabilities::PROTOCOL_41;
    const EXT: Capabilities = Capabilities::PROTOCOL_41.union(Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO);

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap()).collect()
    }

    #[test]
    fn documented_text_resultset_column() {
        // The column definition of the documentation's Text Resultset example
        // (SELECT @@version_comment), header 27 00 00 02 stripped.
        let p = hex("03 64 65 66 00 00 00 11 40 40 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65
             6e 74 00 0c 08 00 1c 00 00 00 fd 00 00 1f 00 00");
        let col = ColumnDefinition::parse(&p, CAPS).unwrap();
        assert_eq!(&*col.catalog, b"def");
        assert_eq!(&*col.schema, b"");
        assert_eq!(&*col.name, b"@@version_comment");
        assert_eq!(&*col.org_name, b"");
        assert_eq!(col.charset, 8);
        assert_eq!(col.column_length, 28);
        assert_eq!(col.column_type, ColumnType::VarString);
        assert_eq!(col.flags, ColumnFlags(0));
        assert_eq!(col.decimals, 0x1f);
        let mut out = Vec::new();
        col.encode_payload(CAPS, &mut out);
        assert_eq!(out, p);
    }

    #[test]
    fn mariadb_point_select_column() {
        // Captured from MariaDB 10.11: `c` of sbtest.sbtest1, CHAR(120) NOT NULL, utf8mb4.
        let p = hex("03 64 65 66 06 73 62 74 65 73 74 07 73 62 74 65 73 74 31 07 73 62 74 65 73 74 31
             01 63 01 63 0c 2d 00 e0 01 00 00 fe 01 00 00 00 00");
        let col = ColumnDefinition::parse(&p, CAPS).unwrap();
        assert_eq!((&*col.schema, &*col.table, &*col.org_table), (&b"sbtest"[..], &b"sbtest1"[..], &b"sbtest1"[..]));
        assert_eq!(col.charset, 45);
        assert_eq!(col.column_length, 480);
        assert_eq!(col.column_type, ColumnType::String);
        assert_eq!(col.flags, ColumnFlags::NOT_NULL);
        assert_eq!(col.decimals, 0);
        // Without the MariaDB capability the same bytes must not be read as extended.
        assert!(ColumnDefinition::parse(&p, EXT).is_err());
    }

    #[test]
    fn mariadb_extended_type_info() {
        // Captured from MariaDB 10.11 with MARIADB_CLIENT_EXTENDED_TYPE_INFO: the JSON
        // column `j` of wb.alltypes is a LONGTEXT blob whose extended format (key 1) is "json".
        let p = hex("03 64 65 66 02 77 62 08 61 6c 6c 74 79 70 65 73 08 61 6c 6c 74 79 70 65 73
             01 6a 01 6a 06 01 04 6a 73 6f 6e 0c 2d 00 ff ff ff ff fc 90 00 00 00 00");
        let col = ColumnDefinition::parse(&p, EXT).unwrap();
        assert_eq!(col.ext_type_name, None);
        assert_eq!(col.ext_format_name.as_deref(), Some(&b"json"[..]));
        assert_eq!(col.column_type, ColumnType::Blob);
        assert_eq!(col.column_length, 0xFFFF_FFFF);
        let mut out = Vec::new();
        col.encode_payload(EXT, &mut out);
        assert_eq!(out, p);
    }

    #[test]
    fn bad_fields_are_errors() {
        let mut good = Vec::new();
        ColumnDefinition::new(b"a", ColumnType::Long).encode_payload(CAPS, &mut good);
        assert!(ColumnDefinition::parse(&good, CAPS).is_ok());
        let type_at = good.len() - 6;
        let mut bad = good.clone();
        bad[type_at] = 0x20;
        assert_eq!(ColumnDefinition::parse(&bad, CAPS), Err(ProtocolError::Malformed("column type")));
        let mut bad = good.clone();
        bad[type_at - 7] = 0x0B;
        assert_eq!(ColumnDefinition::parse(&bad, CAPS), Err(ProtocolError::Malformed("column fixed fields length")));
        assert_eq!(
            ColumnDefinition::parse(&good[..good.len() - 1], CAPS),
            Err(ProtocolError::UnexpectedEof("column filler"))
        );
        // An extended-metadata entry that runs past its block.
        let mut bad = Vec::new();
        bad.put_lenenc_bytes(b"def");
        bad.put_zeros(5);
        bad.put_lenenc_bytes(&[0x00, 0x05, b'x']);
        assert_eq!(
            ColumnDefinition::parse(&bad, EXT),
            Err(ProtocolError::UnexpectedEof("column extended metadata value"))
        );
    }

    pub(crate) fn any_column_type() -> impl Strategy<Value = ColumnType> {
        (0u16..=255).prop_filter_map("known type", |b| ColumnType::from_u8(b as u8))
    }

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..300)
    }

    pub(crate) fn any_column(with_ext: bool) -> impl Strategy<Value = Column> {
        let ext = if with_ext {
            (proptest::option::of(bytes()), proptest::option::of(bytes())).boxed()
        } else {
            Just((None, None)).boxed()
        };
        (
            (bytes(), bytes(), bytes(), bytes(), bytes(), bytes()),
            ext,
            (any::<u16>(), any::<u32>(), any_column_type(), any::<u16>(), any::<u8>()),
        )
            .prop_map(
                |((catalog, schema, table, org_table, name, org_name), (t, f), (cs, len, ty, flags, dec))| {
                    ColumnDefinition {
                        catalog: Cow::Owned(catalog),
                        schema: Cow::Owned(schema),
                        table: Cow::Owned(table),
                        org_table: Cow::Owned(org_table),
                        name: Cow::Owned(name),
                        org_name: Cow::Owned(org_name),
                        ext_type_name: t.map(Cow::Owned),
                        ext_format_name: f.map(Cow::Owned),
                        charset: cs,
                        column_length: len,
                        column_type: ty,
                        flags: ColumnFlags(flags),
                        decimals: dec,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn round_trip(col in any_column(false), seq in any::<u8>()) {
            let mut out = Vec::new();
            prop_assert_eq!(col.encode(CAPS, seq, &mut out), seq.wrapping_add(1));
            let frame = crate::framing::decode_packet(&out, seq, usize::MAX).unwrap().unwrap();
            let back = ColumnDefinition::parse(&frame.payload, CAPS).unwrap();
            prop_assert_eq!(back.into_owned(), col);
        }

        #[test]
        fn round_trip_extended(col in any_column(true)) {
            let mut out = Vec::new();
            col.encode_payload(EXT, &mut out);
            prop_assert_eq!(ColumnDefinition::parse(&out, EXT).unwrap(), col);
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80), ext in any::<bool>()) {
            let _ = ColumnDefinition::parse(&bytes, if ext { EXT } else { CAPS });
        }
    }
}

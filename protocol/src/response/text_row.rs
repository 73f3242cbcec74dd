//! Text protocol rows (ProtocolText::ResultsetRow): one length-encoded
//! string per column, with 0xFB standing for NULL.

use crate::buf::{Reader, WriteExt};
use crate::error::{ProtocolError, Result};
use crate::framing::{finish_packet, start_packet};

/// The NULL marker inside a text row.
pub const NULL_MARKER: u8 = 0xFB;

/// A text row whose values have been checked against the column count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRow<'a> {
    payload: &'a [u8],
    columns: usize,
}

impl<'a> TextRow<'a> {
    /// Checks that `payload` holds exactly `columns` values and nothing else.
    pub fn parse(payload: &'a [u8], columns: usize) -> Result<Self> {
        let mut r = Reader::new(payload);
        for _ in 0..columns {
            if let Some(len) = r.lenenc_int_or_null("text row value")? {
                let len = usize::try_from(len).map_err(|_| ProtocolError::UnexpectedEof("text row value"))?;
                r.skip(len, "text row value")?;
            }
        }
        r.finish("text row")?;
        Ok(TextRow { payload, columns })
    }

    pub fn len(&self) -> usize {
        self.columns
    }

    pub fn is_empty(&self) -> bool {
        self.columns == 0
    }

    /// The values in column order, `None` for NULL, borrowed from the packet.
    pub fn values(&self) -> TextValues<'a> {
        TextValues { reader: Reader::new(self.payload), left: self.columns }
    }
}

/// Walks the values of a [`TextRow`] without allocating.
#[derive(Debug, Clone)]
pub struct TextValues<'a> {
    reader: Reader<'a>,
    left: usize,
}

impl<'a> Iterator for TextValues<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // TextRow::parse validated every value, so these reads cannot fail;
        // should they, the walk simply ends.
        match self.reader.peek_u8() {
            Some(NULL_MARKER) => {
                self.reader.skip(1, "text row value").ok()?;
                Some(None)
            }
            _ => self.reader.lenenc_bytes("text row value").ok().map(Some),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// Appends a text row payload (no header).
pub fn encode_text_row_payload<'v>(values: impl IntoIterator<Item = Option<&'v [u8]>>, out: &mut Vec<u8>) {
    for value in values {
        match value {
            Some(v) => out.put_lenenc_bytes(v),
            None => out.put_u8(NULL_MARKER),
        }
    }
}

/// Appends a text row packet with sequence id `seq`; returns the next id.
pub fn encode_text_row<'v>(values: impl IntoIterator<Item = Option<&'v [u8]>>, seq: u8, out: &mut Vec<u8>) -> u8 {
    let start = start_packet(out);
    encode_text_row_payload(values, out);
    finish_packet(out, start, seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::column::tests::hex;
    use proptest::prelude::*;

    #[test]
    fn documented_example_row() {
        // The row of the documentation's Text Resultset example (header 1d 00 00 04 stripped).
        let p = hex("1c 4d 79 53 51 4c 20 43 6f 6d 6d 75 6e 69 74 79 20 53 65 72 76 65 72 20 28 47 50 4c 29");
        let row = TextRow::parse(&p, 1).unwrap();
        assert_eq!(row.values().collect::<Vec<_>>(), vec![Some(&b"MySQL Community Server (GPL)"[..])]);
    }

    #[test]
    fn mariadb_row_with_nulls() {
        // Captured from MariaDB 10.11: the second result of CALL wb.p(), SELECT 'two', NULL.
        let p = hex("03 74 77 6f fb");
        let row = TextRow::parse(&p, 2).unwrap();
        assert_eq!(row.values().collect::<Vec<_>>(), vec![Some(&b"two"[..]), None]);
        // The all-NULL row of wb.alltypes: id 3, then 28 NULLs.
        let mut p = vec![0x01, b'3'];
        p.extend([NULL_MARKER; 28]);
        let row = TextRow::parse(&p, 29).unwrap();
        assert_eq!(row.values().filter(Option::is_none).count(), 28);
    }

    #[test]
    fn wrong_column_counts_are_errors() {
        let p = hex("03 74 77 6f fb");
        assert_eq!(TextRow::parse(&p, 1), Err(ProtocolError::TrailingBytes("text row", 1)));
        assert_eq!(TextRow::parse(&p, 3), Err(ProtocolError::UnexpectedEof("text row value")));
        assert_eq!(TextRow::parse(&[0x05, b'a'], 1), Err(ProtocolError::UnexpectedEof("text row value")));
        assert_eq!(TextRow::parse(&[0xFF], 1), Err(ProtocolError::Malformed("text row value")));
    }

    #[test]
    fn empty_string_is_not_null() {
        let row = TextRow::parse(&[0x00, NULL_MARKER], 2).unwrap();
        assert_eq!(row.values().collect::<Vec<_>>(), vec![Some(&b""[..]), None]);
    }

    proptest! {
        #[test]
        fn round_trip(values in proptest::collection::vec(
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)), 0..20), seq in any::<u8>()) {
            let mut out = Vec::new();
            let next = encode_text_row(values.iter().map(|v| v.as_deref()), seq, &mut out);
            prop_assert_eq!(next, seq.wrapping_add(1));
            let frame = crate::framing::decode_packet(&out, seq, usize::MAX).unwrap().unwrap();
            let row = TextRow::parse(&frame.payload, values.len()).unwrap();
            let back: Vec<Option<Vec<u8>>> = row.values().map(|v| v.map(<[u8]>::to_vec)).collect();
            prop_assert_eq!(back, values);
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), columns in 0usize..10) {
            if let Ok(row) = TextRow::parse(&bytes, columns) {
                prop_assert_eq!(row.values().count(), columns);
            }
        }
    }
}

//! One bounds-checked reader and the writing helpers every encoder uses.
//!
//! All reads of peer bytes go through [`Reader`]: it never panics, every
//! length the peer sent is checked against what is actually there, and a
//! short read is a [`ProtocolError::UnexpectedEof`] naming the field.

use crate::error::{ProtocolError, Result};

/// A cursor over one packet payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Offset of the next byte from the start of the payload.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The unread bytes, without consuming them.
    pub fn peek_rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or_default()
    }

    /// The next byte, without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Consumes and returns all unread bytes.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.peek_rest();
        self.pos = self.buf.len();
        rest
    }

    /// Consumes exactly `n` bytes.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(ProtocolError::UnexpectedEof(what))?;
        let bytes = self.buf.get(self.pos..end).ok_or(ProtocolError::UnexpectedEof(what))?;
        self.pos = end;
        Ok(bytes)
    }

    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<()> {
        self.take(n, what).map(|_| ())
    }

    /// Consumes exactly `N` bytes into an array.
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let bytes = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        let b = self.peek_u8().ok_or(ProtocolError::UnexpectedEof(what))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub fn u24(&mut self, what: &'static str) -> Result<u32> {
        let [a, b, c] = self.array(what)?;
        Ok(u32::from_le_bytes([a, b, c, 0]))
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A length-encoded integer. 0xFB (NULL) and 0xFF (ERR) are not integers
    /// here; callers that allow NULL use [`Reader::lenenc_int_or_null`].
    #[inline]
    pub fn lenenc_int(&mut self, what: &'static str) -> Result<u64> {
        match self.lenenc_int_or_null(what)? {
            Some(v) => Ok(v),
            None => Err(ProtocolError::Malformed(what)),
        }
    }

    /// A length-encoded integer where 0xFB means NULL (text rows).
    #[inline]
    pub fn lenenc_int_or_null(&mut self, what: &'static str) -> Result<Option<u64>> {
        let first = self.u8(what)?;
        let v = match first {
            0x00..=0xFA => u64::from(first),
            0xFB => return Ok(None),
            0xFC => u64::from(self.u16(what)?),
            0xFD => u64::from(self.u24(what)?),
            0xFE => self.u64(what)?,
            0xFF => return Err(ProtocolError::Malformed(what)),
        };
        Ok(Some(v))
    }

    /// A length-encoded string: a lenenc length, then that many bytes.
    pub fn lenenc_bytes(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let len = self.lenenc_int(what)?;
        let len = usize::try_from(len).map_err(|_| ProtocolError::UnexpectedEof(what))?;
        self.take(len, what)
    }

    /// Bytes up to a NUL, which is consumed but not returned.
    pub fn null_terminated(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let rest = self.peek_rest();
        let nul = rest.iter().position(|&b| b == 0).ok_or(ProtocolError::UnexpectedEof(what))?;
        let s = rest.get(..nul).ok_or(ProtocolError::UnexpectedEof(what))?;
        self.pos += nul + 1;
        Ok(s)
    }

    /// Bytes up to a NUL or the end of the packet, whichever comes first
    /// (some servers omit the final NUL of the plugin name).
    pub fn null_terminated_or_rest(&mut self) -> &'a [u8] {
        let rest = self.peek_rest();
        match rest.iter().position(|&b| b == 0) {
            Some(nul) => {
                self.pos += nul + 1;
                rest.get(..nul).unwrap_or_default()
            }
            None => self.rest(),
        }
    }

    /// Fails unless every byte has been read.
    pub fn finish(&self, what: &'static str) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(ProtocolError::TrailingBytes(what, n)),
        }
    }
}

/// Number of bytes the length-encoded form of `v` takes.
pub fn lenenc_int_len(v: u64) -> usize {
    match v {
        0..=0xFA => 1,
        0xFB..=0xFFFF => 3,
        0x1_0000..=0xFF_FFFF => 4,
        _ => 9,
    }
}

/// Appending writers for the caller-owned output buffer.
pub trait WriteExt {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u24(&mut self, v: u32);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_bytes(&mut self, v: &[u8]);
    fn put_zeros(&mut self, n: usize);
    fn put_lenenc_int(&mut self, v: u64);
    fn put_lenenc_bytes(&mut self, v: &[u8]);
    /// The bytes followed by a NUL. The bytes must not contain NUL themselves.
    fn put_null_terminated(&mut self, v: &[u8]);
}

impl WriteExt for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u24(&mut self, v: u32) {
        let b = v.to_le_bytes();
        self.extend_from_slice(b.get(..3).unwrap_or_default());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_bytes(&mut self, v: &[u8]) {
        self.extend_from_slice(v);
    }
    fn put_zeros(&mut self, n: usize) {
        self.resize(self.len() + n, 0);
    }
    fn put_lenenc_int(&mut self, v: u64) {
        match v {
            0..=0xFA => self.push(v as u8),
            0xFB..=0xFFFF => {
                self.push(0xFC);
                self.put_u16(v as u16);
            }
            0x1_0000..=0xFF_FFFF => {
                self.push(0xFD);
                self.put_u24(v as u32);
            }
            _ => {
                self.push(0xFE);
                self.put_u64(v);
            }
        }
    }
    fn put_lenenc_bytes(&mut self, v: &[u8]) {
        self.put_lenenc_int(v.len() as u64);
        self.extend_from_slice(v);
    }
    fn put_null_terminated(&mut self, v: &[u8]) {
        self.extend_from_slice(v);
        self.push(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lenenc_int_golden() {
        // Examples from the protocol documentation's "Length-Encoded Integer Type".
        for (v, bytes) in [
            (0u64, &[0x00][..]),
            (250, &[0xFA]),
            (251, &[0xFC, 0xFB, 0x00]),
            (0xFFFF, &[0xFC, 0xFF, 0xFF]),
            (0x1_0000, &[0xFD, 0x00, 0x00, 0x01]),
            (0xFF_FFFF, &[0xFD, 0xFF, 0xFF, 0xFF]),
            (0x100_0000, &[0xFE, 0, 0, 0, 1, 0, 0, 0, 0]),
        ] {
            let mut out = Vec::new();
            out.put_lenenc_int(v);
            assert_eq!(out, bytes, "encoding {v}");
            assert_eq!(lenenc_int_len(v), bytes.len());
            assert_eq!(Reader::new(bytes).lenenc_int("x"), Ok(v));
        }
    }

    #[test]
    fn lenenc_null_and_err_markers() {
        assert_eq!(Reader::new(&[0xFB]).lenenc_int_or_null("x"), Ok(None));
        assert_eq!(Reader::new(&[0xFB]).lenenc_int("x"), Err(ProtocolError::Malformed("x")));
        assert_eq!(Reader::new(&[0xFF]).lenenc_int_or_null("x"), Err(ProtocolError::Malformed("x")));
    }

    #[test]
    fn short_reads_are_errors() {
        assert_eq!(Reader::new(&[0xFC, 0x01]).lenenc_int("len"), Err(ProtocolError::UnexpectedEof("len")));
        assert_eq!(Reader::new(&[0x05, b'a']).lenenc_bytes("s"), Err(ProtocolError::UnexpectedEof("s")));
        assert_eq!(Reader::new(b"abc").null_terminated("s"), Err(ProtocolError::UnexpectedEof("s")));
        // A length near u64::MAX must not overflow the position.
        let huge = [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1];
        assert_eq!(Reader::new(&huge).lenenc_bytes("s"), Err(ProtocolError::UnexpectedEof("s")));
    }

    #[test]
    fn null_terminated_consumes_the_nul() {
        let mut r = Reader::new(b"root\0rest");
        assert_eq!(r.null_terminated("user"), Ok(&b"root"[..]));
        assert_eq!(r.rest(), b"rest");
        let mut r = Reader::new(b"plugin");
        assert_eq!(r.null_terminated_or_rest(), b"plugin");
        assert!(r.is_empty());
    }

    proptest! {
        #[test]
        fn lenenc_round_trip(v in any::<u64>()) {
            let mut out = Vec::new();
            out.put_lenenc_int(v);
            prop_assert_eq!(out.len(), lenenc_int_len(v));
            let mut r = Reader::new(&out);
            prop_assert_eq!(r.lenenc_int("x"), Ok(v));
            prop_assert!(r.is_empty());
        }

        #[test]
        fn lenenc_bytes_round_trip(v in proptest::collection::vec(any::<u8>(), 0..70000)) {
            let mut out = Vec::new();
            out.put_lenenc_bytes(&v);
            let mut r = Reader::new(&out);
            prop_assert_eq!(r.lenenc_bytes("x"), Ok(&v[..]));
            prop_assert!(r.is_empty());
        }

        #[test]
        fn reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&bytes);
            let _ = r.lenenc_int_or_null("a");
            let _ = r.lenenc_bytes("b");
            let _ = r.null_terminated("c");
            let _ = r.u64("d");
        }
    }
}

//! LEB128 varints and a bounds-checked cursor over a record's bytes.

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7F) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a varint length and the bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// What a cursor ran into: the field it was reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Short(pub &'static str);

/// A cursor that never reads past its bytes.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Short> {
        let b = *self.bytes.get(self.pos).ok_or(Short(what))?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Short> {
        let end = self.pos.checked_add(n).ok_or(Short(what))?;
        let taken = self.bytes.get(self.pos..end).ok_or(Short(what))?;
        self.pos = end;
        Ok(taken)
    }

    pub(crate) fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Short> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u64_le(&mut self, what: &'static str) -> Result<u64, Short> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// An unsigned LEB128 varint of at most 10 bytes that fits in 64 bits.
    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64, Short> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8(what)?;
            let bits = u64::from(b & 0x7F);
            if shift == 63 && bits > 1 {
                return Err(Short(what));
            }
            value |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Short(what))
    }

    /// A varint that must fit the target type.
    pub(crate) fn varint_as<T: TryFrom<u64>>(&mut self, what: &'static str) -> Result<T, Short> {
        T::try_from(self.varint(what)?).map_err(|_| Short(what))
    }

    /// A varint length and that many bytes.
    pub(crate) fn bytes(&mut self, what: &'static str) -> Result<&'a [u8], Short> {
        let len = self.varint_as::<usize>(what)?;
        self.take(len, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_every_width() {
        for v in [0, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut c = Cursor::new(&out);
            assert_eq!(c.varint("v"), Ok(v));
            assert!(c.is_empty());
        }
    }

    #[test]
    fn overlong_and_cut_varints_are_refused() {
        assert!(Cursor::new(&[0xFF; 11]).varint("v").is_err());
        assert!(Cursor::new(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]).varint("v").is_err());
        assert!(Cursor::new(&[0x80]).varint("v").is_err());
        assert!(Cursor::new(&[0x05, 1, 2]).bytes("b").is_err());
    }
}

//! A COM_STMT_EXECUTE read back: its statement id and parameter values, as
//! the server reads them (the layout is in `execute.rs`). A replay shows
//! them in its examples; nothing on a hot path reads an execute.
//!
//! The packet does not say how many parameters it has (the prepare's
//! answer does), and it carries their types only when the client bound
//! them anew: libmysqlclient and libmariadb send them on the first execute
//! after a bind and 0 afterwards, so a reader keeps the last types it saw.

use crate::buf::Reader;
use crate::constants::command::COM_STMT_EXECUTE;
use crate::constants::{ColumnFlags, ColumnType};
use crate::error::{ProtocolError, Result};
use crate::response::binary_row::{read_value, Value};

/// The unsigned flag of a parameter's type (its second byte).
const UNSIGNED: u8 = 0x80;

/// The parameters of one execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecuteParams<'a> {
    pub stmt_id: u32,
    /// The types this execute binds (two bytes a parameter), if it does.
    pub bound_types: Option<&'a [u8]>,
    count: usize,
    null_bitmap: &'a [u8],
    values: &'a [u8],
}

impl<'a> ExecuteParams<'a> {
    /// Reads `payload` (the command byte first) of a statement of `count`
    /// parameters.
    pub fn parse(payload: &'a [u8], count: usize) -> Result<Self> {
        let mut r = Reader::new(payload);
        if r.u8("execute command")? != COM_STMT_EXECUTE {
            return Err(ProtocolError::Malformed("not a COM_STMT_EXECUTE"));
        }
        let stmt_id = r.u32("execute statement id")?;
        r.skip(5, "execute flags and iteration count")?;
        if count == 0 {
            return Ok(ExecuteParams { stmt_id, bound_types: None, count, null_bitmap: &[], values: &[] });
        }
        let null_bitmap = r.take(count.div_ceil(8), "execute NULL bitmap")?;
        let bound = r.u8("execute new_params_bound_flag")? == 1;
        let types_len = count.checked_mul(2).ok_or(ProtocolError::Malformed("execute parameter count"))?;
        let bound_types = if bound { Some(r.take(types_len, "execute parameter types")?) } else { None };
        Ok(ExecuteParams { stmt_id, bound_types, count, null_bitmap, values: r.rest() })
    }

    /// Its values, read with `types` (its own, or the last bound ones):
    /// an error once a value runs past the packet or `types` is short.
    pub fn values<'t>(&self, types: &'t [u8]) -> ParamValues<'a, 't> {
        ParamValues { params: *self, types, at: 0, reader: Reader::new(self.values), failed: false }
    }
}

/// The values of an execute, in order.
pub struct ParamValues<'a, 't> {
    params: ExecuteParams<'a>,
    types: &'t [u8],
    at: usize,
    reader: Reader<'a>,
    failed: bool,
}

impl<'a> Iterator for ParamValues<'a, '_> {
    type Item = Result<Value<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.at >= self.params.count {
            return None;
        }
        let at = self.at;
        self.at += 1;
        let null = self.params.null_bitmap.get(at / 8).is_some_and(|b| b & (1 << (at % 8)) != 0);
        if null {
            return Some(Ok(Value::Null));
        }
        let value = match self.types.get(at * 2..at * 2 + 2) {
            Some(&[ty, flags]) => match ColumnType::from_u8(ty) {
                Some(ty) => {
                    let flags = if flags & UNSIGNED != 0 { ColumnFlags::UNSIGNED } else { ColumnFlags(0) };
                    read_value(&mut self.reader, ty, flags)
                }
                None => Err(ProtocolError::Malformed("unknown execute parameter type")),
            },
            _ => Err(ProtocolError::Malformed("execute parameter types unknown")),
        };
        self.failed = value.is_err();
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{encode_execute, Param};
    use crate::framing::HEADER_LEN;

    fn packet(params: &[Param<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_execute(&mut out, 7, params);
        out.split_off(HEADER_LEN)
    }

    #[test]
    fn values_read_back_as_encoded() {
        let payload = packet(&[Param::I64(-17), Param::Null, Param::Bytes(b"abc"), Param::U32(5)]);
        let params = ExecuteParams::parse(&payload, 4).unwrap();
        assert_eq!(params.stmt_id, 7);
        let types = params.bound_types.unwrap();
        let values: Vec<_> = params.values(types).collect::<Result<_>>().unwrap();
        assert_eq!(values, [Value::Int(-17), Value::Null, Value::Bytes(b"abc"), Value::UInt(5)]);
    }

    /// An execute that binds no types is read with the last ones bound.
    #[test]
    fn an_execute_without_types_uses_the_earlier_ones() {
        let first = packet(&[Param::I32(1)]);
        let types = ExecuteParams::parse(&first, 1).unwrap().bound_types.unwrap().to_vec();
        let mut later = first.clone();
        let flag_at = 1 + 4 + 5 + 1;
        later[flag_at] = 0;
        later.drain(flag_at + 1..flag_at + 3);
        let params = ExecuteParams::parse(&later, 1).unwrap();
        assert_eq!(params.bound_types, None);
        assert_eq!(params.values(&types).collect::<Vec<_>>(), [Ok(Value::Int(1))]);
        assert!(params.values(&[]).next().unwrap().is_err(), "no types: an error, not a guess");
    }

    #[test]
    fn short_and_foreign_packets_are_errors() {
        let payload = packet(&[Param::I64(1), Param::I64(2)]);
        let params = ExecuteParams::parse(&payload[..payload.len() - 3], 2).unwrap();
        let values: Vec<_> = params.values(params.bound_types.unwrap()).collect();
        assert!(values[0].is_ok() && values[1].is_err() && values.len() == 2);
        assert!(ExecuteParams::parse(b"\x03SELECT 1", 0).is_err());
        assert!(ExecuteParams::parse(&payload[..12], 2).is_err());
        assert!(ExecuteParams::parse(&payload, usize::MAX).is_err());
    }
}

//! `--db-ps-mode=disable`: sysbench's emulated prepared statements. Nothing
//! is prepared on the server; every execute goes out as COM_QUERY text, the
//! statement's SQL with each `?` replaced by its value as `db_print_value`
//! (sysbench 1.0.20 `db_driver.c`) prints it:
//! - integers in decimal (`%hhd`, `%hd`, `%d`, `%lld`; the unsigned slots,
//!   which sysbench has no type for, as unsigned decimal);
//! - FLOAT and DOUBLE as `%f` (six decimals);
//! - strings as `'%s'`: in single quotes, **not escaped**, cut at the first
//!   NUL byte as a C string is;
//! - NULL as `NULL`.
//!
//! Like `mysql_drv_execute`, every `?` byte is a marker, even one inside a
//! quoted string or a comment: sysbench does not lex the SQL.
//!
//! The values come from the statement's [`ExecuteTemplate`], which scripts
//! patch exactly as in prepared mode, so a script does not know which mode
//! runs it. Rendering appends to the send buffer and allocates nothing.

use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};

use super::common::push_decimal;
use super::StatementSpec;

/// A statement's SQL split at its `?` markers, ready to be sent as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulatedStatement {
    sql: Box<[u8]>,
    /// Offsets of the `?` markers in `sql`, one per parameter.
    markers: Box<[usize]>,
    slots: Box<[ParamSlot]>,
}

/// A statement whose `?` count is not its parameter count: sysbench would
/// print past its bound values; wirebench refuses it before the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot send {sql:?} as text (--db-ps-mode=disable): it has {markers} `?` markers for {params} parameters")]
pub struct MarkerMismatch {
    pub sql: String,
    pub markers: usize,
    pub params: usize,
}

impl EmulatedStatement {
    pub fn new(spec: &StatementSpec) -> Result<Self, MarkerMismatch> {
        let markers: Box<[usize]> =
            spec.sql.bytes().enumerate().filter(|&(_, b)| b == b'?').map(|(at, _)| at).collect();
        if markers.len() != spec.slots.len() {
            return Err(MarkerMismatch { sql: spec.sql.clone(), markers: markers.len(), params: spec.slots.len() });
        }
        Ok(EmulatedStatement { sql: spec.sql.as_bytes().into(), markers, slots: spec.slots.as_slice().into() })
    }

    /// One per statement, in [`StmtId`](super::StmtId) order.
    pub fn all(specs: &[StatementSpec]) -> Result<Vec<Self>, MarkerMismatch> {
        specs.iter().map(EmulatedStatement::new).collect()
    }

    /// Appends the SQL with `template`'s values in place of the markers.
    /// `template` must have been laid out for this statement's slots.
    pub fn render(&self, template: &ExecuteTemplate, out: &mut Vec<u8>) {
        let mut from = 0;
        for (index, (&at, &slot)) in self.markers.iter().zip(self.slots.iter()).enumerate() {
            out.extend_from_slice(self.sql.get(from..at).unwrap_or_default());
            let value = template.value_range(index).and_then(|range| template.packet().get(range));
            print_value(slot, value, out);
            from = at + 1;
        }
        out.extend_from_slice(self.sql.get(from..).unwrap_or_default());
    }
}

/// `db_print_value`: `value` is the slot's bytes in the template (little
/// endian numbers, a string's bytes), `None` for NULL.
fn print_value(slot: ParamSlot, value: Option<&[u8]>, out: &mut Vec<u8>) {
    let Some(v) = value else {
        out.extend_from_slice(b"NULL");
        return;
    };
    match slot {
        ParamSlot::Int8 => push_decimal(out, i8::from_le_bytes(le(v))),
        ParamSlot::Int16 => push_decimal(out, i16::from_le_bytes(le(v))),
        ParamSlot::Int32 => push_decimal(out, i32::from_le_bytes(le(v))),
        ParamSlot::Int64 => push_decimal(out, i64::from_le_bytes(le(v))),
        ParamSlot::UInt8 => push_decimal(out, u8::from_le_bytes(le(v))),
        ParamSlot::UInt16 => push_decimal(out, u16::from_le_bytes(le(v))),
        ParamSlot::UInt32 => push_decimal(out, u32::from_le_bytes(le(v))),
        ParamSlot::UInt64 => push_decimal(out, u64::from_le_bytes(le(v))),
        // `%f` takes a double: a float is promoted first.
        ParamSlot::Float => push_f(out, f64::from(f32::from_le_bytes(le(v)))),
        ParamSlot::Double => push_f(out, f64::from_le_bytes(le(v))),
        ParamSlot::Bytes { .. } => {
            let end = v.iter().position(|&b| b == 0).unwrap_or(v.len());
            out.push(b'\'');
            out.extend_from_slice(v.get(..end).unwrap_or_default());
            out.push(b'\'');
        }
        // A kind the protocol crate added after this was written: the marker
        // stays, so the server refuses the statement (a syntax error) rather
        // than run it with a made-up value.
        _ => out.push(b'?'),
    }
}

/// The first `N` bytes of a value (zeros if the template is shorter, which
/// a template built for the same slots never is).
fn le<const N: usize>(v: &[u8]) -> [u8; N] {
    v.get(..N).and_then(|b| b.try_into().ok()).unwrap_or([0; N])
}

/// glibc's `%f`. Rust's `{:.6}` rounds the exact binary value as glibc
/// does and spells infinities alike; only NaN is spelled differently.
fn push_f(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() { b"-nan" } else { b"nan" });
    } else {
        push_decimal(out, format_args!("{v:.6}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::command::Param;

    fn spec(sql: &str, slots: &[ParamSlot]) -> StatementSpec {
        StatementSpec { sql: sql.into(), slots: slots.to_vec() }
    }

    fn render(spec: &StatementSpec, template: &ExecuteTemplate) -> String {
        let mut out = b"prefix:".to_vec();
        EmulatedStatement::new(spec).unwrap().render(template, &mut out);
        String::from_utf8(out.split_off(7)).unwrap()
    }

    #[test]
    fn integers_and_strings_as_sysbench_prints_them() {
        let c = ParamSlot::Bytes { len: 5 };
        let s = spec(
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES (?, ?, ?, ?)",
            &[ParamSlot::Int64, ParamSlot::Int64, c, c],
        );
        let mut t = ExecuteTemplate::new(9, &s.slots).unwrap();
        t.set_i64(0, 4_294_967_296).unwrap();
        t.set_i64(1, -17).unwrap();
        t.set_bytes(2, b"12-34").unwrap();
        // Not escaped: a quote or backslash goes out as it is.
        t.set_bytes(3, b"a'b\\c").unwrap();
        assert_eq!(render(&s, &t), "INSERT INTO sbtest3 (id, k, c, pad) VALUES (4294967296, -17, '12-34', 'a'b\\c')");
    }

    #[test]
    fn every_slot_type() {
        use ParamSlot::*;
        let slots = [Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float, Double, Bytes { len: 3 }];
        let s = spec("?,?,?,?,?,?,?,?,?,?,?", &slots);
        let mut t = ExecuteTemplate::new(1, &slots).unwrap();
        // A fresh template holds zeros (a string of three NUL bytes: empty).
        assert_eq!(render(&s, &t), "0,0,0,0,0,0,0,0,0.000000,0.000000,''");
        t.set_i8(0, -128).unwrap();
        t.set_i16(1, -32768).unwrap();
        t.set_i32(2, i32::MIN).unwrap();
        t.set_i64(3, i64::MIN).unwrap();
        t.set_u8(4, 255).unwrap();
        t.set_u16(5, 65535).unwrap();
        t.set_u32(6, u32::MAX).unwrap();
        t.set_u64(7, u64::MAX).unwrap();
        t.set_f32(8, 0.1).unwrap();
        t.set_f64(9, -1234.5678915).unwrap();
        t.set_bytes(10, b"x\0y").unwrap();
        assert_eq!(
            render(&s, &t),
            "-128,-32768,-2147483648,-9223372036854775808,255,65535,4294967295,18446744073709551615,\
             0.100000,-1234.567892,'x'"
        );
    }

    #[test]
    fn floats_as_glibc_prints_them() {
        // printf("%f") from glibc for each value (1e20 and 2^-30 show that
        // there is no exponent form and that rounding is of the exact value).
        let cases: [(f64, &str); 8] = [
            (1e20, "100000000000000000000.000000"),
            (0.5, "0.500000"),
            (2.5e-7, "0.000000"),
            (7.5e-7, "0.000001"),
            (9.765625e-4, "0.000977"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0.000000"),
        ];
        for (v, expected) in cases {
            let mut out = Vec::new();
            push_f(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{v}");
        }
        let mut out = Vec::new();
        push_f(&mut out, f64::NAN);
        assert_eq!(out, b"nan");
        // A float is printed after promotion to double, digits and all.
        let s = spec("?", &[ParamSlot::Float]);
        let mut t = ExecuteTemplate::new(1, &s.slots).unwrap();
        t.set_f32(0, 16_777_217.0).unwrap();
        assert_eq!(render(&s, &t), "16777216.000000");
    }

    #[test]
    fn null_and_markers_everywhere() {
        let s = spec("SELECT '?', ? /* ? */", &[ParamSlot::Int32, ParamSlot::Int32, ParamSlot::Int32]);
        let mut t = ExecuteTemplate::new(1, &s.slots).unwrap();
        t.set(0, Param::I32(1)).unwrap();
        t.set(1, Param::Null).unwrap();
        t.set_i32(2, 3).unwrap();
        assert_eq!(render(&s, &t), "SELECT '1', NULL /* 3 */");
        t.set_i32(1, 2).unwrap();
        assert_eq!(render(&s, &t), "SELECT '1', 2 /* 3 */");
    }

    #[test]
    fn no_parameters_and_mismatches() {
        let s = spec("COMMIT", &[]);
        assert_eq!(render(&s, &ExecuteTemplate::new(1, &[]).unwrap()), "COMMIT");
        let err = EmulatedStatement::new(&spec("SELECT ?, ?", &[ParamSlot::Int64])).unwrap_err();
        assert_eq!(err, MarkerMismatch { sql: "SELECT ?, ?".into(), markers: 2, params: 1 });
        assert!(err.to_string().contains("2 `?` markers for 1 parameters"), "{err}");
        assert!(EmulatedStatement::all(&[spec("?", &[ParamSlot::Int8]), spec("x", &[ParamSlot::Int8])]).is_err());
    }
}

//! Binary protocol rows (ProtocolBinary::ResultsetRow), sent in answer to
//! COM_STMT_EXECUTE: a 0x00 header, a NULL bitmap of (n + 7 + 2) / 8 bytes
//! whose first two bits are unused, then each non-NULL value in the encoding
//! its column type dictates.

use std::fmt::Write as _;

use crate::buf::{Reader, WriteExt};
use crate::constants::{ColumnFlags, ColumnType};
use crate::error::{ProtocolError, Result, UsageError};
use crate::framing::{finish_packet, start_packet};
use crate::response::column::{ColumnDefinition, NOT_FIXED_DECIMALS};

/// First byte of every binary row.
pub const BINARY_ROW_HEADER: u8 = 0x00;
/// Bits of the NULL bitmap before the first column's.
const NULL_BITMAP_OFFSET: usize = 2;

/// Bytes of the NULL bitmap for `columns` columns.
pub const fn null_bitmap_len(columns: usize) -> usize {
    (columns + 7 + NULL_BITMAP_OFFSET) / 8
}

/// One value of a binary row, borrowed from the packet.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Value<'a> {
    Null,
    /// TINY, SHORT, YEAR, INT24, LONG, LONGLONG without the UNSIGNED flag.
    Int(i64),
    /// The same types with the UNSIGNED flag.
    UInt(u64),
    Float(f32),
    Double(f64),
    /// Strings, blobs, DECIMAL, JSON, BIT, ENUM, SET, GEOMETRY: the bytes as sent.
    Bytes(&'a [u8]),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
    /// `days` carries what does not fit in `hours` (0..23): TIME reaches 838 hours.
    Time {
        negative: bool,
        days: u32,
        hours: u8,
        minutes: u8,
        seconds: u8,
        micros: u32,
    },
}

/// How a column type's values travel in a binary row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Int(usize),
    Float,
    Double,
    Date,
    DateTime,
    Time,
    Bytes,
    /// MYSQL_TYPE_NULL: only ever NULL, carried by the bitmap alone.
    Null,
}

fn encoding(ty: ColumnType) -> Encoding {
    use ColumnType::*;
    match ty {
        Tiny => Encoding::Int(1),
        Short | Year => Encoding::Int(2),
        Long | Int24 => Encoding::Int(4),
        LongLong => Encoding::Int(8),
        Float => Encoding::Float,
        Double => Encoding::Double,
        Date | NewDate => Encoding::Date,
        DateTime | Timestamp | DateTime2 | Timestamp2 => Encoding::DateTime,
        Time | Time2 => Encoding::Time,
        Null => Encoding::Null,
        Decimal | NewDecimal | VarChar | Bit | TypedArray | Vector | Json | Enum | Set | TinyBlob | MediumBlob
        | LongBlob | Blob | VarString | String | Geometry => Encoding::Bytes,
    }
}

/// A binary row whose header and NULL bitmap are present; values are decoded on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryRow<'a> {
    bitmap: &'a [u8],
    values: &'a [u8],
    columns: usize,
}

impl<'a> BinaryRow<'a> {
    /// Checks the header and the bitmap of a row of `columns` columns.
    pub fn new(payload: &'a [u8], columns: usize) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("binary row header")?;
        if header != BINARY_ROW_HEADER {
            return Err(ProtocolError::BadHeader { context: "binary row", byte: header });
        }
        let bitmap = r.take(null_bitmap_len(columns), "binary row NULL bitmap")?;
        Ok(BinaryRow { bitmap, values: r.rest(), columns })
    }

    /// Decodes every value of a row described by `columns`, checking that the
    /// packet holds nothing more.
    pub fn decode(payload: &'a [u8], columns: &[ColumnDefinition<'_>]) -> Result<Vec<Value<'a>>> {
        let row = BinaryRow::new(payload, columns.len())?;
        let mut values = row.values(columns);
        let out = values.by_ref().collect::<Result<Vec<_>>>()?;
        values.reader.finish("binary row")?;
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.columns
    }

    pub fn is_empty(&self) -> bool {
        self.columns == 0
    }

    pub fn is_null(&self, column: usize) -> bool {
        let bit = column + NULL_BITMAP_OFFSET;
        self.bitmap.get(bit / 8).is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }

    /// Walks the values without allocating. `columns` must be the row's
    /// column definitions; the walk stops at the first malformed value.
    pub fn values<'c>(&self, columns: &'c [ColumnDefinition<'c>]) -> BinaryValues<'a, 'c> {
        BinaryValues { row: *self, columns, index: 0, reader: Reader::new(self.values), failed: false }
    }
}

/// Iterator over the values of a [`BinaryRow`].
#[derive(Debug, Clone)]
pub struct BinaryValues<'a, 'c> {
    row: BinaryRow<'a>,
    columns: &'c [ColumnDefinition<'c>],
    index: usize,
    reader: Reader<'a>,
    failed: bool,
}

impl<'a> Iterator for BinaryValues<'a, '_> {
    type Item = Result<Value<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.index >= self.row.columns {
            return None;
        }
        let index = self.index;
        self.index += 1;
        let result = match self.columns.get(index) {
            None => Err(ProtocolError::Malformed("binary row has more columns than definitions")),
            Some(_) if self.row.is_null(index) => Ok(Value::Null),
            Some(col) => read_value(&mut self.reader, col.column_type, col.flags),
        };
        self.failed = result.is_err();
        Some(result)
    }
}

pub(crate) fn read_value<'a>(r: &mut Reader<'a>, ty: ColumnType, flags: ColumnFlags) -> Result<Value<'a>> {
    let unsigned = flags.contains(ColumnFlags::UNSIGNED);
    Ok(match encoding(ty) {
        Encoding::Int(1) => {
            let b = r.u8("binary TINY")?;
            if unsigned {
                Value::UInt(u64::from(b))
            } else {
                Value::Int(i64::from(b as i8))
            }
        }
        Encoding::Int(2) => {
            let v = r.u16("binary SHORT")?;
            if unsigned {
                Value::UInt(u64::from(v))
            } else {
                Value::Int(i64::from(v as i16))
            }
        }
        Encoding::Int(4) => {
            let v = r.u32("binary LONG")?;
            if unsigned {
                Value::UInt(u64::from(v))
            } else {
                Value::Int(i64::from(v as i32))
            }
        }
        Encoding::Int(_) => {
            let v = r.u64("binary LONGLONG")?;
            if unsigned {
                Value::UInt(v)
            } else {
                Value::Int(v as i64)
            }
        }
        Encoding::Float => Value::Float(f32::from_le_bytes(r.array("binary FLOAT")?)),
        Encoding::Double => Value::Double(f64::from_le_bytes(r.array("binary DOUBLE")?)),
        Encoding::Date | Encoding::DateTime => read_datetime(r, encoding(ty) == Encoding::Date)?,
        Encoding::Time => read_time(r)?,
        Encoding::Bytes => Value::Bytes(r.lenenc_bytes("binary string value")?),
        Encoding::Null => return Err(ProtocolError::Malformed("non-NULL value in a column of type NULL")),
    })
}

/// DATE, DATETIME and TIMESTAMP: a length byte (0, 4, 7 or 11), then as many
/// fields as the length says; missing fields are zero.
fn read_datetime<'a>(r: &mut Reader<'a>, date_column: bool) -> Result<Value<'a>> {
    let len = r.u8("binary DATETIME length")?;
    if !matches!(len, 0 | 4 | 7 | 11) {
        return Err(ProtocolError::Malformed("binary DATETIME length"));
    }
    let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micros) = (0, 0, 0, 0, 0, 0, 0);
    if len >= 4 {
        year = r.u16("binary DATETIME year")?;
        month = r.u8("binary DATETIME month")?;
        day = r.u8("binary DATETIME day")?;
    }
    if len >= 7 {
        hour = r.u8("binary DATETIME hour")?;
        minute = r.u8("binary DATETIME minute")?;
        second = r.u8("binary DATETIME second")?;
    }
    if len == 11 {
        micros = r.u32("binary DATETIME microseconds")?;
    }
    Ok(if date_column && len <= 4 {
        Value::Date { year, month, day }
    } else {
        Value::DateTime { year, month, day, hour, minute, second, micros }
    })
}

/// TIME: a length byte (0, 8 or 12), sign, days, hours, minutes, seconds, microseconds.
fn read_time<'a>(r: &mut Reader<'a>) -> Result<Value<'a>> {
    let len = r.u8("binary TIME length")?;
    if !matches!(len, 0 | 8 | 12) {
        return Err(ProtocolError::Malformed("binary TIME length"));
    }
    let (mut negative, mut days, mut hours, mut minutes, mut seconds, mut micros) = (false, 0, 0, 0, 0, 0);
    if len >= 8 {
        negative = match r.u8("binary TIME sign")? {
            0 => false,
            1 => true,
            _ => return Err(ProtocolError::Malformed("binary TIME sign")),
        };
        days = r.u32("binary TIME days")?;
        hours = r.u8("binary TIME hours")?;
        minutes = r.u8("binary TIME minutes")?;
        seconds = r.u8("binary TIME seconds")?;
    }
    if len == 12 {
        micros = r.u32("binary TIME microseconds")?;
    }
    Ok(Value::Time { negative, days, hours, minutes, seconds, micros })
}

/// Appends a binary row payload (no header) for `values` under `columns`.
///
/// Integers are written in the width of their column's type and must fit it;
/// DATE columns take `Date` or `DateTime` values, DATETIME and TIMESTAMP
/// columns `DateTime`; temporal values use the shortest length the protocol
/// allows. On error `out` is left as it was.
pub fn encode_binary_row_payload(
    values: &[Value<'_>],
    columns: &[ColumnDefinition<'_>],
    out: &mut Vec<u8>,
) -> Result<(), UsageError> {
    let start = out.len();
    let result = write_row(values, columns, out);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Appends a binary row packet with sequence id `seq`; returns the next id.
pub fn encode_binary_row(
    values: &[Value<'_>],
    columns: &[ColumnDefinition<'_>],
    seq: u8,
    out: &mut Vec<u8>,
) -> Result<u8, UsageError> {
    let start = start_packet(out);
    match write_row(values, columns, out) {
        Ok(()) => Ok(finish_packet(out, start, seq)),
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

fn write_row(values: &[Value<'_>], columns: &[ColumnDefinition<'_>], out: &mut Vec<u8>) -> Result<(), UsageError> {
    if values.len() != columns.len() {
        return Err(UsageError::RowLength { values: values.len(), columns: columns.len() });
    }
    out.put_u8(BINARY_ROW_HEADER);
    let bitmap_at = out.len();
    out.put_zeros(null_bitmap_len(columns.len()));
    for (i, (value, col)) in values.iter().zip(columns).enumerate() {
        if let Value::Null = value {
            let bit = i + NULL_BITMAP_OFFSET;
            if let Some(b) = out.get_mut(bitmap_at + bit / 8) {
                *b |= 1 << (bit % 8);
            }
            continue;
        }
        if !write_value(value, col.column_type, out) {
            return Err(UsageError::RowValue { index: i, column_type: col.column_type });
        }
    }
    Ok(())
}

/// Appends `value` in the encoding of column type `ty`; false if that type
/// cannot carry it.
fn write_value(value: &Value<'_>, ty: ColumnType, out: &mut Vec<u8>) -> bool {
    match (encoding(ty), *value) {
        (Encoding::Int(width), Value::Int(v)) => {
            let fits = match width {
                1 => i8::try_from(v).is_ok(),
                2 => i16::try_from(v).is_ok(),
                4 => i32::try_from(v).is_ok(),
                _ => true,
            };
            if !fits {
                return false;
            }
            out.put_bytes(v.to_le_bytes().get(..width).unwrap_or_default());
        }
        (Encoding::Int(width), Value::UInt(v)) => {
            if width < 8 && v >> (8 * width) != 0 {
                return false;
            }
            out.put_bytes(v.to_le_bytes().get(..width).unwrap_or_default());
        }
        (Encoding::Float, Value::Float(v)) => out.put_bytes(&v.to_le_bytes()),
        (Encoding::Double, Value::Double(v)) => out.put_bytes(&v.to_le_bytes()),
        (Encoding::Date, Value::Date { year, month, day }) => {
            write_datetime(out, year, month, day, 0, 0, 0, 0);
        }
        (Encoding::Date | Encoding::DateTime, Value::DateTime { year, month, day, hour, minute, second, micros }) => {
            write_datetime(out, year, month, day, hour, minute, second, micros);
        }
        (Encoding::Time, Value::Time { negative, days, hours, minutes, seconds, micros }) => {
            let len = if micros != 0 {
                12
            } else if negative || days != 0 || hours != 0 || minutes != 0 || seconds != 0 {
                8
            } else {
                0
            };
            out.put_u8(len);
            if len >= 8 {
                out.put_u8(u8::from(negative));
                out.put_u32(days);
                out.put_bytes(&[hours, minutes, seconds]);
            }
            if len == 12 {
                out.put_u32(micros);
            }
        }
        (Encoding::Bytes, Value::Bytes(b)) => out.put_lenenc_bytes(b),
        _ => return false,
    }
    true
}

#[allow(clippy::too_many_arguments)]
fn write_datetime(out: &mut Vec<u8>, year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8, micros: u32) {
    let len = if micros != 0 {
        11
    } else if hour != 0 || minute != 0 || second != 0 {
        7
    } else if year != 0 || month != 0 || day != 0 {
        4
    } else {
        0
    };
    out.put_u8(len);
    if len >= 4 {
        out.put_u16(year);
        out.put_bytes(&[month, day]);
    }
    if len >= 7 {
        out.put_bytes(&[hour, minute, second]);
    }
    if len == 11 {
        out.put_u32(micros);
    }
}

impl Value<'_> {
    /// The value as the text protocol would send it for the same column, or
    /// `None` for NULL. See [`Value::write_text`].
    pub fn to_text(&self, column: &ColumnDefinition<'_>) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.write_text(column, &mut out).then_some(out)
    }

    /// Appends the value as the text protocol would send it for `column`;
    /// returns `false` (appending nothing) for NULL.
    ///
    /// Matches MariaDB 10.11 for integers (ZEROFILL padding included),
    /// strings, DECIMAL, dates, DATETIME/TIMESTAMP and TIME with the column's
    /// fractional digits (TIME folds days into hours). FLOAT and DOUBLE follow
    /// the server's `my_gcvt` rules (FLOAT to 6 significant digits, DOUBLE to
    /// the shortest round-trip digits, exponent form outside 1e-15..1e15) and
    /// the fixed form when the column fixes its decimals; digit-for-digit
    /// agreement is checked against captured values but not proven for every
    /// float, so compare FLOAT/DOUBLE numerically where exactness matters.
    pub fn write_text(&self, column: &ColumnDefinition<'_>, out: &mut Vec<u8>) -> bool {
        let mut s = String::new();
        let zerofill = column.flags.contains(ColumnFlags::ZEROFILL);
        let fsp = fractional_digits(column.decimals);
        // Writing into a String cannot fail; the results are ignored.
        match *self {
            Value::Null => return false,
            Value::Bytes(b) => {
                out.put_bytes(b);
                return true;
            }
            Value::Int(v) => {
                let _ = write!(s, "{v}");
                if zerofill {
                    pad_zeros(&mut s, column.column_length);
                }
            }
            Value::UInt(v) => {
                let _ = write!(s, "{v}");
                if zerofill {
                    pad_zeros(&mut s, column.column_length);
                }
            }
            Value::Float(v) => format_real(&mut s, f64::from(v), Some(FLT_DIG), column.decimals),
            Value::Double(v) => format_real(&mut s, v, None, column.decimals),
            Value::Date { year, month, day } => {
                let _ = write!(s, "{year:04}-{month:02}-{day:02}");
            }
            Value::DateTime { year, month, day, hour, minute, second, micros } => {
                let _ = write!(s, "{year:04}-{month:02}-{day:02}");
                let date_column = matches!(column.column_type, ColumnType::Date | ColumnType::NewDate);
                let has_time = hour != 0 || minute != 0 || second != 0 || micros != 0;
                if !date_column || has_time {
                    let _ = write!(s, " {hour:02}:{minute:02}:{second:02}");
                    write_fraction(&mut s, micros, fsp);
                }
            }
            Value::Time { negative, days, hours, minutes, seconds, micros } => {
                let total_hours = u64::from(days) * 24 + u64::from(hours);
                let sign = if negative { "-" } else { "" };
                let _ = write!(s, "{sign}{total_hours:02}:{minutes:02}:{seconds:02}");
                write_fraction(&mut s, micros, fsp);
            }
        }
        out.put_bytes(s.as_bytes());
        true
    }
}

/// Fractional-second digits the text protocol shows for a column's decimals:
/// `None` when the column does not fix them (then microseconds show when non-zero).
fn fractional_digits(decimals: u8) -> Option<u32> {
    (decimals < NOT_FIXED_DECIMALS).then_some(u32::from(decimals.min(6)))
}

fn write_fraction(s: &mut String, micros: u32, fsp: Option<u32>) {
    let digits = match fsp {
        Some(d) => d,
        None if micros != 0 => 6,
        None => 0,
    };
    if digits > 0 {
        let scaled = micros / 10u32.pow(6 - digits);
        let _ = write!(s, ".{scaled:0width$}", width = digits as usize);
    }
}

fn pad_zeros(s: &mut String, width: u32) {
    let width = width.min(255) as usize;
    if s.len() < width {
        s.insert_str(0, &"0".repeat(width - s.len()));
    }
}

/// FLT_DIG: the significant digits MariaDB prints for a FLOAT.
const FLT_DIG: usize = 6;
/// DBL_DIG: outside 10^-(DBL_DIG-1) .. 10^DBL_DIG my_gcvt switches to the exponent form.
const DBL_DIG: i32 = 15;

/// Formats a FLOAT (`digits` = Some(6)) or DOUBLE the way MariaDB's text
/// protocol does: fixed decimals when the column fixes them (my_fcvt),
/// otherwise my_gcvt with a field wide enough for every digit.
fn format_real(s: &mut String, v: f64, digits: Option<usize>, decimals: u8) {
    if !v.is_finite() {
        // dtoa reports overflow for these and my_gcvt prints "0".
        s.push('0');
        return;
    }
    if decimals < NOT_FIXED_DECIMALS {
        let _ = write!(s, "{:.*}", usize::from(decimals), v);
        return;
    }
    // dtoa mode 4: the shortest round-trip digits when they fit the digit
    // budget, else the value rounded to the budget, trailing zeros dropped.
    let mut e = format!("{:e}", v.abs());
    if let Some(max) = digits {
        if e.split('e').next().map_or(0, |m| m.replace('.', "").len()) > max {
            e = format!("{:.*e}", max - 1, v.abs());
        }
    }
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let decpt = exp.parse::<i32>().unwrap_or(0) + 1;
    let len = digits.len() as i32;
    if v.is_sign_negative() {
        s.push('-');
    }
    if decpt > -DBL_DIG && (decpt <= DBL_DIG || len > decpt) {
        if decpt <= 0 {
            s.push_str("0.");
            s.push_str(&"0".repeat((-decpt) as usize));
            s.push_str(&digits);
        } else if decpt < len {
            let (int, frac) = digits.split_at(decpt as usize);
            let _ = write!(s, "{int}.{frac}");
        } else {
            s.push_str(&digits);
            s.push_str(&"0".repeat((decpt - len) as usize));
        }
    } else {
        let (first, rest) = digits.split_at(1);
        s.push_str(first);
        if !rest.is_empty() {
            s.push('.');
            s.push_str(rest);
        }
        let _ = write!(s, "e{}", decpt - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::column::tests::{any_column_type, hex};
    use proptest::prelude::*;

    fn col(ty: ColumnType, flags: u16, decimals: u8) -> ColumnDefinition<'static> {
        let mut c = ColumnDefinition::new(b"c", ty);
        c.flags = ColumnFlags(flags);
        c.decimals = decimals;
        c
    }

    #[test]
    fn documented_example_row() {
        // The row of the documentation's Binary Resultset example:
        // 09 00 00 04 | 00 00 06 66 6f 6f 62 61 72 (one VAR_STRING column, "foobar").
        let cols = [col(ColumnType::VarString, 0, 0x1f)];
        let p = hex("00 00 06 66 6f 6f 62 61 72");
        assert_eq!(BinaryRow::decode(&p, &cols).unwrap(), vec![Value::Bytes(b"foobar")]);
        let mut out = Vec::new();
        encode_binary_row_payload(&[Value::Bytes(b"foobar")], &cols, &mut out).unwrap();
        assert_eq!(out, p);
    }

    #[test]
    fn documented_temporal_values() {
        // The documentation's binary value examples (ProtocolBinary::MYSQL_TYPE_DATETIME, _TIME).
        let dt = [col(ColumnType::DateTime, 0, 6)];
        let mut p = hex("00 00 0b da 07 0a 11 13 1b 1e 01 00 00 00");
        let v = BinaryRow::decode(&p, &dt).unwrap();
        assert_eq!(
            v,
            vec![Value::DateTime { year: 2010, month: 10, day: 17, hour: 19, minute: 27, second: 30, micros: 1 }]
        );
        assert_eq!(v[0].to_text(&dt[0]).unwrap(), b"2010-10-17 19:27:30.000001");
        let tm = [col(ColumnType::Time, 0, 6)];
        p = hex("00 00 0c 01 78 00 00 00 13 1b 1e 01 00 00 00");
        let v = BinaryRow::decode(&p, &tm).unwrap();
        assert_eq!(v, vec![Value::Time { negative: true, days: 120, hours: 19, minutes: 27, seconds: 30, micros: 1 }]);
        assert_eq!(v[0].to_text(&tm[0]).unwrap(), b"-2899:27:30.000001");
        p = hex("00 00 08 01 78 00 00 00 13 1b 1e");
        let v = BinaryRow::decode(&p, &tm).unwrap();
        assert_eq!(v[0].to_text(&col(ColumnType::Time, 0, 0)).unwrap(), b"-2899:27:30");
        // The documentation's third TIME example, `01`, cannot be right (a
        // length of 1 is not allowed); zero is sent with length 0.
        assert_eq!(BinaryRow::decode(&hex("00 00 01"), &tm), Err(ProtocolError::Malformed("binary TIME length")));
        let zero = hex("00 00 00");
        let v = BinaryRow::decode(&zero, &tm).unwrap();
        assert_eq!(v[0].to_text(&col(ColumnType::Time, 0, 0)).unwrap(), b"00:00:00");
    }

    #[test]
    fn null_bitmap_offset() {
        // Column 0 is bit 2 of the first byte; column 6 is bit 0 of the second.
        assert_eq!(null_bitmap_len(1), 1);
        assert_eq!(null_bitmap_len(6), 1);
        assert_eq!(null_bitmap_len(7), 2);
        let cols: Vec<_> = (0..7).map(|_| col(ColumnType::Tiny, 0, 0)).collect();
        let p = [0x00, 0b0000_0100, 0b0000_0001, 1, 2, 3, 4, 5];
        let v = BinaryRow::decode(&p, &cols).unwrap();
        assert_eq!(v[0], Value::Null);
        assert_eq!(v[6], Value::Null);
        assert_eq!(v[1..6], [Value::Int(1), Value::Int(2), Value::Int(3), Value::Int(4), Value::Int(5)]);
    }

    #[test]
    fn malformed_rows() {
        let cols = [col(ColumnType::Long, 0, 0)];
        assert!(matches!(BinaryRow::decode(&[0xFE, 0x00, 1, 0, 0, 0], &cols), Err(ProtocolError::BadHeader { .. })));
        assert_eq!(BinaryRow::decode(&[0x00], &cols), Err(ProtocolError::UnexpectedEof("binary row NULL bitmap")));
        assert_eq!(BinaryRow::decode(&[0x00, 0x00, 1, 0], &cols), Err(ProtocolError::UnexpectedEof("binary LONG")));
        assert_eq!(
            BinaryRow::decode(&[0x00, 0x00, 1, 0, 0, 0, 9], &cols),
            Err(ProtocolError::TrailingBytes("binary row", 1))
        );
        let dt = [col(ColumnType::DateTime, 0, 0)];
        assert_eq!(
            BinaryRow::decode(&[0x00, 0x00, 5, 1, 2, 3, 4, 5], &dt),
            Err(ProtocolError::Malformed("binary DATETIME length"))
        );
        let null = [col(ColumnType::Null, 0, 0)];
        assert!(BinaryRow::decode(&[0x00, 0x04], &null).is_ok());
        assert!(BinaryRow::decode(&[0x00, 0x00], &null).is_err());
    }

    #[test]
    fn integers_by_flag_and_width() {
        let signed = [col(ColumnType::Int24, 0, 0)];
        let unsigned = [col(ColumnType::Int24, ColumnFlags::UNSIGNED.0, 0)];
        let p = [0x00, 0x00, 0x00, 0x00, 0x80, 0xFF];
        assert_eq!(BinaryRow::decode(&p, &signed).unwrap(), [Value::Int(-8_388_608)]);
        assert_eq!(BinaryRow::decode(&p, &unsigned).unwrap(), [Value::UInt(0xFF80_0000)]);
        let mut out = Vec::new();
        assert_eq!(
            encode_binary_row_payload(&[Value::Int(300)], &[col(ColumnType::Tiny, 0, 0)], &mut out),
            Err(UsageError::RowValue { index: 0, column_type: ColumnType::Tiny })
        );
        assert!(out.is_empty(), "a failed encode leaves the buffer alone");
        assert_eq!(
            encode_binary_row_payload(&[Value::Bytes(b"1")], &signed, &mut out),
            Err(UsageError::RowValue { index: 0, column_type: ColumnType::Int24 })
        );
    }

    #[test]
    fn text_forms() {
        let t = |v: Value<'_>, c: ColumnDefinition<'_>| String::from_utf8(v.to_text(&c).unwrap()).unwrap();
        assert_eq!(t(Value::UInt(7), col(ColumnType::Year, 0x60, 0)), "7", "column_length 0: no padding");
        let mut year = col(ColumnType::Year, ColumnFlags::UNSIGNED.0 | ColumnFlags::ZEROFILL.0, 0);
        year.column_length = 4;
        assert_eq!(t(Value::UInt(0), year.clone()), "0000");
        assert_eq!(t(Value::UInt(2155), year), "2155");
        assert_eq!(t(Value::Date { year: 0, month: 0, day: 0 }, col(ColumnType::Date, 0, 0)), "0000-00-00");
        let zero = Value::DateTime { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, micros: 0 };
        assert_eq!(t(zero, col(ColumnType::DateTime, 0, 6)), "0000-00-00 00:00:00.000000");
        assert_eq!(t(zero, col(ColumnType::Timestamp, 0, 0)), "0000-00-00 00:00:00");
        let half = Value::Time { negative: false, days: 4, hours: 4, minutes: 0, seconds: 0, micros: 500_000 };
        assert_eq!(t(half, col(ColumnType::Time, 0, 6)), "100:00:00.500000");
        assert_eq!(t(half, col(ColumnType::Time, 0, 1)), "100:00:00.5");
        assert_eq!(t(half, col(ColumnType::Time, 0, 39)), "100:00:00.500000");
        // FLOAT and DOUBLE, against what MariaDB 10.11 printed for the same stored values.
        let f = col(ColumnType::Float, 0, 31);
        let d = col(ColumnType::Double, 0, 31);
        for (v, s) in [
            (1.5f32, "1.5"),
            (-0.1, "-0.1"),
            (3.40282e38, "3.40282e38"),
            (1234567.0, "1234570"),
            (std::f32::consts::PI, "3.14159"),
            (f32::MIN_POSITIVE, "1.17549e-38"),
            (1e13, "10000000000000"),
            (1e15, "1e15"),
            (1.5e-15, "0.0000000000000015"),
            (1.23456e-16, "1.23456e-16"),
            (1.5e-7, "0.00000015"),
        ] {
            assert_eq!(t(Value::Float(v), f.clone()), s, "FLOAT {v}");
        }
        for (v, s) in [
            (2.25f64, "2.25"),
            (1e14, "100000000000000"),
            (1e15, "1e15"),
            (-1e15, "-1e15"),
            (123456789012345.6, "123456789012345.6"),
            (1234567890123456.0, "1.234567890123456e15"),
            (12345678901234567890.0, "1.2345678901234567e19"),
            (1.2345678901234567e-5, "0.000012345678901234568"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (5e-324, "5e-324"),
            (-1.7976931348623157e308, "-1.7976931348623157e308"),
            (0.30000000000000004, "0.30000000000000004"),
            (0.0, "0"),
        ] {
            assert_eq!(t(Value::Double(v), d.clone()), s, "DOUBLE {v}");
        }
        assert_eq!(t(Value::Double(2.5), col(ColumnType::Double, 0, 3)), "2.500");
    }

    /// Bytes for string values: every byte value, 0xFB and 0xFE included.
    static POOL: [u8; 600] = {
        let mut pool = [0u8; 600];
        let mut i = 0;
        while i < pool.len() {
            pool[i] = (i * 37 % 256) as u8;
            i += 1;
        }
        pool
    };

    fn value_for(ty: ColumnType, unsigned: bool) -> BoxedStrategy<Value<'static>> {
        let bytes = (0..POOL.len(), 0..300usize)
            .prop_map(|(at, len)| Value::Bytes(POOL.get(at..(at + len).min(POOL.len())).unwrap_or_default()));
        let datetime = (any::<u16>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>())
            .prop_map(|(year, month, day, hour, minute, second, micros)| Value::DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            });
        match (encoding(ty), unsigned) {
            (Encoding::Int(1), false) => any::<i8>().prop_map(|v| Value::Int(v.into())).boxed(),
            (Encoding::Int(1), true) => any::<u8>().prop_map(|v| Value::UInt(v.into())).boxed(),
            (Encoding::Int(2), false) => any::<i16>().prop_map(|v| Value::Int(v.into())).boxed(),
            (Encoding::Int(2), true) => any::<u16>().prop_map(|v| Value::UInt(v.into())).boxed(),
            (Encoding::Int(4), false) => any::<i32>().prop_map(|v| Value::Int(v.into())).boxed(),
            (Encoding::Int(4), true) => any::<u32>().prop_map(|v| Value::UInt(v.into())).boxed(),
            (Encoding::Int(_), false) => any::<i64>().prop_map(Value::Int).boxed(),
            (Encoding::Int(_), true) => any::<u64>().prop_map(Value::UInt).boxed(),
            (Encoding::Float, _) => {
                any::<f32>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::Float).boxed()
            }
            (Encoding::Double, _) => {
                any::<f64>().prop_filter("NaN != NaN", |f| !f.is_nan()).prop_map(Value::Double).boxed()
            }
            (Encoding::Date, _) => (any::<u16>(), any::<u8>(), any::<u8>())
                .prop_map(|(year, month, day)| Value::Date { year, month, day })
                .boxed(),
            (Encoding::DateTime, _) => datetime.boxed(),
            (Encoding::Time, _) => (any::<bool>(), any::<u32>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>())
                .prop_map(|(negative, days, hours, minutes, seconds, micros)| Value::Time {
                    negative,
                    days,
                    hours,
                    minutes,
                    seconds,
                    micros,
                })
                .boxed(),
            (Encoding::Bytes, _) => bytes.boxed(),
            (Encoding::Null, _) => Just(Value::Null).boxed(),
        }
    }

    fn row() -> impl Strategy<Value = (Vec<ColumnDefinition<'static>>, Vec<Value<'static>>)> {
        proptest::collection::vec((any_column_type(), any::<bool>(), any::<bool>()), 0..20).prop_flat_map(|specs| {
            let cols: Vec<_> = specs
                .iter()
                .map(|&(ty, unsigned, _)| col(ty, if unsigned { ColumnFlags::UNSIGNED.0 } else { 0 }, 0))
                .collect();
            let values: Vec<_> = specs
                .iter()
                .map(|&(ty, unsigned, null)| if null { Just(Value::Null).boxed() } else { value_for(ty, unsigned) })
                .collect();
            (Just(cols), values)
        })
    }

    proptest! {
        #[test]
        fn round_trip((cols, values) in row(), seq in any::<u8>()) {
            let mut out = Vec::new();
            let next = encode_binary_row(&values, &cols, seq, &mut out).unwrap();
            prop_assert_eq!(next, seq.wrapping_add(1));
            let frame = crate::framing::decode_packet(&out, seq, usize::MAX).unwrap().unwrap();
            prop_assert_eq!(BinaryRow::decode(&frame.payload, &cols).unwrap(), values);
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64),
                        types in proptest::collection::vec((any_column_type(), any::<bool>()), 0..8)) {
            let cols: Vec<_> = types.iter()
                .map(|&(ty, u)| col(ty, if u { ColumnFlags::UNSIGNED.0 } else { 0 }, 0))
                .collect();
            if let Ok(values) = BinaryRow::decode(&bytes, &cols) {
                for (v, c) in values.iter().zip(&cols) {
                    let _ = v.to_text(c);
                }
            }
        }

        #[test]
        fn float_text_reads_back(v in any::<f64>(), f in any::<f32>()) {
            // Whatever the notation, the text must parse back to the value
            // (DOUBLE exactly, FLOAT to its 6 significant digits).
            prop_assume!(v.is_finite() && f.is_finite());
            let d = String::from_utf8(Value::Double(v).to_text(&col(ColumnType::Double, 0, 31)).unwrap()).unwrap();
            prop_assert_eq!(d.parse::<f64>().unwrap(), v, "{}", d);
            let s = String::from_utf8(Value::Float(f).to_text(&col(ColumnType::Float, 0, 31)).unwrap()).unwrap();
            let back = s.parse::<f64>().unwrap();
            prop_assert!((back - f64::from(f)).abs() <= f64::from(f).abs() * 1e-5, "{} vs {}", s, f);
        }
    }
}

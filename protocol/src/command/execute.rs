//! COM_STMT_EXECUTE: run a prepared statement with parameter values.
//!
//! Payload (protocol documentation, `page_protocol_com_stmt_execute`):
//!
//! ```text
//! 0x17, stmt_id u32, flags u8 (cursor type), iteration_count u32 (always 1)
//! if num_params > 0:
//!   NULL bitmap, (num_params + 7) / 8 bytes, bit i = parameter i (offset 0)
//!   new_params_bound_flag u8
//!   if the flag is 1: num_params x (type u8, flags u8; 0x80 = unsigned)
//!   the values of the non-NULL parameters, in the binary protocol form
//! ```
//!
//! A NULL parameter has only its bitmap bit: no value bytes at all.
//!
//! Two encoders: [`encode_execute`] writes any parameter list, and
//! [`ExecuteTemplate`] lays out one statement's packet once and then only
//! patches values in place, for the benchmark's hot path.
//!
//! Both always send the parameter types (new_params_bound_flag = 1).
//! libmysqlclient and libmariadb send them on the first execute only and 0
//! afterwards, but the server accepts types on every execute (checked against
//! MariaDB 10.11), and keeping them makes the packet bytes the same on every
//! execute except for the values, which is what lets the template patch in
//! place.
//!
//! For reference, sysbench 1.0.20 through libmariadb binds its integer
//! parameters as signed BIGINT (8-byte values) and its strings as
//! VAR_STRING; the server converts STRING and VAR_STRING parameters alike.

use std::ops::Range;

use crate::buf::{lenenc_int_len, WriteExt};
use crate::constants::command::COM_STMT_EXECUTE;
use crate::constants::ColumnType;
use crate::error::UsageError;
use crate::framing::{finish_packet, start_packet, HEADER_LEN, MAX_FRAGMENT};

/// The flags byte for a plain execute (`CURSOR_TYPE_NO_CURSOR`).
pub const NO_CURSOR: u8 = 0;
/// The parameter-type flag byte for an unsigned integer.
const UNSIGNED: u8 = 0x80;
/// Where the NULL bitmap starts in the packet: header, then 0x17, stmt_id,
/// flags and iteration_count.
const NULL_BITMAP_AT: usize = HEADER_LEN + 10;

/// A calendar date (MYSQL_TYPE_DATE). Zero fields are the zero date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A date and time (MYSQL_TYPE_DATETIME).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DateTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
}

/// A time of day or a duration (MYSQL_TYPE_TIME): `days` whole days plus
/// hours, minutes, seconds and microseconds, negated when `negative`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Time {
    pub negative: bool,
    pub days: u32,
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
    pub microseconds: u32,
}

/// One parameter value for [`encode_execute`], with the type it is sent as.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Param<'a> {
    /// SQL NULL, sent as MYSQL_TYPE_NULL.
    Null,
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    /// MYSQL_TYPE_STRING: what libmysqlclient and sysbench send for text.
    Bytes(&'a [u8]),
    /// MYSQL_TYPE_VARCHAR.
    VarChar(&'a [u8]),
    /// MYSQL_TYPE_VAR_STRING.
    VarString(&'a [u8]),
    /// MYSQL_TYPE_BLOB: binary data the server must not convert.
    Blob(&'a [u8]),
    Date(Date),
    Time(Time),
    DateTime(DateTime),
}

impl Param<'_> {
    /// The two type bytes sent for this parameter: the `enum_field_types`
    /// value and a flag byte with 0x80 for unsigned integers.
    pub fn type_bytes(&self) -> [u8; 2] {
        let (ty, flags) = match self {
            Param::Null => (ColumnType::Null, 0),
            Param::I8(_) => (ColumnType::Tiny, 0),
            Param::I16(_) => (ColumnType::Short, 0),
            Param::I32(_) => (ColumnType::Long, 0),
            Param::I64(_) => (ColumnType::LongLong, 0),
            Param::U8(_) => (ColumnType::Tiny, UNSIGNED),
            Param::U16(_) => (ColumnType::Short, UNSIGNED),
            Param::U32(_) => (ColumnType::Long, UNSIGNED),
            Param::U64(_) => (ColumnType::LongLong, UNSIGNED),
            Param::F32(_) => (ColumnType::Float, 0),
            Param::F64(_) => (ColumnType::Double, 0),
            Param::Bytes(_) => (ColumnType::String, 0),
            Param::VarChar(_) => (ColumnType::VarChar, 0),
            Param::VarString(_) => (ColumnType::VarString, 0),
            Param::Blob(_) => (ColumnType::Blob, 0),
            Param::Date(_) => (ColumnType::Date, 0),
            Param::Time(_) => (ColumnType::Time, 0),
            Param::DateTime(_) => (ColumnType::DateTime, 0),
        };
        [ty as u8, flags]
    }

    /// Appends the value in its binary protocol form (nothing for NULL).
    pub(crate) fn put_value(&self, out: &mut Vec<u8>) {
        match *self {
            Param::Null => {}
            Param::I8(v) => out.put_bytes(&v.to_le_bytes()),
            Param::I16(v) => out.put_bytes(&v.to_le_bytes()),
            Param::I32(v) => out.put_bytes(&v.to_le_bytes()),
            Param::I64(v) => out.put_bytes(&v.to_le_bytes()),
            Param::U8(v) => out.put_u8(v),
            Param::U16(v) => out.put_u16(v),
            Param::U32(v) => out.put_u32(v),
            Param::U64(v) => out.put_u64(v),
            Param::F32(v) => out.put_bytes(&v.to_le_bytes()),
            Param::F64(v) => out.put_bytes(&v.to_le_bytes()),
            Param::Bytes(v) | Param::VarChar(v) | Param::VarString(v) | Param::Blob(v) => out.put_lenenc_bytes(v),
            Param::Date(d) => {
                put_datetime(out, DateTime { year: d.year, month: d.month, day: d.day, ..DateTime::default() })
            }
            Param::Time(t) => put_time(out, t),
            Param::DateTime(dt) => put_datetime(out, dt),
        }
    }
}

/// A DATE/DATETIME value: a length byte, then only as many fields as are
/// needed (0: zero date; 4: date; 7: + time; 11: + microseconds), the
/// shortest form the binary protocol allows.
fn put_datetime(out: &mut Vec<u8>, v: DateTime) {
    let len = if v.microsecond != 0 {
        11
    } else if v.hour != 0 || v.minute != 0 || v.second != 0 {
        7
    } else if v.year != 0 || v.month != 0 || v.day != 0 {
        4
    } else {
        0
    };
    out.put_u8(len);
    if len >= 4 {
        out.put_u16(v.year);
        out.put_u8(v.month);
        out.put_u8(v.day);
    }
    if len >= 7 {
        out.put_u8(v.hour);
        out.put_u8(v.minute);
        out.put_u8(v.second);
    }
    if len == 11 {
        out.put_u32(v.microsecond);
    }
}

/// A TIME value: a length byte (0: zero; 8: no microseconds; 12: all), then
/// sign, days u32, hours, minutes, seconds, microseconds u32.
fn put_time(out: &mut Vec<u8>, v: Time) {
    let len = if v.microseconds != 0 {
        12
    } else if v.days != 0 || v.hours != 0 || v.minutes != 0 || v.seconds != 0 {
        8
    } else {
        0
    };
    out.put_u8(len);
    if len >= 8 {
        out.put_u8(u8::from(v.negative));
        out.put_u32(v.days);
        out.put_u8(v.hours);
        out.put_u8(v.minutes);
        out.put_u8(v.seconds);
    }
    if len == 12 {
        out.put_u32(v.microseconds);
    }
}

fn put_execute_head(out: &mut Vec<u8>, stmt_id: u32) {
    out.put_u8(COM_STMT_EXECUTE);
    out.put_u32(stmt_id);
    out.put_u8(NO_CURSOR);
    out.put_u32(1);
}

/// Appends a COM_STMT_EXECUTE packet running statement `stmt_id` with
/// `params` (as many as the statement's COM_STMT_PREPARE_OK announced).
/// Values past 16 MiB in total split the packet; the returned sequence id is
/// the one the server's response starts with.
pub fn encode_execute(out: &mut Vec<u8>, stmt_id: u32, params: &[Param<'_>]) -> u8 {
    let start = start_packet(out);
    put_execute_head(out, stmt_id);
    if !params.is_empty() {
        let bitmap = out.len();
        out.put_zeros(params.len().div_ceil(8));
        for (i, _) in params.iter().enumerate().filter(|(_, p)| matches!(p, Param::Null)) {
            if let Some(b) = out.get_mut(bitmap + i / 8) {
                *b |= 1 << (i % 8);
            }
        }
        out.put_u8(1);
        for p in params {
            out.put_bytes(&p.type_bytes());
        }
        for p in params {
            p.put_value(out);
        }
    }
    finish_packet(out, start, 0)
}

/// The type and size of one parameter in an [`ExecuteTemplate`]. Every slot
/// has a fixed wire size, so values can be patched without moving bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParamSlot {
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float,
    Double,
    /// A MYSQL_TYPE_STRING value of exactly `len` bytes, like sysbench's
    /// fixed-length `c` (119) and `pad` (59) strings.
    Bytes {
        len: usize,
    },
}

impl ParamSlot {
    fn type_bytes(self) -> [u8; 2] {
        let (ty, flags) = match self {
            ParamSlot::Int8 => (ColumnType::Tiny, 0),
            ParamSlot::Int16 => (ColumnType::Short, 0),
            ParamSlot::Int32 => (ColumnType::Long, 0),
            ParamSlot::Int64 => (ColumnType::LongLong, 0),
            ParamSlot::UInt8 => (ColumnType::Tiny, UNSIGNED),
            ParamSlot::UInt16 => (ColumnType::Short, UNSIGNED),
            ParamSlot::UInt32 => (ColumnType::Long, UNSIGNED),
            ParamSlot::UInt64 => (ColumnType::LongLong, UNSIGNED),
            ParamSlot::Float => (ColumnType::Float, 0),
            ParamSlot::Double => (ColumnType::Double, 0),
            ParamSlot::Bytes { .. } => (ColumnType::String, 0),
        };
        [ty as u8, flags]
    }

    /// Bytes of the value on the wire, a string's length prefix included.
    fn wire_len(self) -> usize {
        match self {
            ParamSlot::Int8 | ParamSlot::UInt8 => 1,
            ParamSlot::Int16 | ParamSlot::UInt16 => 2,
            ParamSlot::Int32 | ParamSlot::UInt32 | ParamSlot::Float => 4,
            ParamSlot::Int64 | ParamSlot::UInt64 | ParamSlot::Double => 8,
            ParamSlot::Bytes { len } => lenenc_int_len(len as u64).saturating_add(len),
        }
    }

    /// Bytes before the value proper: a string's length prefix.
    fn prefix_len(self) -> usize {
        match self {
            ParamSlot::Bytes { len } => lenenc_int_len(len as u64),
            _ => 0,
        }
    }

    /// The value bytes of a fresh or re-inserted slot: zero, or `len` zero
    /// bytes after the length prefix. Writes into `out` without allocating.
    fn put_zero_value(self, out: &mut [u8]) {
        out.fill(0);
        if let ParamSlot::Bytes { len } = self {
            let (prefix, prefix_len) = lenenc_on_stack(len as u64);
            if let (Some(head), Some(prefix)) = (out.get_mut(..prefix_len), prefix.get(..prefix_len)) {
                head.copy_from_slice(prefix);
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            ParamSlot::Int8 => "TINYINT (i8)",
            ParamSlot::Int16 => "SMALLINT (i16)",
            ParamSlot::Int32 => "INT (i32)",
            ParamSlot::Int64 => "BIGINT (i64)",
            ParamSlot::UInt8 => "TINYINT UNSIGNED (u8)",
            ParamSlot::UInt16 => "SMALLINT UNSIGNED (u16)",
            ParamSlot::UInt32 => "INT UNSIGNED (u32)",
            ParamSlot::UInt64 => "BIGINT UNSIGNED (u64)",
            ParamSlot::Float => "FLOAT (f32)",
            ParamSlot::Double => "DOUBLE (f64)",
            ParamSlot::Bytes { .. } => "fixed-length string",
        }
    }
}

/// The length-encoded form of `v` (as [`WriteExt::put_lenenc_int`] writes
/// it) in a stack buffer, and how many of its bytes are used.
fn lenenc_on_stack(v: u64) -> ([u8; 9], usize) {
    let [b0, b1, b2, b3, b4, b5, b6, b7] = v.to_le_bytes();
    match lenenc_int_len(v) {
        1 => ([b0, 0, 0, 0, 0, 0, 0, 0, 0], 1),
        3 => ([0xFC, b0, b1, 0, 0, 0, 0, 0, 0], 3),
        4 => ([0xFD, b0, b1, b2, 0, 0, 0, 0, 0], 4),
        _ => ([0xFE, b0, b1, b2, b3, b4, b5, b6, b7], 9),
    }
}

#[derive(Debug, Clone, Copy)]
struct SlotState {
    kind: ParamSlot,
    /// Where the slot's wire bytes start in the packet; for a NULL slot,
    /// where they would be re-inserted.
    offset: usize,
    null: bool,
}

/// A COM_STMT_EXECUTE packet laid out once for one statement, whose values
/// are then patched in place: the bytes are those [`encode_execute`] writes
/// for the same values (types always sent, sequence id 0).
///
/// Every value starts as zero (a `Bytes` slot as `len` zero bytes). Setters
/// check the index and the slot's type and never panic; none allocates.
///
/// NULL: a NULL parameter has no value bytes on the wire, so
/// [`set_null`](Self::set_null) removes the slot's bytes and moves the later
/// values down (a copy within the buffer, still no allocation; its capacity
/// is reserved for the full layout), and setting a value on a NULL slot puts
/// them back. The slot keeps its own type byte while NULL, as libmysqlclient
/// does for a bound buffer whose `is_null` is set. Statements that never
/// send NULL never take this path.
///
/// The packet must fit in one frame (payload under 16 MiB): the template is
/// for small hot-path statements; use [`encode_execute`] for larger ones.
#[derive(Debug)]
pub struct ExecuteTemplate {
    packet: Vec<u8>,
    slots: Vec<SlotState>,
    /// Packet length with no NULL slot: the capacity `packet` must keep.
    full_len: usize,
}

impl Clone for ExecuteTemplate {
    /// Keeps the full-layout capacity, so a clone's patching never allocates either.
    fn clone(&self) -> Self {
        let mut packet = Vec::with_capacity(self.full_len);
        packet.extend_from_slice(&self.packet);
        ExecuteTemplate { packet, slots: self.slots.clone(), full_len: self.full_len }
    }
}

impl ExecuteTemplate {
    /// Lays out the packet for statement `stmt_id` with one slot per
    /// parameter. Fails with [`UsageError::TemplateTooLarge`] if the payload
    /// would need more than one frame.
    pub fn new(stmt_id: u32, slots: &[ParamSlot]) -> Result<Self, UsageError> {
        let bitmap_len = slots.len().div_ceil(8);
        let params_len = if slots.is_empty() {
            0
        } else {
            slots.iter().fold(bitmap_len + 1 + 2 * slots.len(), |n, s| n.saturating_add(s.wire_len()))
        };
        let payload_len = (NULL_BITMAP_AT - HEADER_LEN).saturating_add(params_len);
        if payload_len >= MAX_FRAGMENT {
            return Err(UsageError::TemplateTooLarge { size: payload_len, max: MAX_FRAGMENT - 1 });
        }
        let full_len = HEADER_LEN + payload_len;
        let mut packet = Vec::with_capacity(full_len);
        let start = start_packet(&mut packet);
        put_execute_head(&mut packet, stmt_id);
        let mut states = Vec::with_capacity(slots.len());
        if !slots.is_empty() {
            packet.put_zeros(bitmap_len);
            packet.put_u8(1);
            for s in slots {
                packet.put_bytes(&s.type_bytes());
            }
            for &kind in slots {
                let offset = packet.len();
                packet.put_zeros(kind.wire_len());
                if let Some(value) = packet.get_mut(offset..) {
                    kind.put_zero_value(value);
                }
                states.push(SlotState { kind, offset, null: false });
            }
        }
        finish_packet(&mut packet, start, 0);
        Ok(ExecuteTemplate { packet, slots: states, full_len })
    }

    /// The packet, header included, ready to write.
    pub fn packet(&self) -> &[u8] {
        &self.packet
    }

    pub fn param_count(&self) -> usize {
        self.slots.len()
    }

    /// Where parameter `index`'s value lies in [`packet`](Self::packet)
    /// (a string's length prefix excluded), or `None` if the index is out of
    /// range or the parameter is NULL.
    pub fn value_range(&self, index: usize) -> Option<Range<usize>> {
        let slot = self.slots.get(index).filter(|s| !s.null)?;
        let start = slot.offset + slot.kind.prefix_len();
        Some(start..slot.offset + slot.kind.wire_len())
    }

    /// Commands start at sequence id 0, which the template holds; this is
    /// for a caller that needs another.
    pub fn set_sequence_id(&mut self, seq: u8) {
        if let Some(b) = self.packet.get_mut(HEADER_LEN - 1) {
            *b = seq;
        }
    }

    /// Points the template at another statement with the same parameters
    /// (after a reconnect re-prepared it).
    pub fn set_statement_id(&mut self, stmt_id: u32) {
        if let Some(b) = self.packet.get_mut(HEADER_LEN + 1..HEADER_LEN + 5) {
            b.copy_from_slice(&stmt_id.to_le_bytes());
        }
    }

    pub fn set_i8(&mut self, index: usize, v: i8) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Int8, &v.to_le_bytes())
    }
    pub fn set_i16(&mut self, index: usize, v: i16) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Int16, &v.to_le_bytes())
    }
    pub fn set_i32(&mut self, index: usize, v: i32) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Int32, &v.to_le_bytes())
    }
    pub fn set_i64(&mut self, index: usize, v: i64) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Int64, &v.to_le_bytes())
    }
    pub fn set_u8(&mut self, index: usize, v: u8) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::UInt8, &v.to_le_bytes())
    }
    pub fn set_u16(&mut self, index: usize, v: u16) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::UInt16, &v.to_le_bytes())
    }
    pub fn set_u32(&mut self, index: usize, v: u32) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::UInt32, &v.to_le_bytes())
    }
    pub fn set_u64(&mut self, index: usize, v: u64) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::UInt64, &v.to_le_bytes())
    }
    pub fn set_f32(&mut self, index: usize, v: f32) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Float, &v.to_le_bytes())
    }
    pub fn set_f64(&mut self, index: usize, v: f64) -> Result<(), UsageError> {
        self.patch(index, ParamSlot::Double, &v.to_le_bytes())
    }

    /// Sets a `Bytes { len }` slot; `v` must be exactly `len` bytes long.
    pub fn set_bytes(&mut self, index: usize, v: &[u8]) -> Result<(), UsageError> {
        let slot = self.slot(index)?;
        match slot.kind {
            ParamSlot::Bytes { len } if len == v.len() => self.patch(index, slot.kind, v),
            ParamSlot::Bytes { .. } => {
                Err(UsageError::ParamMismatch { index, slot: slot.kind.name(), value: "a string of another length" })
            }
            kind => Err(UsageError::ParamMismatch { index, slot: kind.name(), value: "a string" }),
        }
    }

    /// Makes parameter `index` NULL, or not NULL again with a zero value.
    pub fn set_null(&mut self, index: usize, null: bool) -> Result<(), UsageError> {
        let slot = self.slot(index)?;
        if slot.null == null {
            return Ok(());
        }
        let len = slot.kind.wire_len();
        let at = slot.offset;
        if null {
            self.packet.copy_within(at + len.., at);
            self.packet.truncate(self.packet.len() - len);
        } else {
            // Within the reserved capacity: no allocation.
            let old_len = self.packet.len();
            self.packet.resize(old_len + len, 0);
            self.packet.copy_within(at..old_len, at + len);
            if let Some(value) = self.packet.get_mut(at..at + len) {
                slot.kind.put_zero_value(value);
            }
        }
        for later in self.slots.iter_mut().skip(index + 1) {
            later.offset = if null { later.offset - len } else { later.offset + len };
        }
        if let Some(s) = self.slots.get_mut(index) {
            s.null = null;
        }
        if let Some(b) = self.packet.get_mut(NULL_BITMAP_AT + index / 8) {
            let bit = 1u8 << (index % 8);
            *b = if null { *b | bit } else { *b & !bit };
        }
        let payload_len = (self.packet.len() - HEADER_LEN) as u32;
        if let Some(header) = self.packet.get_mut(..3) {
            header.copy_from_slice(payload_len.to_le_bytes().get(..3).unwrap_or_default());
        }
        Ok(())
    }

    /// Sets parameter `index` from a [`Param`] of the slot's type
    /// (`Param::Bytes` for a `Bytes` slot), or NULL.
    pub fn set(&mut self, index: usize, value: Param<'_>) -> Result<(), UsageError> {
        match value {
            Param::Null => self.set_null(index, true),
            Param::I8(v) => self.set_i8(index, v),
            Param::I16(v) => self.set_i16(index, v),
            Param::I32(v) => self.set_i32(index, v),
            Param::I64(v) => self.set_i64(index, v),
            Param::U8(v) => self.set_u8(index, v),
            Param::U16(v) => self.set_u16(index, v),
            Param::U32(v) => self.set_u32(index, v),
            Param::U64(v) => self.set_u64(index, v),
            Param::F32(v) => self.set_f32(index, v),
            Param::F64(v) => self.set_f64(index, v),
            Param::Bytes(v) => self.set_bytes(index, v),
            Param::VarChar(_) | Param::VarString(_) | Param::Blob(_) => {
                self.mismatch(index, "a VARCHAR, VAR_STRING or BLOB value")
            }
            Param::Date(_) | Param::Time(_) | Param::DateTime(_) => {
                self.mismatch(index, "a DATE, TIME or DATETIME value")
            }
        }
    }

    fn slot(&self, index: usize) -> Result<SlotState, UsageError> {
        self.slots.get(index).copied().ok_or(UsageError::ParamIndex { index, count: self.slots.len() })
    }

    fn mismatch(&self, index: usize, value: &'static str) -> Result<(), UsageError> {
        let slot = self.slot(index)?;
        Err(UsageError::ParamMismatch { index, slot: slot.kind.name(), value })
    }

    /// Writes `value` (the bytes after any length prefix) into slot `index`
    /// if the slot is of kind `expected`, first making it non-NULL.
    fn patch(&mut self, index: usize, expected: ParamSlot, value: &[u8]) -> Result<(), UsageError> {
        let slot = self.slot(index)?;
        if slot.kind != expected {
            return Err(UsageError::ParamMismatch { index, slot: slot.kind.name(), value: expected.name() });
        }
        if slot.null {
            self.set_null(index, false)?;
        }
        let start = slot.offset + expected.prefix_len();
        if let Some(dst) = self.packet.get_mut(start..start + value.len()) {
            dst.copy_from_slice(value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::decode_packet;
    use proptest::prelude::*;

    fn encode(stmt_id: u32, params: &[Param<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_execute(&mut out, stmt_id, params);
        out
    }

    /// The value bytes of a single parameter: the packet tail after the
    /// 1-byte bitmap, the bound flag and the 2 type bytes.
    fn value_of(p: Param<'_>) -> Vec<u8> {
        encode(1, &[p])[HEADER_LEN + 10 + 1 + 1 + 2..].to_vec()
    }

    #[test]
    fn documented_example() {
        // The protocol documentation's COM_STMT_EXECUTE example: statement 1,
        // one VARCHAR parameter "foo".
        // 12 00 00 00 17 01 00 00 00 00 01 00 00 00 00 01 0f 00 03 66 6f 6f
        let expected = [
            0x12, 0x00, 0x00, 0x00, 0x17, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0f, 0x00,
            0x03, 0x66, 0x6f, 0x6f,
        ];
        let mut out = Vec::new();
        assert_eq!(encode_execute(&mut out, 1, &[Param::VarChar(b"foo")]), 1);
        assert_eq!(out, expected);
    }

    #[test]
    fn matches_what_libmariadb_sends() {
        // Captured with strace from sysbench 1.0.20 (libmariadb 3) talking to
        // MariaDB 10.11. oltp_point_select's first execute of
        // `SELECT c FROM sbtest1 WHERE id=?`: the id goes as a signed BIGINT.
        let point = [
            0x16, 0x00, 0x00, 0x00, 0x17, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
            0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(encode(1, &[Param::I64(51)]), point);
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Int64]).unwrap();
        t.set_i64(0, 51).unwrap();
        assert_eq!(t.packet(), point);
        // oltp_read_write's BEGIN, prepared as statement 2: no parameter block.
        assert_eq!(
            encode(2, &[]),
            [0x0a, 0x00, 0x00, 0x00, 0x17, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00]
        );
        // Its INSERT (id, k, c, pad), statement 12: two BIGINTs, then c and
        // pad as VAR_STRING.
        let c = b"16183217939-09192256517-78148039162-21780930213-28190460427-\
                  40703544125-36262002886-78558564039-73316252342-25342659252";
        let pad = b"20690057469-42618556420-94311295877-08642447631-62312225228";
        let mut insert = vec![
            0xd8, 0x00, 0x00, 0x00, 0x17, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
            0x08, 0x00, 0xfd, 0x00, 0xfd, 0x00, 0x33, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x32, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x77,
        ];
        insert.extend_from_slice(c);
        insert.push(0x3b);
        insert.extend_from_slice(pad);
        assert_eq!(insert.len(), 220);
        let params = [Param::I64(51), Param::I64(50), Param::VarString(c), Param::VarString(pad)];
        assert_eq!(encode(12, &params), insert);
    }

    #[test]
    fn no_parameters_means_no_bitmap_and_no_flag() {
        assert_eq!(encode(7, &[]), [0x0a, 0, 0, 0, 0x17, 0x07, 0, 0, 0, 0x00, 0x01, 0, 0, 0]);
    }

    #[test]
    fn documented_binary_values() {
        // Examples from the protocol documentation's "Binary Protocol OwnedParam".
        assert_eq!(value_of(Param::I64(1)), [0x01, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(value_of(Param::I32(1)), [0x01, 0, 0, 0]);
        assert_eq!(value_of(Param::I16(1)), [0x01, 0]);
        assert_eq!(value_of(Param::I8(1)), [0x01]);
        assert_eq!(value_of(Param::F64(10.2)), [0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x24, 0x40]);
        assert_eq!(value_of(Param::F32(10.2)), [0x33, 0x33, 0x23, 0x41]);
        assert_eq!(value_of(Param::Bytes(b"foo")), [0x03, 0x66, 0x6f, 0x6f]);
        let dt = DateTime { year: 2010, month: 10, day: 17, hour: 19, minute: 27, second: 30, microsecond: 1 };
        assert_eq!(
            value_of(Param::DateTime(dt)),
            [0x0b, 0xda, 0x07, 0x0a, 0x11, 0x13, 0x1b, 0x1e, 0x01, 0x00, 0x00, 0x00]
        );
        assert_eq!(value_of(Param::Date(Date { year: 2010, month: 10, day: 17 })), [0x04, 0xda, 0x07, 0x0a, 0x11]);
        let t = Time { negative: true, days: 120, hours: 19, minutes: 27, seconds: 30, microseconds: 1 };
        assert_eq!(
            value_of(Param::Time(t)),
            [0x0c, 0x01, 0x78, 0x00, 0x00, 0x00, 0x13, 0x1b, 0x1e, 0x01, 0x00, 0x00, 0x00]
        );
        let t = Time { microseconds: 0, ..t };
        assert_eq!(value_of(Param::Time(t)), [0x08, 0x01, 0x78, 0x00, 0x00, 0x00, 0x13, 0x1b, 0x1e]);
        assert_eq!(value_of(Param::Time(Time::default())), [0x00]);
    }

    #[test]
    fn datetime_uses_the_shortest_form() {
        let date_only = DateTime { year: 2024, month: 2, day: 29, ..DateTime::default() };
        assert_eq!(value_of(Param::DateTime(date_only)), [0x04, 0xe8, 0x07, 0x02, 0x1d]);
        let no_micros = DateTime { hour: 1, ..date_only };
        assert_eq!(value_of(Param::DateTime(no_micros)), [0x07, 0xe8, 0x07, 0x02, 0x1d, 0x01, 0x00, 0x00]);
        assert_eq!(value_of(Param::DateTime(DateTime::default())), [0x00]);
        assert_eq!(value_of(Param::Date(Date::default())), [0x00]);
    }

    #[test]
    fn type_bytes_and_unsigned_flag() {
        let out = encode(
            3,
            &[
                Param::U8(1),
                Param::I16(-1),
                Param::U32(7),
                Param::U64(u64::MAX),
                Param::Blob(b""),
                Param::VarString(b""),
            ],
        );
        let types = &out[HEADER_LEN + 10 + 1 + 1..][..12];
        assert_eq!(types, [0x01, 0x80, 0x02, 0x00, 0x03, 0x80, 0x08, 0x80, 0xfc, 0x00, 0xfd, 0x00]);
        let values = &out[HEADER_LEN + 10 + 1 + 1 + 12..];
        assert_eq!(
            values,
            [0x01, 0xff, 0xff, 0x07, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00]
        );
    }

    #[test]
    fn nulls_set_bitmap_bits_and_have_no_value() {
        // 9 parameters: a 2-byte bitmap; NULL at 0 and 8.
        let mut params = vec![Param::I8(5); 9];
        params[0] = Param::Null;
        params[8] = Param::Null;
        let out = encode(1, &params);
        let bitmap = &out[HEADER_LEN + 10..HEADER_LEN + 12];
        assert_eq!(bitmap, [0x01, 0x01]);
        assert_eq!(out[HEADER_LEN + 12], 1, "new_params_bound_flag");
        let types = &out[HEADER_LEN + 13..HEADER_LEN + 13 + 18];
        assert_eq!(&types[..2], [0x06, 0x00], "MYSQL_TYPE_NULL");
        assert_eq!(&types[16..], [0x06, 0x00]);
        assert_eq!(&out[HEADER_LEN + 13 + 18..], [5; 7], "only the 7 non-NULL values");
        let frame = decode_packet(&out, 0, 1 << 20).unwrap().unwrap();
        assert_eq!(frame.consumed, out.len(), "the header length matches");
    }

    #[test]
    fn values_past_16_mib_split_the_packet() {
        let big = vec![0x5A; MAX_FRAGMENT];
        let mut out = Vec::new();
        assert_eq!(encode_execute(&mut out, 9, &[Param::Blob(&big), Param::I32(1)]), 2);
        let frame = decode_packet(&out, 0, usize::MAX).unwrap().unwrap();
        let payload = &frame.payload[..];
        assert_eq!(&payload[..5], [0x17, 0x09, 0x00, 0x00, 0x00]);
        // After 10 head bytes, the bitmap, the flag and 2 x 2 type bytes: the
        // BLOB as 0xFD + 3-byte length and its bytes, then the INT.
        assert_eq!(&payload[16..20], [0xfd, 0xff, 0xff, 0xff]);
        assert_eq!(&payload[payload.len() - 4..], [1, 0, 0, 0]);
        assert_eq!(payload.len(), 10 + 1 + 1 + 4 + 4 + MAX_FRAGMENT + 4);
    }

    #[test]
    fn template_matches_the_general_encoder_for_sysbench_statements() {
        // oltp_point_select: SELECT c FROM sbtestN WHERE id=?
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Int32]).unwrap();
        t.set_i32(0, 4242).unwrap();
        assert_eq!(t.packet(), encode(1, &[Param::I32(4242)]));
        assert_eq!(t.value_range(0), Some(HEADER_LEN + 14..HEADER_LEN + 18));

        // oltp_read_write's INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)
        let slots = [ParamSlot::Int32, ParamSlot::Int32, ParamSlot::Bytes { len: 119 }, ParamSlot::Bytes { len: 59 }];
        let mut t = ExecuteTemplate::new(0x0102_0304, &slots).unwrap();
        let c = [b'7'; 119];
        let pad = [b'#'; 59];
        t.set_i32(0, 17).unwrap();
        t.set_i32(1, -3).unwrap();
        t.set_bytes(2, &c).unwrap();
        t.set_bytes(3, &pad).unwrap();
        let expected = encode(0x0102_0304, &[Param::I32(17), Param::I32(-3), Param::Bytes(&c), Param::Bytes(&pad)]);
        assert_eq!(t.packet(), expected);
        assert_eq!(&t.packet()[t.value_range(2).unwrap()], c);
        assert_eq!(&t.packet()[t.value_range(3).unwrap()], pad);
        // Re-patching changes only the values.
        t.set_i32(1, 99).unwrap();
        let expected = encode(0x0102_0304, &[Param::I32(17), Param::I32(99), Param::Bytes(&c), Param::Bytes(&pad)]);
        assert_eq!(t.packet(), expected);
    }

    #[test]
    fn template_without_parameters() {
        let t = ExecuteTemplate::new(5, &[]).unwrap();
        assert_eq!(t.packet(), encode(5, &[]));
        assert_eq!(t.param_count(), 0);
    }

    #[test]
    fn long_string_slot_has_a_3_byte_length_prefix() {
        let v = vec![b'q'; 300];
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Bytes { len: 300 }]).unwrap();
        t.set_bytes(0, &v).unwrap();
        assert_eq!(t.packet(), encode(1, &[Param::Bytes(&v)]));
    }

    #[test]
    fn wrong_index_type_or_length_is_an_error_and_changes_nothing() {
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Int32, ParamSlot::Bytes { len: 3 }]).unwrap();
        t.set_i32(0, 1).unwrap();
        let before = t.packet().to_vec();
        assert_eq!(t.set_i32(2, 1), Err(UsageError::ParamIndex { index: 2, count: 2 }));
        assert_eq!(t.set_null(usize::MAX, true), Err(UsageError::ParamIndex { index: usize::MAX, count: 2 }));
        assert_eq!(
            t.set_i64(0, 1),
            Err(UsageError::ParamMismatch { index: 0, slot: "INT (i32)", value: "BIGINT (i64)" })
        );
        assert_eq!(
            t.set_u32(0, 1),
            Err(UsageError::ParamMismatch { index: 0, slot: "INT (i32)", value: "INT UNSIGNED (u32)" })
        );
        assert_eq!(
            t.set_bytes(0, b"abc"),
            Err(UsageError::ParamMismatch { index: 0, slot: "INT (i32)", value: "a string" })
        );
        assert_eq!(
            t.set_bytes(1, b"abcd"),
            Err(UsageError::ParamMismatch {
                index: 1,
                slot: "fixed-length string",
                value: "a string of another length"
            })
        );
        assert!(matches!(t.set(1, Param::Blob(b"abc")), Err(UsageError::ParamMismatch { index: 1, .. })));
        assert!(matches!(t.set(0, Param::Date(Date::default())), Err(UsageError::ParamMismatch { index: 0, .. })));
        assert_eq!(t.packet(), before);
    }

    #[test]
    fn stack_lenenc_matches_the_writer() {
        for v in [0u64, 250, 251, 0xFFFF, 0x1_0000, 0xFF_FFFF, 0x100_0000, u64::MAX] {
            let mut expected = Vec::new();
            expected.put_lenenc_int(v);
            let (bytes, n) = lenenc_on_stack(v);
            assert_eq!(&bytes[..n], expected, "{v}");
        }
    }

    #[test]
    fn too_large_template_is_refused() {
        assert!(matches!(
            ExecuteTemplate::new(1, &[ParamSlot::Bytes { len: MAX_FRAGMENT }]),
            Err(UsageError::TemplateTooLarge { .. })
        ));
        assert!(matches!(
            ExecuteTemplate::new(1, &[ParamSlot::Bytes { len: usize::MAX }]),
            Err(UsageError::TemplateTooLarge { .. })
        ));
    }

    #[test]
    fn sequence_and_statement_id_can_be_patched() {
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Int8]).unwrap();
        t.set_sequence_id(3);
        t.set_statement_id(0xAABB_CCDD);
        assert_eq!(&t.packet()[..9], [0x0f, 0x00, 0x00, 0x03, 0x17, 0xDD, 0xCC, 0xBB, 0xAA]);
    }

    /// The general encoder's bytes for `params`, with NULL parameters keeping
    /// the type of their template slot instead of MYSQL_TYPE_NULL.
    fn expected_with_typed_nulls(stmt_id: u32, slots: &[ParamSlot], params: &[Param<'_>]) -> Vec<u8> {
        let mut out = encode(stmt_id, params);
        let types_at = HEADER_LEN + 10 + slots.len().div_ceil(8) + 1;
        for (i, (slot, p)) in slots.iter().zip(params).enumerate() {
            if matches!(p, Param::Null) {
                out[types_at + 2 * i..types_at + 2 * i + 2].copy_from_slice(&slot.type_bytes());
            }
        }
        out
    }

    #[test]
    fn null_removes_the_value_and_a_value_brings_it_back() {
        let slots = [ParamSlot::Int32, ParamSlot::Bytes { len: 2 }, ParamSlot::Int64];
        let mut t = ExecuteTemplate::new(1, &slots).unwrap();
        t.set_i32(0, 1).unwrap();
        t.set_bytes(1, b"ab").unwrap();
        t.set_i64(2, 3).unwrap();
        t.set_null(1, true).unwrap();
        t.set_null(1, true).unwrap();
        assert_eq!(t.packet(), expected_with_typed_nulls(1, &slots, &[Param::I32(1), Param::Null, Param::I64(3)]));
        assert_eq!(t.value_range(1), None);
        // Values after a NULL are still patched in the right place.
        t.set_i64(2, -9).unwrap();
        assert_eq!(t.packet(), expected_with_typed_nulls(1, &slots, &[Param::I32(1), Param::Null, Param::I64(-9)]));
        // Clearing NULL brings back a zero value.
        t.set_null(1, false).unwrap();
        assert_eq!(t.packet(), encode(1, &[Param::I32(1), Param::Bytes(&[0, 0]), Param::I64(-9)]));
        // Setting a value on a NULL slot clears NULL.
        t.set(0, Param::Null).unwrap();
        t.set_i32(0, 5).unwrap();
        assert_eq!(t.packet(), encode(1, &[Param::I32(5), Param::Bytes(&[0, 0]), Param::I64(-9)]));
    }

    #[test]
    fn clone_keeps_working() {
        let mut t = ExecuteTemplate::new(1, &[ParamSlot::Int16, ParamSlot::Int16]).unwrap();
        t.set_null(0, true).unwrap();
        let mut c = t.clone();
        c.set_i16(0, 7).unwrap();
        assert_eq!(c.packet(), encode(1, &[Param::I16(7), Param::I16(0)]));
        assert_eq!(t.packet(), expected_with_typed_nulls(1, &[ParamSlot::Int16; 2], &[Param::Null, Param::I16(0)]));
    }

    /// An owned parameter value for property tests.
    #[derive(Debug, Clone)]
    enum OwnedParam {
        I8(i8),
        I16(i16),
        I32(i32),
        I64(i64),
        U8(u8),
        U16(u16),
        U32(u32),
        U64(u64),
        F32(f32),
        F64(f64),
        Bytes(Vec<u8>),
    }

    impl OwnedParam {
        fn slot(&self) -> ParamSlot {
            match self {
                OwnedParam::I8(_) => ParamSlot::Int8,
                OwnedParam::I16(_) => ParamSlot::Int16,
                OwnedParam::I32(_) => ParamSlot::Int32,
                OwnedParam::I64(_) => ParamSlot::Int64,
                OwnedParam::U8(_) => ParamSlot::UInt8,
                OwnedParam::U16(_) => ParamSlot::UInt16,
                OwnedParam::U32(_) => ParamSlot::UInt32,
                OwnedParam::U64(_) => ParamSlot::UInt64,
                OwnedParam::F32(_) => ParamSlot::Float,
                OwnedParam::F64(_) => ParamSlot::Double,
                OwnedParam::Bytes(b) => ParamSlot::Bytes { len: b.len() },
            }
        }

        fn param(&self) -> Param<'_> {
            match self {
                OwnedParam::I8(v) => Param::I8(*v),
                OwnedParam::I16(v) => Param::I16(*v),
                OwnedParam::I32(v) => Param::I32(*v),
                OwnedParam::I64(v) => Param::I64(*v),
                OwnedParam::U8(v) => Param::U8(*v),
                OwnedParam::U16(v) => Param::U16(*v),
                OwnedParam::U32(v) => Param::U32(*v),
                OwnedParam::U64(v) => Param::U64(*v),
                OwnedParam::F32(v) => Param::F32(*v),
                OwnedParam::F64(v) => Param::F64(*v),
                OwnedParam::Bytes(b) => Param::Bytes(b),
            }
        }
    }

    fn value() -> impl Strategy<Value = OwnedParam> {
        prop_oneof![
            any::<i8>().prop_map(OwnedParam::I8),
            any::<i16>().prop_map(OwnedParam::I16),
            any::<i32>().prop_map(OwnedParam::I32),
            any::<i64>().prop_map(OwnedParam::I64),
            any::<u8>().prop_map(OwnedParam::U8),
            any::<u16>().prop_map(OwnedParam::U16),
            any::<u32>().prop_map(OwnedParam::U32),
            any::<u64>().prop_map(OwnedParam::U64),
            any::<f32>().prop_map(OwnedParam::F32),
            any::<f64>().prop_map(OwnedParam::F64),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(OwnedParam::Bytes),
        ]
    }

    proptest! {
        #[test]
        fn template_bytes_equal_the_general_encoder(
            stmt_id in any::<u32>(),
            first in proptest::collection::vec(value(), 0..20),
            second_seed in proptest::collection::vec(any::<u64>(), 20),
            nulls in proptest::collection::vec(any::<bool>(), 20),
        ) {
            let slots: Vec<ParamSlot> = first.iter().map(OwnedParam::slot).collect();
            let mut t = ExecuteTemplate::new(stmt_id, &slots).unwrap();
            for (i, v) in first.iter().enumerate() {
                t.set(i, v.param()).unwrap();
            }
            let params: Vec<Param<'_>> = first.iter().map(OwnedParam::param).collect();
            prop_assert_eq!(t.packet(), &encode(stmt_id, &params)[..]);

            // A second round: some NULL, the others re-patched with new
            // values of the same type and length.
            let second: Vec<OwnedParam> = first.iter().zip(&second_seed).map(|(v, &s)| match v {
                OwnedParam::I8(_) => OwnedParam::I8(s as i8),
                OwnedParam::I16(_) => OwnedParam::I16(s as i16),
                OwnedParam::I32(_) => OwnedParam::I32(s as i32),
                OwnedParam::I64(_) => OwnedParam::I64(s as i64),
                OwnedParam::U8(_) => OwnedParam::U8(s as u8),
                OwnedParam::U16(_) => OwnedParam::U16(s as u16),
                OwnedParam::U32(_) => OwnedParam::U32(s as u32),
                OwnedParam::U64(_) => OwnedParam::U64(s),
                OwnedParam::F32(_) => OwnedParam::F32(f32::from_bits(s as u32)),
                OwnedParam::F64(_) => OwnedParam::F64(f64::from_bits(s)),
                OwnedParam::Bytes(b) => OwnedParam::Bytes(b.iter().map(|x| x ^ s as u8).collect()),
            }).collect();
            for (i, v) in second.iter().enumerate() {
                if nulls[i] {
                    t.set_null(i, true).unwrap();
                } else {
                    t.set(i, v.param()).unwrap();
                }
            }
            let params: Vec<Param<'_>> =
                second.iter().zip(&nulls).map(|(v, &n)| if n { Param::Null } else { v.param() }).collect();
            let expected = expected_with_typed_nulls(stmt_id, &slots, &params);
            prop_assert_eq!(t.packet(), &expected[..]);
            let frame = decode_packet(t.packet(), 0, 1 << 20).unwrap().unwrap();
            prop_assert_eq!(frame.consumed, t.packet().len());

            // And back: every slot set again, no NULL left.
            for (i, v) in second.iter().enumerate() {
                t.set(i, v.param()).unwrap();
            }
            let params: Vec<Param<'_>> = second.iter().map(OwnedParam::param).collect();
            prop_assert_eq!(t.packet(), &encode(stmt_id, &params)[..]);
        }
    }
}

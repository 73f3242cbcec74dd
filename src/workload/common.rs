//! What sysbench's scripts share below their statements: the templates
//! `c` and `pad` are drawn from, the size of the bulk-insert buffer, and
//! how a value goes into a parameter or the SQL text as sysbench puts it.

use std::io::Write as _;

use wirebench_protocol::command::ExecuteTemplate;
use wirebench_protocol::UsageError;

/// `c_value_template`: 10 groups of 11 digits, 119 characters.
pub(crate) const C_TEMPLATE: &[u8; 119] = b"###########-###########-###########-###########-###########-\
###########-###########-###########-###########-###########";
/// `pad_value_template`: 5 groups of 11 digits, 59 characters.
pub(crate) const PAD_TEMPLATE: &[u8; 59] = b"###########-###########-###########-###########-###########";

/// `BULK_PACKET_SIZE` in sysbench's `db_driver.c`: the buffer of a
/// multi-row INSERT, its terminating NUL included.
pub(crate) const BULK_PACKET_SIZE: usize = 512 * 1024;

/// Sets integer parameter `index` as sysbench binds it: BIGINT for the 1.0
/// scripts, INT (`int32`) for the 0.5 scripts' `db_bind_param`, which
/// truncates as C converts.
pub(crate) fn set_int(t: &mut ExecuteTemplate, index: usize, v: i64, int32: bool) -> Result<(), UsageError> {
    if int32 {
        t.set_i32(index, v as i32)
    } else {
        t.set_i64(index, v)
    }
}

/// Appends `v` in decimal, as `%d` prints it.
pub(crate) fn push_decimal(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    // Writing to a Vec cannot fail.
    let _ = write!(out, "{v}");
}

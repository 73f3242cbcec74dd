//! The row INSERT of the scripts that add rows one at a time, as COM_QUERY
//! text with its values written in:
//! `INSERT INTO sbtestN (id, k, c, pad) VALUES (ID, K, 'C', 'PAD')`.
//! `oltp_insert.lua` and 0.5's `insert.lua` draw the whole row the same
//! way ([`SbtestRowInsert`]); 0.5's `oltp.lua` draws its own values and
//! shares only the text ([`query_sbtest_insert`]).

use super::common::{push_decimal, C_TEMPLATE, PAD_TEMPLATE};
use super::{CommandSink, ScriptContext};
use crate::rand::{RandUnique, Rng, UniqueCursor};

/// Sends `INSERT INTO sbtest<table> (id, k, c, pad) VALUES (<id>, <k>,
/// '<c>', '<pad>')`, written straight into the command buffer (no
/// allocation). `form` is the statement with its values left out, as the
/// script spells it, for error messages.
pub(crate) fn query_sbtest_insert(
    sink: &mut CommandSink<'_>,
    form: &'static [u8],
    table: u32,
    id: i64,
    k: u32,
    c: &[u8],
    pad: &[u8],
) {
    sink.query_with(form, |out| {
        out.extend_from_slice(b"INSERT INTO sbtest");
        push_decimal(out, table);
        out.extend_from_slice(b" (id, k, c, pad) VALUES (");
        push_decimal(out, id);
        out.extend_from_slice(b", ");
        push_decimal(out, k);
        out.extend_from_slice(b", '");
        out.extend_from_slice(c);
        out.extend_from_slice(b"', '");
        out.extend_from_slice(pad);
        out.extend_from_slice(b"')");
    });
}

/// 0.5's row INSERT with its values left out (insert.lua and oltp.lua):
/// its values unsigned (`%u`).
pub(crate) const SBTEST_INSERT_FORM_05: &[u8] = b"INSERT INTO sbtest%u (id, k, c, pad) VALUES (%u, %u, '%s', '%s')";

/// How a row's id is written when the server does not number the rows
/// (`auto_inc` off): from the next `sysbench.rand.unique()` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UniqueIdSql {
    /// The value as it is, the whole `u32` range (0.5's `sb_rand_uniq()`).
    Unsigned,
    /// The value minus 2^31 (oltp_insert.lua: "Convert a uint32_t value
    /// to SQL INT").
    SignedInt,
}

/// One connection's row INSERTs as `oltp_insert.lua` and 0.5's
/// `insert.lua` draw them: k (`--rand-type`), c and pad, in that order,
/// then the id: 0 with `auto_inc` (the server numbers the row), otherwise
/// the next value of this connection's slice of `sysbench.rand.unique()`
/// ([`RandUnique::split`]), so that ids stay unique across connections
/// without shared state and one connection gets sysbench's order.
pub(crate) struct SbtestRowInsert {
    table_size: u32,
    auto_inc: bool,
    id_sql: UniqueIdSql,
    unique: RandUnique,
    part: u32,
    parts: u32,
    ids: UniqueCursor,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

impl SbtestRowInsert {
    /// The INSERTs of connection `context.thread`, with k within
    /// `table_size`.
    pub(crate) fn new(
        table_size: u32,
        auto_inc: bool,
        id_sql: UniqueIdSql,
        unique: RandUnique,
        context: ScriptContext,
    ) -> Self {
        let parts = context.threads.max(1);
        let part = context.thread % parts;
        SbtestRowInsert {
            table_size,
            auto_inc,
            id_sql,
            unique,
            part,
            parts,
            ids: unique.split(part, parts),
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        }
    }

    /// The next value of this connection's slice of `sysbench.rand.unique()`;
    /// after 2^32 / connections values the slice starts over, as sysbench's
    /// counter wraps after 2^32.
    fn next_unique_id(&mut self) -> u32 {
        if let Some(v) = self.ids.next() {
            return v;
        }
        self.ids = self.unique.split(self.part, self.parts);
        self.ids.next().unwrap_or(0)
    }

    /// Draws a row and sends its INSERT into sbtest`table`.
    pub(crate) fn send(&mut self, table: u32, rng: &mut Rng, sink: &mut CommandSink<'_>) {
        let k = rng.default(1, self.table_size);
        rng.rand_str(C_TEMPLATE, &mut self.c);
        rng.rand_str(PAD_TEMPLATE, &mut self.pad);
        let unique = if self.auto_inc { None } else { Some(self.next_unique_id()) };
        let (form, id): (&'static [u8], i64) = match self.id_sql {
            UniqueIdSql::Unsigned => (SBTEST_INSERT_FORM_05, unique.map_or(0, i64::from)),
            UniqueIdSql::SignedInt => (
                b"INSERT INTO sbtest%d (id, k, c, pad) VALUES (%d, %d, '%s', '%s')",
                unique.map_or(0, |v| i64::from(v) - (1 << 31)),
            ),
        };
        query_sbtest_insert(sink, form, table, id, k, &self.c, &self.pad);
    }
}

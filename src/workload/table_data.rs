//! `prepare`'s rows as data for `LOAD DATA LOCAL INFILE`, streamed from
//! memory, instead of `oltp_common.lua`'s multi-row INSERTs: the server
//! then parses no SQL per row, which is most of what an INSERT costs it.
//! The tables come out the same: the same CREATE TABLE, the same rows (the
//! same draws from the same generator, in the same order, so a fixed
//! `--rand-seed` gives the same values), the index on `k` created after the
//! rows. The ids are always sent, 1..=table_size: with `auto_inc` they are
//! what the server numbers sysbench's INSERTs with (when
//! auto_increment_increment and _offset are 1, which the caller checks),
//! and they leave its counter at table_size+1 as those INSERTs do, where a
//! LOAD DATA left to number its rows reserves ids in growing blocks and
//! leaves the counter past them (docs/prepare.md shows by how much).

use std::iter::StepBy;
use std::ops::RangeInclusive;

use wirebench_protocol::command::{push_bulk_row, Param};

use super::common::{C_TEMPLATE, PAD_TEMPLATE};
use super::table_load::{create_index_sql, create_table_sql, draw_row, tables_of, TableLoad};
use super::{OltpOptions, ScriptContext};
use crate::rand::Rng;

/// The data of one LOAD DATA statement: at most this many bytes. Large
/// enough that the round trip per statement is lost in the server's work,
/// small enough that progress shows and an interrupt says how far it got.
pub const ROW_BATCH_BYTES: usize = 4 << 20;

/// One step of a `prepare` that loads its rows as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareStep {
    /// A statement sent as it is (CREATE TABLE, CREATE INDEX).
    Sql(String),
    /// Rows of one table, for one LOAD DATA statement.
    Rows(RowBatch),
    /// Rows of one table as a multi-row INSERT that names every row's id,
    /// so that it makes the same rows whenever it reaches the server.
    Insert(String),
}

impl PrepareStep {
    /// A statement of a load whose INSERTs name their rows' ids
    /// ([`Workload::prepare_numbered`](super::Workload::prepare_numbered)).
    pub(crate) fn of_numbered_load(sql: String) -> PrepareStep {
        if sql.starts_with("INSERT INTO ") {
            PrepareStep::Insert(sql)
        } else {
            PrepareStep::Sql(sql)
        }
    }
}

/// `prepare_numbered` of the tests that load oltp_common.lua's tables:
/// sysbench's INSERTs with every row's id named, as steps.
pub(super) fn numbered_load(
    options: &OltpOptions,
    rows: u32,
    context: ScriptContext,
    rng: Rng,
) -> Box<dyn Iterator<Item = PrepareStep> + Send> {
    Box::new(TableLoad::new(options, rows, context, rng).with_row_ids().map(PrepareStep::of_numbered_load))
}

/// How a [`RowBatch`] carries its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchForm {
    /// One line a row, fields separated by tabs (LOAD DATA's defaults).
    #[default]
    Lines,
    /// COM_STMT_BULK_EXECUTE's parameter rows (`id` and `k` unsigned
    /// LONGs, `c` and `pad` strings, as [`bulk_param_types`] says), at
    /// most `max_bytes` a batch: what the server's `max_allowed_packet`
    /// holds besides the packet's head.
    BulkRows { max_bytes: usize },
}

/// The parameter types of [`BatchForm::BulkRows`]'s rows: `id` and `k` as
/// unsigned LONGs; `c` and `pad` as BLOBs, stored as they come, where
/// `charset` is binary, else as STRINGs, which the server reads in the
/// connection's character set and converts to the columns', as it does
/// sysbench's quoted strings. The rows' bytes are the same either way.
pub fn bulk_param_types(charset: DataCharset) -> [[u8; 2]; 4] {
    let string = match charset {
        DataCharset::Utf8mb4 => Param::Bytes(b""),
        DataCharset::Binary => Param::Blob(b""),
    };
    [Param::U32(0), Param::U32(0), string, string].map(|p| p.type_bytes())
}

/// Consecutive rows of table `sbtest{table}` (`id`, `k`, `c`, `pad`) in
/// the `form` asked for. The values are digits and dashes: nothing to
/// escape in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowBatch {
    pub table: u32,
    pub rows: u32,
    pub data: Vec<u8>,
    pub form: BatchForm,
}

impl RowBatch {
    /// The name the statement gives the data; the server asks for it back,
    /// and the client sends the data for that name and no other.
    pub fn file_name(&self) -> String {
        format!("memory:sbtest{}", self.table)
    }

    /// The statement that loads the rows: LOAD DATA read as utf8mb4, or
    /// the INSERT that bulk rows are parameters of.
    pub fn sql(&self) -> String {
        match self.form {
            BatchForm::Lines => self.sql_read_as(DataCharset::Utf8mb4),
            BatchForm::BulkRows { .. } => self.insert_sql(),
        }
    }

    /// The INSERT whose parameters bulk rows are.
    pub fn insert_sql(&self) -> String {
        format!("INSERT INTO sbtest{}(id, k, c, pad) VALUES(?, ?, ?, ?)", self.table)
    }

    /// The statement that loads the rows, read as `charset`.
    pub fn sql_read_as(&self, charset: DataCharset) -> String {
        let charset = match charset {
            DataCharset::Utf8mb4 => "utf8mb4",
            DataCharset::Binary => "binary",
        };
        format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE sbtest{} CHARACTER SET {charset} (id, k, c, pad)",
            self.file_name(),
            self.table
        )
    }
}

/// How the server reads the strings of a [`RowBatch`]. The data is ASCII,
/// which reads the same in every character set a client may use; naming
/// one keeps the database's default (which may be UCS-2) out of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataCharset {
    /// Converted from utf8mb4 to the columns' character set: right for any.
    Utf8mb4,
    /// Stored as it comes, unconverted: less server CPU for the load
    /// (docs/prepare.md), and the same rows when the columns' character set
    /// writes ASCII as ASCII (latin1, utf8mb4, ..., not ucs2, utf16 or
    /// utf32).
    Binary,
}

/// `cmd_prepare()` for one thread, with the rows as [`RowBatch`]es: for
/// each of its tables the CREATE TABLE, the rows, then the index on `k`.
pub(crate) struct TableData {
    options: OltpOptions,
    table_size: u32,
    tables: StepBy<RangeInclusive<u32>>,
    rng: Rng,
    stage: DataStage,
    form: BatchForm,
    batch_bytes: usize,
    c: [u8; C_TEMPLATE.len()],
    pad: [u8; PAD_TEMPLATE.len()],
}

#[derive(Debug, Clone, Copy)]
enum DataStage {
    NextTable,
    Rows { table: u32, next_row: u32 },
    Index { table: u32 },
}

impl TableData {
    pub(crate) fn new(
        options: &OltpOptions,
        table_size: u32,
        context: ScriptContext,
        rng: Rng,
        form: BatchForm,
    ) -> Self {
        let batch_bytes = match form {
            BatchForm::Lines => ROW_BATCH_BYTES,
            BatchForm::BulkRows { max_bytes } => max_bytes.min(ROW_BATCH_BYTES),
        };
        TableData {
            options: options.clone(),
            table_size,
            tables: tables_of(context, options.tables),
            rng,
            stage: DataStage::NextTable,
            form,
            batch_bytes,
            c: *C_TEMPLATE,
            pad: *PAD_TEMPLATE,
        }
    }

    /// Batches of at most `bytes` (tests cut small ones).
    #[cfg(test)]
    pub(crate) fn with_batch_bytes(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes;
        self
    }

    /// Rows `*next_row..` of `table` up to the batch size, or `None` when
    /// the table's rows are all out. Row ids run 1..=table_size; the last
    /// one wraps `next_row` to 0 when table_size is u32::MAX.
    fn batch(&mut self, table: u32, next_row: &mut u32) -> Option<RowBatch> {
        let mut batch = RowBatch { table, rows: 0, data: Vec::with_capacity(self.batch_bytes), form: self.form };
        // Lines: two numbers of up to 10 digits, 3 tabs, a newline. Bulk
        // rows: 4 indicators, two 4-byte numbers, two 1-byte lengths.
        let longest_row = 2 * 11 + 3 + C_TEMPLATE.len() + PAD_TEMPLATE.len() + 1;
        // A row a batch at least, however small the server's packets: it then
        // says the packet is too large, where no rows would be a wrong table.
        let room = |batch: &RowBatch| batch.rows == 0 || batch.data.len() + longest_row <= self.batch_bytes;
        while *next_row != 0 && *next_row <= self.table_size && room(&batch) {
            let k = draw_row(&mut self.rng, self.table_size, &mut self.c, &mut self.pad);
            match self.form {
                BatchForm::Lines => push_line(&mut batch.data, *next_row, k, &self.c, &self.pad),
                BatchForm::BulkRows { .. } => push_bulk_row(
                    &mut batch.data,
                    &[Param::U32(*next_row), Param::U32(k), Param::Bytes(&self.c), Param::Bytes(&self.pad)],
                ),
            }
            batch.rows += 1;
            *next_row = next_row.wrapping_add(1);
        }
        (batch.rows > 0).then_some(batch)
    }
}

/// `id\tk\tc\tpad\n`.
fn push_line(out: &mut Vec<u8>, id: u32, k: u32, c: &[u8], pad: &[u8]) {
    super::common::push_decimal(out, id);
    out.push(b'\t');
    super::common::push_decimal(out, k);
    out.push(b'\t');
    out.extend_from_slice(c);
    out.push(b'\t');
    out.extend_from_slice(pad);
    out.push(b'\n');
}

impl Iterator for TableData {
    type Item = PrepareStep;

    fn next(&mut self) -> Option<PrepareStep> {
        loop {
            match self.stage {
                DataStage::NextTable => {
                    let table = self.tables.next()?;
                    self.stage = DataStage::Rows { table, next_row: 1 };
                    return Some(PrepareStep::Sql(create_table_sql(&self.options, table)));
                }
                DataStage::Rows { table, mut next_row } => {
                    let batch = self.batch(table, &mut next_row);
                    self.stage = match batch {
                        Some(_) => DataStage::Rows { table, next_row },
                        None => DataStage::Index { table },
                    };
                    if let Some(batch) = batch {
                        return Some(PrepareStep::Rows(batch));
                    }
                }
                DataStage::Index { table } => {
                    self.stage = DataStage::NextTable;
                    if let Some(index) = create_index_sql(&self.options, table) {
                        return Some(PrepareStep::Sql(index));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng};
    use crate::workload::{oltp_insert, oltp_read_write, Workload};

    /// The rows of an INSERT load, as the lines a [`RowBatch`] holds.
    fn insert_rows_as_lines(sql: &str) -> Vec<String> {
        let values = &sql[sql.find(" VALUES(").unwrap() + " VALUES(".len()..sql.len() - 1];
        values
            .split("),(")
            .map(|row| row.split(", ").map(|f| f.trim_matches('\'')).collect::<Vec<_>>().join("\t"))
            .collect()
    }

    /// What a load sends, with the rows apart: the statements, and each
    /// table's rows as lines.
    fn split_steps(steps: impl Iterator<Item = PrepareStep>) -> (Vec<String>, Vec<String>) {
        let (mut statements, mut lines) = (Vec::new(), Vec::new());
        for step in steps {
            match step {
                PrepareStep::Sql(sql) | PrepareStep::Insert(sql) => statements.push(sql),
                PrepareStep::Rows(batch) => {
                    let text = String::from_utf8(batch.data).unwrap();
                    assert_eq!(text.lines().count(), batch.rows as usize);
                    statements.push(format!("rows of sbtest{}", batch.table));
                    lines.extend(text.lines().map(|line| format!("{}:{line}", batch.table)));
                }
            }
        }
        statements.dedup();
        (statements, lines)
    }

    fn insert_load(w: &dyn Workload, thread: u32, threads: u32, seed: u32) -> (Vec<String>, Vec<String>) {
        inserts_as_steps(w.prepare(context(thread, threads), rng(seed)))
    }

    /// INSERT statements' rows as batches, the ids the server gives added.
    fn inserts_as_steps(statements: impl Iterator<Item = String>) -> (Vec<String>, Vec<String>) {
        let mut id = 0;
        split_steps(statements.map(|sql| {
            if sql.starts_with("CREATE TABLE") {
                id = 0;
            }
            let mut next_id = || {
                id += 1;
                id
            };
            if let Some(rest) = sql.strip_prefix("INSERT INTO sbtest") {
                let table: u32 = rest[..rest.find('(').unwrap()].parse().unwrap();
                let lines = insert_rows_as_lines(&sql);
                // Without auto_inc the rows carry their ids; with it they are
                // the server's, numbered from 1 in the order sent.
                let rows_carry_ids = sql.contains("(id, k, c, pad)");
                let data = lines
                    .iter()
                    .map(|l| if rows_carry_ids { format!("{l}\n") } else { format!("{}\t{l}\n", next_id()) })
                    .collect::<String>();
                let rows = data.lines().count() as u32;
                PrepareStep::Rows(RowBatch { table, rows, data: data.into_bytes(), form: BatchForm::Lines })
            } else {
                PrepareStep::Sql(sql)
            }
        }))
    }

    /// The same tables, the same rows in the same order, whatever the
    /// batch size: with ids from the server (auto_inc) and without.
    #[test]
    fn data_rows_are_the_insert_rows() {
        for auto_inc in [true, false] {
            let options = OltpOptions { tables: 5, table_size: 3000, auto_inc, ..OltpOptions::default() };
            let w = oltp_read_write::workload(&options).unwrap();
            for (thread, threads) in [(0, 1), (1, 3), (2, 3)] {
                let want = insert_load(&w, thread, threads, 7);
                for bytes in [300, 64 << 10, ROW_BATCH_BYTES] {
                    let data = TableData::new(&options, 3000, context(thread, threads), rng(7), BatchForm::Lines)
                        .with_batch_bytes(bytes);
                    assert_eq!(
                        split_steps(data),
                        want,
                        "auto_inc {auto_inc}, thread {thread}/{threads}, {bytes} bytes"
                    );
                }
            }
            let got = w.prepare_data(context(0, 1), rng(7), BatchForm::Lines).unwrap();
            assert_eq!(split_steps(got), insert_load(&w, 0, 1, 7), "the workload's own prepare_data");
        }
    }

    /// The numbered INSERTs, sent over several connections, carry the
    /// rows of sysbench's INSERTs with their ids, with `auto_inc` too.
    #[test]
    fn numbered_inserts_carry_the_insert_rows_and_their_ids() {
        for auto_inc in [true, false] {
            let options = OltpOptions { tables: 4, table_size: 20000, auto_inc, ..OltpOptions::default() };
            for w in [
                oltp_read_write::workload(&options).unwrap(),
                crate::workload::oltp_read_only::workload(&options).unwrap(),
            ] {
                let numbered: Vec<PrepareStep> = w.prepare_numbered(context(1, 3), rng(5)).unwrap().collect();
                let insert_steps = numbered.iter().filter(|s| matches!(s, PrepareStep::Insert(_))).count();
                let all_sql: Vec<String> = numbered
                    .into_iter()
                    .map(|s| match s {
                        PrepareStep::Sql(sql) | PrepareStep::Insert(sql) => sql,
                        PrepareStep::Rows(_) => panic!("rows as data"),
                    })
                    .collect();
                let inserts: Vec<&String> = all_sql.iter().filter(|s| s.starts_with("INSERT")).collect();
                assert!(
                    inserts.len() > 2 && inserts.len() == insert_steps,
                    "{auto_inc}: INSERTs are rows, not barriers"
                );
                assert!(inserts.iter().all(|s| s.contains("(id, k, c, pad) VALUES(")), "{auto_inc}");
                assert_eq!(inserts_as_steps(all_sql.into_iter()), insert_load(&w, 1, 3, 5), "{auto_inc}");
            }
        }
    }

    #[test]
    fn batches_name_their_columns_and_stay_within_their_size() {
        let options = OltpOptions { tables: 1, table_size: 100, auto_inc: false, ..OltpOptions::default() };
        let steps: Vec<PrepareStep> =
            TableData::new(&options, 100, context(0, 1), rng(1), BatchForm::Lines).with_batch_bytes(2000).collect();
        let batches: Vec<&RowBatch> =
            steps.iter().filter_map(|s| if let PrepareStep::Rows(b) = s { Some(b) } else { None }).collect();
        assert!(batches.len() > 5);
        assert!(batches.iter().all(|b| b.data.len() <= 2000 && b.rows > 0));
        assert_eq!(batches.iter().map(|b| b.rows).sum::<u32>(), 100);
        assert_eq!(
            batches[0].sql(),
            "LOAD DATA LOCAL INFILE 'memory:sbtest1' INTO TABLE sbtest1 CHARACTER SET utf8mb4 (id, k, c, pad)"
        );
        assert_eq!(
            batches[0].sql_read_as(DataCharset::Binary),
            "LOAD DATA LOCAL INFILE 'memory:sbtest1' INTO TABLE sbtest1 CHARACTER SET binary (id, k, c, pad)"
        );
        assert_eq!(batches[0].file_name(), "memory:sbtest1");
        assert!(batches[0].data.starts_with(b"1\t"));
        assert_eq!(steps.last(), Some(&PrepareStep::Sql("CREATE INDEX k_1 ON sbtest1(k)".into())));
        let auto = OltpOptions { auto_inc: true, ..options };
        let first = TableData::new(&auto, 100, context(0, 1), rng(1), BatchForm::Lines).find_map(|s| match s {
            PrepareStep::Rows(b) => Some(b.sql()),
            PrepareStep::Sql(_) | PrepareStep::Insert(_) => None,
        });
        assert!(first.unwrap().ends_with(" (id, k, c, pad)"), "ids are sent with auto_inc too");
    }

    /// Bulk rows, read back as the server reads them, are the lines'
    /// rows: the same values in the same order, the same statements
    /// around them, each batch within its size.
    #[test]
    fn bulk_rows_are_the_lines_rows() {
        let options = OltpOptions { tables: 3, table_size: 2000, auto_inc: true, ..OltpOptions::default() };
        let lines = TableData::new(&options, 2000, context(1, 2), rng(3), BatchForm::Lines);
        let bulk_form = BatchForm::BulkRows { max_bytes: 20_000 };
        let bulk: Vec<PrepareStep> = TableData::new(&options, 2000, context(1, 2), rng(3), bulk_form).collect();
        let as_lines = bulk.into_iter().map(|step| match step {
            PrepareStep::Rows(batch) => {
                assert!(batch.data.len() <= 20_000 && batch.form == bulk_form);
                assert_eq!(batch.sql(), format!("INSERT INTO sbtest{}(id, k, c, pad) VALUES(?, ?, ?, ?)", batch.table));
                let data = bulk_rows_as_lines(&batch.data);
                assert_eq!(data.lines().count(), batch.rows as usize);
                PrepareStep::Rows(RowBatch { data: data.into_bytes(), form: BatchForm::Lines, ..batch })
            }
            other => other,
        });
        assert_eq!(split_steps(as_lines), split_steps(lines));
    }

    /// Bulk rows of (u32, u32, string, string) as tab-separated lines.
    fn bulk_rows_as_lines(mut data: &[u8]) -> String {
        let mut text = String::new();
        while !data.is_empty() {
            let mut fields = Vec::new();
            for ty in bulk_param_types(DataCharset::Binary) {
                assert_eq!(data[0], 0, "a value follows");
                data = &data[1..];
                if ty == Param::U32(0).type_bytes() {
                    fields.push(u32::from_le_bytes(data[..4].try_into().unwrap()).to_string());
                    data = &data[4..];
                } else {
                    let len = usize::from(data[0]);
                    fields.push(String::from_utf8(data[1..1 + len].to_vec()).unwrap());
                    data = &data[1 + len..];
                }
            }
            text.push_str(&fields.join("\t"));
            text.push('\n');
        }
        text
    }

    /// oltp_insert without auto_inc creates empty tables, as its INSERT load does.
    #[test]
    fn oltp_insert_without_auto_inc_loads_no_rows() {
        let options = OltpOptions { tables: 2, auto_inc: false, ..OltpOptions::default() };
        let w = oltp_insert::workload(&options).unwrap();
        let steps: Vec<PrepareStep> = w.prepare_data(context(0, 1), rng(1), BatchForm::Lines).unwrap().collect();
        assert!(steps.iter().all(|s| matches!(s, PrepareStep::Sql(_))));
        assert_eq!(split_steps(steps.into_iter()), insert_load(&w, 0, 1, 1));
    }
}

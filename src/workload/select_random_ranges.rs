//! `select_random_ranges.lua`: one `SELECT count(k)` over
//! `--number_of_ranges` ranges `k BETWEEN x AND x+delta` on `sbtest1`, each
//! `x` drawn from the thread's slice of values as in select_random_points.
//!
//! `prepare`, `prewarm` and `cleanup` are `oltp_common.lua`'s (see
//! [`super::select_random_points`]).

use super::common::{cleanup_sql, prewarm_sql, TableLoad};
use super::options::{OltpOptions, OptionsError};
use super::select_random_points::thread_slice;
use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, Workload, WorkloadError};
use crate::rand::Rng;
use wirebench_protocol::command::ParamSlot;

pub const NAME: &str = "select_random_ranges";

#[derive(Debug, Clone)]
pub struct SelectRandomRanges {
    options: OltpOptions,
}

pub fn workload(options: &OltpOptions) -> Result<SelectRandomRanges, OptionsError> {
    if options.number_of_ranges == 0 {
        return Err(OptionsError::ZeroCount { test: NAME, option: "number_of_ranges" });
    }
    Ok(SelectRandomRanges { options: options.clone() })
}

impl Workload for SelectRandomRanges {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let n = self.options.number_of_ranges as usize;
        let ranges = "k BETWEEN ? AND ? OR ".repeat(n - 1) + "k BETWEEN ? AND ?";
        vec![StatementSpec {
            sql: format!("        SELECT count(k)\n          FROM sbtest1\n          WHERE {ranges}"),
            slots: vec![ParamSlot::Int64; 2 * n],
        }]
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        let (low, high) = thread_slice(self.options.table_size, context);
        Box::new(RangesScript { ranges: self.options.number_of_ranges as usize, delta: self.options.delta, low, high })
    }

    fn prepare(&self, context: ScriptContext, rng: Rng) -> Box<dyn Iterator<Item = String> + Send> {
        Box::new(TableLoad::new(&self.options, self.options.table_size, context, rng))
    }

    fn prewarm(&self, context: ScriptContext) -> Vec<String> {
        prewarm_sql(&self.options, context)
    }

    fn cleanup(&self) -> Vec<String> {
        cleanup_sql(self.options.tables)
    }
}

struct RangesScript {
    ranges: usize,
    delta: i64,
    low: u32,
    high: u32,
}

impl Script for RangesScript {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let (ranges, delta, low, high) = (self.ranges, self.delta, self.low, self.high);
        sink.execute(0, |t| {
            for i in 0..ranges {
                let from = i64::from(rng.default(low, high));
                t.set_i64(2 * i, from)?;
                t.set_i64(2 * i + 1, from + delta)?;
            }
            Ok(())
        })?;
        Ok(Step::Last)
    }

    fn restart_event(&mut self) {}
}

//! `select_random_ranges.lua`: one `SELECT count(k)` over
//! `--number_of_ranges` ranges `k BETWEEN x AND x+delta` on `sbtest1`, each
//! `x` drawn from the thread's slice of values as in select_random_points.
//!
//! `prepare`, `prewarm` and `cleanup` are `oltp_common.lua`'s (see
//! [`super::select_random_points`]).

use super::common::set_int;
use super::oltp_options::{OltpOptions, OptionsError};
use super::select_random_points::thread_slice;
use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, Workload, WorkloadError};
use crate::rand::Rng;
use wirebench_protocol::command::ParamSlot;

pub const NAME: &str = "select_random_ranges";

#[derive(Debug, Clone)]
pub struct SelectRandomRanges {
    options: OltpOptions,
    /// 0.5's copy: INT values, and its own spacing of the SQL.
    legacy05: bool,
}

pub fn workload(options: &OltpOptions) -> Result<SelectRandomRanges, OptionsError> {
    if options.number_of_ranges == 0 {
        return Err(OptionsError::ZeroCount { test: NAME, option: "number_of_ranges" });
    }
    Ok(SelectRandomRanges { options: options.clone(), legacy05: false })
}

/// 0.5's `select_random_ranges.lua` (1.0.20's copy): its values bound as
/// INT, its SQL ending in the space `string.sub` leaves after the last
/// range and the spaces of the long string that closes it.
pub(crate) fn select_random_ranges05(options: &OltpOptions) -> Result<SelectRandomRanges, OptionsError> {
    Ok(SelectRandomRanges { legacy05: true, ..workload(options)? })
}

impl Workload for SelectRandomRanges {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let n = self.options.number_of_ranges as usize;
        let ranges = "k BETWEEN ? AND ? OR ".repeat(n - 1) + "k BETWEEN ? AND ?";
        let (end, slot) =
            if self.legacy05 { (" ".repeat(9), ParamSlot::Int32) } else { (String::new(), ParamSlot::Int64) };
        vec![StatementSpec {
            sql: format!("        SELECT count(k)\n          FROM sbtest1\n          WHERE {ranges}{end}"),
            slots: vec![slot; 2 * n],
        }]
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        let (low, high) = thread_slice(self.options.table_size, context);
        Box::new(RangesScript {
            ranges: self.options.number_of_ranges as usize,
            delta: self.options.delta,
            low,
            high,
            int32: self.legacy05,
        })
    }

    fn common_tables(&self) -> Option<(&OltpOptions, u32)> {
        Some((&self.options, self.options.table_size))
    }
}

struct RangesScript {
    ranges: usize,
    delta: i64,
    low: u32,
    high: u32,
    int32: bool,
}

impl Script for RangesScript {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let (ranges, delta, low, high, int32) = (self.ranges, self.delta, self.low, self.high, self.int32);
        sink.execute(0, |t| {
            for i in 0..ranges {
                let from = i64::from(rng.default(low, high));
                set_int(t, 2 * i, from, int32)?;
                set_int(t, 2 * i + 1, from + delta, int32)?;
            }
            Ok(())
        })?;
        Ok(Step::Last)
    }

    fn restart_event(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::testkit::{context, rng, Harness};
    use crate::workload::testkit::{long_strings, lua_format, lua_script};

    #[test]
    fn statement_is_the_scripts() {
        let options = OltpOptions { number_of_ranges: 2, ..OltpOptions::default() };
        let list = workload(&options).unwrap().statements();
        assert_eq!(list[0].slots, [ParamSlot::Int64; 4]);
        let Some(lua) = lua_script("select_random_ranges.lua") else { return };
        let strings = long_strings(&lua);
        assert_eq!(strings.len(), 1);
        assert!(lua.contains(r#"string.rep("k BETWEEN ? AND ? OR ","#));
        assert_eq!(list[0].sql, lua_format(&strings[0], &["k BETWEEN ? AND ? OR k BETWEEN ? AND ?"]));
    }

    #[test]
    fn ranges_are_delta_wide_within_the_thread_slice() {
        for delta in [5, 0, -3, 1000] {
            let options = OltpOptions { table_size: 1000, number_of_ranges: 4, delta, ..OltpOptions::default() };
            let w = workload(&options).unwrap();
            let mut harness = Harness::new(&w, context(1, 2), rng(21));
            for _ in 0..100 {
                let event = harness.event();
                assert_eq!(event.len(), 1);
                let p = event[0].params();
                assert_eq!(p.len(), 8);
                for pair in p.chunks(2) {
                    assert!((500..=1000).contains(&pair[0].int()), "{pair:?}");
                    assert_eq!(pair[1].int(), pair[0].int() + delta);
                }
            }
        }
    }
}

//! `select_random_points.lua`: one SELECT of `--random_points` random `k`
//! values on `sbtest1`. Each thread draws from its own slice of the value
//! range, `sb_rand(rlen * tid, rlen * tid + rlen)` with
//! `rlen = table_size / threads` in Lua numbers (fractions truncated when
//! they reach `uint32_t`).
//!
//! `prepare`, `prewarm` and `cleanup` are `oltp_common.lua`'s: the script's
//! own `prepare()` with its `--tables=1` assertion is never called, since
//! the common `prepare` command takes precedence. Its `cleanup()` refuses
//! `--tables > 1`; wirebench drops every table instead.

use super::common::set_int;
use super::oltp_options::{OltpOptions, OptionsError};
use super::{CommandSink, Script, ScriptContext, StatementSpec, Step, Workload, WorkloadError};
use crate::rand::Rng;
use wirebench_protocol::command::ParamSlot;

pub const NAME: &str = "select_random_points";

#[derive(Debug, Clone)]
pub struct SelectRandomPoints {
    options: OltpOptions,
    /// 0.5's copy binds INT where 1.0 binds BIGINT.
    int32: bool,
}

pub fn workload(options: &OltpOptions) -> Result<SelectRandomPoints, OptionsError> {
    if options.random_points == 0 {
        return Err(OptionsError::ZeroCount { test: NAME, option: "random_points" });
    }
    Ok(SelectRandomPoints { options: options.clone(), int32: false })
}

/// 0.5's `select_random_points.lua` (1.0.20's copy): the same statement,
/// its values bound as INT.
pub(crate) fn select_random_points05(options: &OltpOptions) -> Result<SelectRandomPoints, OptionsError> {
    Ok(SelectRandomPoints { int32: true, ..workload(options)? })
}

impl Workload for SelectRandomPoints {
    fn name(&self) -> &'static str {
        NAME
    }

    fn statements(&self) -> Vec<StatementSpec> {
        let points = "?, ".repeat(self.options.random_points as usize - 1) + "?";
        vec![StatementSpec {
            sql: format!(
                "        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN ({points})\n        "
            ),
            slots: vec![
                if self.int32 { ParamSlot::Int32 } else { ParamSlot::Int64 };
                self.options.random_points as usize
            ],
        }]
    }

    fn script(&self, context: ScriptContext) -> Box<dyn Script> {
        let (low, high) = thread_slice(self.options.table_size, context);
        Box::new(PointsScript { points: self.options.random_points as usize, low, high, int32: self.int32 })
    }

    fn common_tables(&self) -> Option<(&OltpOptions, u32)> {
        Some((&self.options, self.options.table_size))
    }
}

/// `rmin, rmax` of thread `tid % threads`: `rlen * tid` and `rmin + rlen`
/// in doubles, converted to `uint32_t` by truncation as LuaJIT's FFI does.
pub(crate) fn thread_slice(table_size: u32, context: ScriptContext) -> (u32, u32) {
    let threads = context.threads.max(1);
    let rlen = f64::from(table_size) / f64::from(threads);
    let rmin = rlen * f64::from(context.thread % threads);
    let rmax = rmin + rlen;
    (rmin as u32, rmax as u32)
}

struct PointsScript {
    points: usize,
    low: u32,
    high: u32,
    int32: bool,
}

impl Script for PointsScript {
    fn next(&mut self, rng: &mut Rng, sink: &mut CommandSink<'_>) -> Result<Step, WorkloadError> {
        let (points, low, high, int32) = (self.points, self.low, self.high, self.int32);
        sink.execute(0, |t| {
            for i in 0..points {
                set_int(t, i, i64::from(rng.default(low, high)), int32)?;
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
        let options = OltpOptions { random_points: 3, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        let list = w.statements();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].slots, [ParamSlot::Int64; 3]);
        let Some(lua) = lua_script("select_random_points.lua") else { return };
        let strings = long_strings(&lua);
        assert_eq!(strings.len(), 1);
        // string.rep("?, ", random_points - 1) .. "?"
        assert!(lua.contains(r#"string.rep("?, ", sysbench.opt.random_points - 1) .. "?""#));
        assert_eq!(list[0].sql, lua_format(&strings[0], &["?, ?, ?"]));
    }

    #[test]
    fn each_thread_draws_from_its_slice() {
        let options = OltpOptions { table_size: 100, random_points: 10, ..OltpOptions::default() };
        let w = workload(&options).unwrap();
        // rlen = 100 / 3 = 33.33…: slices [0, 33], [33, 66], [66, 100].
        for (thread, (low, high)) in [(0, (0, 33)), (1, (33, 66)), (2, (66, 100))] {
            assert_eq!(thread_slice(100, context(thread, 3)), (low, high));
            let mut harness = Harness::new(&w, context(thread, 3), rng(20 + thread));
            let mut seen = std::collections::HashSet::new();
            for _ in 0..300 {
                let event = harness.event();
                assert_eq!(event.len(), 1);
                for v in event[0].params() {
                    assert!((i64::from(low)..=i64::from(high)).contains(&v.int()), "thread {thread}: {v:?}");
                    seen.insert(v.int());
                }
            }
            assert!(seen.len() > 5, "thread {thread} drew {seen:?}");
        }
        assert_eq!(thread_slice(10_000, context(4, 4)), (0, 2500));
        assert!(workload(&OltpOptions { random_points: 0, ..OltpOptions::default() }).is_err());
    }
}

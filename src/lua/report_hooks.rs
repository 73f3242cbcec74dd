//! `sysbench.hooks.report_intermediate` and `report_cumulative`: a script
//! that sets them replaces sysbench's reports with its own, called with
//! the table sysbench 1.0.20 passes (`sb_lua.c`, `stat_to_lua_table`).
//!
//! As in sysbench, each report runs in the Lua state of the thread that
//! makes it: interim lines in a state of their own (sysbench's report
//! thread), checkpoint reports in another (its checkpoint thread), the
//! final report in the main state, the one that ran `init()`. That is
//! visible to scripts: `report_json` opens one JSON array per state and
//! closes it when the state closes.

use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};

use super::ffi::Entered;
use super::lua_state::{export_options, new_state};
use super::{ScriptEnv, ScriptError};
use crate::stats::report::{FinalReport, InterimReport};
use crate::stats::Counters;

const INTERMEDIATE: &str = "report_intermediate";
const CUMULATIVE: &str = "report_cumulative";

/// Which of the two hooks the script set when it was loaded (sysbench
/// looks once, after loading the script and before `init()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct HooksSet {
    pub intermediate: bool,
    pub cumulative: bool,
}

impl HooksSet {
    pub(crate) fn of(lua: &Lua) -> mlua::Result<HooksSet> {
        Ok(HooksSet { intermediate: hook(lua, INTERMEDIATE)?.is_some(), cumulative: hook(lua, CUMULATIVE)?.is_some() })
    }
}

/// Where the reports go when the script replaces them.
pub struct ReportHooks {
    /// The interim lines' state, while the run's threads run.
    interim: Option<Lua>,
    /// The checkpoint reports' state, while the run's threads run.
    checkpoints: Option<Lua>,
    /// The final report's state: the main one, if the script set the hook.
    main: Option<Lua>,
}

impl ReportHooks {
    /// The states the hooks the script set need: `interval` is
    /// `--report-interval` given, `checkpoints` `--report-checkpoints`.
    pub(crate) fn new(
        env: &Arc<ScriptEnv>,
        main: &Lua,
        set: HooksSet,
        interval: bool,
        checkpoints: bool,
    ) -> Result<Option<ReportHooks>, ScriptError> {
        if set == HooksSet::default() {
            return Ok(None);
        }
        let reporting_state = |wanted: bool| -> Result<Option<Lua>, ScriptError> {
            if !wanted {
                return Ok(None);
            }
            let lua = new_state(env, 0)?;
            export_options(&lua, env)?;
            Ok(Some(lua))
        };
        Ok(Some(ReportHooks {
            interim: reporting_state(interval && set.intermediate)?,
            checkpoints: reporting_state(checkpoints && set.cumulative)?,
            main: set.cumulative.then(|| main.clone()),
        }))
    }

    /// Calls `report_intermediate` for `line`; false when the script has
    /// no such hook and the default line is printed instead.
    pub fn intermediate(&self, line: &InterimReport<'_>) -> Result<bool, ScriptError> {
        let Some(lua) = &self.interim else { return Ok(false) };
        let stat = common_stat(lua, line.counters, line.threads_running, line.time_interval_s, line.time_total_s)?;
        stat.set("latency_pct", line.latency.percentile(f64::from(line.percentile)) / 1000.0)?;
        let queue = line.queue.unwrap_or_default();
        stat.set("queue_length", queue.length)?;
        stat.set("concurrency", queue.concurrency)?;
        call_report_hook(lua, INTERMEDIATE, stat)
    }

    /// Calls `report_cumulative` for a `--report-checkpoints` report,
    /// while `threads` threads still run.
    pub fn checkpoint(&self, report: &FinalReport<'_>, threads: u32) -> Result<bool, ScriptError> {
        let Some(lua) = &self.checkpoints else { return Ok(false) };
        call_report_hook(lua, CUMULATIVE, cumulative_stat(lua, report, threads)?)
    }

    /// Calls `report_cumulative` for the final report, once every thread
    /// has ended.
    pub fn last(&self, report: &FinalReport<'_>) -> Result<bool, ScriptError> {
        let Some(lua) = &self.main else { return Ok(false) };
        call_report_hook(lua, CUMULATIVE, cumulative_stat(lua, report, 0)?)
    }

    /// The run's threads have ended: the interim and checkpoint states
    /// close, as sysbench's report threads' do before its final report.
    pub fn threads_ended(&mut self) {
        self.interim = None;
        self.checkpoints = None;
    }
}

fn hook(lua: &Lua, name: &str) -> mlua::Result<Option<Function>> {
    let hooks: Table = lua.globals().get::<Table>("sysbench")?.get("hooks")?;
    Ok(match hooks.get::<Value>(name)? {
        Value::Function(f) => Some(f),
        _ => None,
    })
}

/// Calls the hook `name` with `stat`, if the state has it.
fn call_report_hook(lua: &Lua, name: &str, stat: Table) -> Result<bool, ScriptError> {
    let Some(f) = hook(lua, name)? else { return Ok(false) };
    let _entered = Entered::new(lua);
    f.call::<()>(stat).map_err(|e| ScriptError::function(name, &e))?;
    Ok(true)
}

/// The fields both reports have; times and latencies in seconds.
fn common_stat(lua: &Lua, c: &Counters, threads: u32, interval_s: f64, total_s: f64) -> mlua::Result<Table> {
    let stat = lua.create_table()?;
    stat.set("threads_running", threads)?;
    stat.set("time_interval", interval_s)?;
    stat.set("time_total", total_s)?;
    stat.set("events", c.events)?;
    stat.set("reads", c.reads)?;
    stat.set("writes", c.writes)?;
    stat.set("other", c.others)?;
    stat.set("errors", c.errors)?;
    stat.set("reconnects", c.reconnects)?;
    Ok(stat)
}

fn cumulative_stat(lua: &Lua, report: &FinalReport<'_>, threads: u32) -> mlua::Result<Table> {
    let stat = common_stat(lua, report.counters, threads, report.time_interval_s, report.time_total_s)?;
    let l = report.latency;
    stat.set("latency_pct", l.percentile(f64::from(report.percentile)) / 1000.0)?;
    let seconds = |ns: u64| ns as f64 / 1e9;
    stat.set("latency_min", seconds(l.min_ns()))?;
    stat.set("latency_max", seconds(l.max_ns()))?;
    stat.set("latency_avg", seconds(l.avg_ns()))?;
    stat.set("latency_sum", seconds(l.sum_ns()))?;
    Ok(stat)
}

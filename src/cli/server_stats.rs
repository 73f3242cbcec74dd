//! `--server-stats[=on|off|interim]` and `--server-pid`, read into the
//! sampling layer's [`ServerStatsOptions`].

use super::cli_error::CliError;
use super::opts::Opts;
use super::raw::RawOpt;
use super::{GeneralOptions, MysqlOptions};
use crate::results::{OutputFormat, ResultOptions};
use crate::server_stats::{SamplingMode, ServerStatsOptions};

/// On by default with `--format=json` (whose readers get the fields),
/// off otherwise, so that sysbench's report stays as it was. `notes`
/// gets a line when a shard leaves the sampling asked for to shard 0.
pub(crate) fn server_stats_options(
    opts: &Opts,
    general: &GeneralOptions,
    mysql: &MysqlOptions,
    results: &ResultOptions,
    notes: &mut Vec<String>,
) -> Result<ServerStatsOptions, CliError> {
    let given = opts.get("server_stats").map(sampling_mode).transpose()?;
    let default =
        if results.format == OutputFormat::Json && !mysql.dry_run { SamplingMode::On } else { SamplingMode::Off };
    let mut stats = ServerStatsOptions { mode: given.unwrap_or(default), asked: given.is_some(), pid: None };
    if let Some(pid) = opts.int("server_pid", 1, i32::MAX as u32, "the pid of the server's process on this host")? {
        // Naming the server's process asks for its sampling.
        stats.asked = true;
        if !stats.mode.samples() {
            return Err(CliError::Conflict(
                "--server-pid names the process --server-stats reads: add --server-stats (on by default with \
                 --format=json)"
                    .to_owned(),
            ));
        }
        stats.pid = Some(pid);
    }
    if stats.asked && stats.mode.samples() && mysql.dry_run {
        return Err(CliError::Conflict(
            "--server-stats samples the server, and --mysql-dry-run has none: drop one of them".to_owned(),
        ));
    }
    if stats.mode == SamplingMode::Interim && !matches!(general.report_interval, Some(i) if i > 0) {
        return Err(CliError::Conflict(
            "--server-stats=interim adds a line to each --report-interval line: add --report-interval=N (seconds), \
             or use --server-stats=on for the final figures"
                .to_owned(),
        ));
    }
    if general.shard.index() > 0 && stats.mode.samples() {
        if stats.asked {
            notes.push(format!(
                "--server-stats: shard {}/{} leaves the sampling to shard 0, so that the one server is counted once \
                 (`wirebench merge` puts its figures beside every shard's)",
                general.shard.index(),
                general.shard.count()
            ));
        }
        stats.mode = SamplingMode::Off;
        stats.pid = None;
    }
    Ok(stats)
}

/// `--server-stats`'s value; none is `on`.
fn sampling_mode(opt: &RawOpt) -> Result<SamplingMode, CliError> {
    match opt.value.as_deref() {
        None | Some("on" | "true" | "1") => Ok(SamplingMode::On),
        Some("off" | "false" | "0") => Ok(SamplingMode::Off),
        Some("interim") => Ok(SamplingMode::Interim),
        Some(other) => Err(CliError::InvalidValue {
            option: opt.label(),
            value: other.to_owned(),
            expected: "on, off or interim".to_owned(),
        }),
    }
}

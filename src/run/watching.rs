//! `--metrics-listen`, `--metrics-push`, `--web` and `--report-html` in a
//! command: the watch started before the command (a port that cannot be
//! bound ends it before any load), fed as it goes (`result_sink.rs`,
//! `reports.rs`), and finished after it, whatever its end: the last push
//! waited for, the report written.

use std::sync::Arc;

use super::host_facts::host_name;
use super::output::stderr_line;
use super::RunError;
use crate::cli::{Bench, Command};
use crate::driver::relay::RecordOptions;
use crate::watch::{Watch, WatchError, WatchSettings, WatchedCommand};

/// A line on standard error, for the watch's own warnings.
fn say(line: &str) {
    stderr_line(format_args!("wirebench: {line}"));
}

/// The watch of a test command (`run`, `search`, a script's `run`), if
/// any is asked for.
pub(super) fn start_watch(bench: &Bench) -> Result<Option<Arc<Watch>>, RunError> {
    let command = match bench.command {
        Command::Search => "search",
        _ => "run",
    };
    let shard = bench.general.shard;
    let test = bench.script.as_ref().map_or_else(|| bench.test.name().to_owned(), |script| script.name());
    let (test, title) = match &bench.replay {
        Some(replay) => ("replay".to_owned(), format!("wirebench replay: {}", replay.file.display())),
        None => (test.clone(), format!("wirebench {command}: {test}")),
    };
    let watched =
        WatchedCommand { test: Some(test), shard: Some((shard.index(), shard.count())), title, host: host_name() };
    Ok(start_watching(&bench.watch, watched)?)
}

/// The watch of `wirebench record`, if any is asked for.
pub(super) fn start_record_watch(
    settings: &WatchSettings,
    options: &RecordOptions,
) -> Result<Option<Arc<Watch>>, WatchError> {
    let listen: Vec<String> = options.listen.iter().map(ToString::to_string).collect();
    let title = format!("wirebench record: {} -> {}", listen.join(", "), options.upstream);
    let watched = WatchedCommand { test: None, shard: None, title, host: host_name() };
    start_watching(settings, watched)
}

/// The watch of `wirebench fuzz`, if any is asked for.
pub fn start_fuzz_watch(settings: &WatchSettings) -> Result<Option<Arc<Watch>>, RunError> {
    let watched = WatchedCommand { test: None, shard: None, title: "wirebench fuzz".to_owned(), host: host_name() };
    Ok(start_watching(settings, watched)?)
}

fn start_watching(settings: &WatchSettings, watched: WatchedCommand) -> Result<Option<Arc<Watch>>, WatchError> {
    let Some(watch) = Watch::start(settings, watched, say)? else { return Ok(None) };
    for (address, page) in watch.addresses() {
        let what = if page { "the live page" } else { "metrics" };
        let path = if page { "/" } else { "/metrics" };
        say(&format!("{what} on http://{address}{path}"));
    }
    Ok(Some(Arc::new(watch)))
}

/// The command has ended (`outcome`, whatever it was): the watch's last
/// push and its report. A push that did not land is said, and does not
/// change the command's outcome; a report that cannot be written does,
/// when the command had none of its own to report.
pub fn finish_watch<T, E: From<WatchError>>(watch: Option<Arc<Watch>>, outcome: Result<T, E>) -> Result<T, E> {
    let Some(watch) = watch else { return outcome };
    let asked_report = watch.report_path().cloned();
    let ending = watch.finish();
    match &ending {
        Ok(ending) => {
            if let (Some(path), None) = (&asked_report, &ending.report) {
                say(&format!("--report-html: {} not written: the command ended before any figure", path.display()));
            }
            if let (Some(Err(failure)), Some(url)) = (&ending.pushed, &ending.push_url) {
                say(&format!("the last push did not land: {}", failure.explain(url)));
            }
            if let Some(path) = &ending.report {
                say(&format!("report written to {}", path.display()));
            }
        }
        Err(e) if outcome.is_err() => say(&e.to_string()),
        Err(_) => {}
    }
    let ending = ending.map_err(E::from);
    outcome.and_then(|value| ending.map(|_| value))
}

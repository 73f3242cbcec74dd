//! The `search` command's options (`--slo`, `--search-*`), read into the
//! results layer's [`SearchOptions`], and what a search cannot be run with.

use super::cli_error::CliError;
use super::defs;
use super::opts::{Opts, INT_MAX};
use super::raw::RawOpt;
use super::{value, Command, GeneralOptions};
use crate::results::search_record::{SearchOptions, SloBound};

/// `search`'s options; on any other command, each one given with a value
/// other than its default is refused (it would do nothing there).
pub(crate) fn search_options(
    opts: &Opts,
    command: Command,
    general: &GeneralOptions,
) -> Result<Option<SearchOptions>, CliError> {
    if command != Command::Search {
        refuse_outside_search(opts)?;
        return Ok(None);
    }
    refuse_beside_search(opts, general)?;
    let mut search = SearchOptions::default();
    let Some(slo) = opts.get("slo") else {
        return Err(CliError::Conflict(
            "search without --slo: give the latency bounds the rate must hold, e.g. --slo=99:5 (p99 at most 5 ms) \
             or --slo=99:5,99.9:20"
                .to_owned(),
        ));
    };
    search.slo = slo_bounds(slo)?;
    let seconds = |key: &str, min: u32, default: u32| -> Result<u32, CliError> {
        Ok(opts.int(key, min, INT_MAX, &format!("a number of seconds >= {min}"))?.unwrap_or(default))
    };
    search.warmup_s = seconds("search_warmup", 0, search.warmup_s)?;
    search.step_s = seconds("search_time", 1, search.step_s)?;
    search.pause_s = seconds("search_pause", 0, search.pause_s)?;
    search.confirm_s = seconds("search_confirm_time", 1, search.confirm_s)?;
    search.max_steps =
        opts.int("search_steps", 3, 1000, "a number of steps from 3 to 1000")?.unwrap_or(search.max_steps);
    if let Some(opt) = opts.get("search_precision") {
        search.precision = percent(opt, 0.1, 50.0)? / 100.0;
    }
    if let Some(opt) = opts.get("search_max_errors") {
        search.max_errors = percent(opt, 0.0, 100.0)? / 100.0;
    }
    if let Some(opt) = opts.get("search_client_share") {
        search.client_share = percent(opt, 0.1, 100.0)? / 100.0;
    }
    Ok(Some(search))
}

/// `--slo=PCT:MS[,PCT:MS...]`; an error names the pair that is not one.
fn slo_bounds(opt: &RawOpt) -> Result<Vec<SloBound>, CliError> {
    let mut bounds = Vec::new();
    for (n, item) in value::list(opt)?.iter().enumerate() {
        let number = |part: Option<&str>| part.and_then(|p| p.trim().parse::<f64>().ok()).filter(|x| x.is_finite());
        let mut parts = item.split(':');
        let (percentile, max_ms, rest) = (number(parts.next()), number(parts.next()), parts.next());
        match (percentile, max_ms, rest) {
            (Some(percentile), Some(max_ms), None) if percentile > 0.0 && percentile < 100.0 && max_ms > 0.0 => {
                bounds.push(SloBound { percentile, max_ms });
            }
            _ => {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: opt.value.clone().unwrap_or_default(),
                    expected: format!(
                        "PERCENTILE:MS pairs such as 99:5,99.9:20, each percentile above 0 and below 100 and each \
                         bound in milliseconds above 0; pair {} is '{item}'",
                        n + 1
                    ),
                })
            }
        }
    }
    if bounds.is_empty() {
        return Err(CliError::MissingValue {
            option: opt.label(),
            expected: "PERCENTILE:MS pairs such as 99:5".into(),
        });
    }
    Ok(bounds)
}

fn percent(opt: &RawOpt, min: f64, max: f64) -> Result<f64, CliError> {
    let expected = format!("a percentage from {min} to {max}");
    let x = value::double(opt, &expected)?;
    if (min..=max).contains(&x) {
        Ok(x)
    } else {
        Err(CliError::InvalidValue { option: opt.label(), value: opt.value.clone().unwrap_or_default(), expected })
    }
}

/// The options a search sets itself, or cannot run with, named with what
/// to do instead.
fn refuse_beside_search(opts: &Opts, general: &GeneralOptions) -> Result<(), CliError> {
    let conflict = |why: String| Err(CliError::Conflict(why));
    let given = |keys: &[&str]| keys.iter().find_map(|k| opts.peek(k).map(RawOpt::label));
    if let Some(time) = given(&["time", "max_time"]) {
        return conflict(format!(
            "{time} with search: each step's length is --search-warmup plus --search-time (the confirming step's \
             --search-confirm-time); drop {time}"
        ));
    }
    if let Some(rate) = given(&["rate", "rate_stages"]) {
        return conflict(format!(
            "{rate} with search: the search sets each step's rate itself; drop {rate}, or use run for a rate of \
             your own"
        ));
    }
    if let Some(events) =
        opts.peek("events").or(opts.peek("max_requests")).filter(|o| o.value.as_deref().map(str::trim) != Some("0"))
    {
        return conflict(format!(
            "{} with search: a step must last its time for its rate to be measured; drop it",
            events.label()
        ));
    }
    if !general.sweep.is_empty() {
        return conflict(
            "a --threads list with search: a search runs one connection count (give --threads=N, enough \
             connections for the rates it will try); run a sweep with run"
                .to_owned(),
        );
    }
    if !general.shard.is_whole() {
        return conflict(format!(
            "--shard={} with search: a search decides each step from one view of the latency, which shards on \
             several hosts do not have; find the rate on one host, or run --rate-stages over the shards and merge \
             their results (docs/shards.md)",
            general.shard
        ));
    }
    Ok(())
}

/// A search option given to another command with a value of its own.
fn refuse_outside_search(opts: &Opts) -> Result<(), CliError> {
    for def in defs::SEARCH {
        let Some(opt) = opts.get(&defs::key(def.name)) else { continue };
        if def.default.is_some() && opt.value.as_deref().map(str::trim) == def.default {
            continue;
        }
        return Err(CliError::NotHere {
            option: opt.label(),
            reason: "applies to the search command only (wirebench TEST --slo=99:5 search; see docs/search.md)"
                .to_owned(),
        });
    }
    Ok(())
}

//! sysbench's general options (`--threads`, `--time`, `--report-*`, ...),
//! with the deprecated aliases 1.0.20 still accepts folded in.

use super::cli_error::CliError;
use super::opts::{master_note, Opts, INT_MAX};
use super::raw::RawOpt;
use super::warnings::StartupWarning;
use super::{shard_args, value, Command, ForcedShutdown, GeneralOptions};
use crate::driver::{Arrival, RateStages, Stage};

/// A general option and the deprecated alias sysbench 1.0.20 still takes
/// for it (`--num-threads` for `--threads`, ...).
struct Aliased {
    modern: &'static str,
    /// As sysbench names it in its warning.
    alias: &'static str,
    min: u32,
    expected: &'static str,
    /// The alias wins when it is above this, its own default, as in
    /// sysbench 1.0.20's `init()`.
    above: u32,
    /// On a 0.4/0.5 command line the alias is the option itself and wins
    /// whatever its value.
    always_on_legacy_lines: bool,
}

const THREADS: Aliased = Aliased {
    modern: "threads",
    alias: "num-threads",
    min: 1,
    expected: "a number of threads >= 1",
    above: 1,
    always_on_legacy_lines: false,
};
const EVENTS: Aliased = Aliased {
    modern: "events",
    alias: "max-requests",
    min: 0,
    expected: "a whole number >= 0",
    above: 0,
    always_on_legacy_lines: true,
};
const TIME: Aliased = Aliased {
    modern: "time",
    alias: "max-time",
    min: 0,
    expected: "a number of seconds >= 0",
    above: 0,
    always_on_legacy_lines: true,
};
const RATE: Aliased = Aliased {
    modern: "rate",
    alias: "tx-rate",
    min: 0,
    expected: "a rate in events per second >= 0 (0 = unlimited)",
    above: 0,
    always_on_legacy_lines: false,
};

impl Aliased {
    /// The value the command line gives, through the alias or the option;
    /// an alias that wins is a note on a 0.4/0.5 line, a warning on a 1.0
    /// line.
    fn read(&self, opts: &Opts, legacy_line: bool, said: &mut Said<'_>) -> Result<Option<u32>, CliError> {
        let modern = opts.int(self.modern, self.min, INT_MAX, self.expected)?;
        let Some(alias) = opts.get(&super::defs::key(self.alias)) else { return Ok(modern) };
        let n = value::u32_in(alias, self.min, INT_MAX, self.expected)?;
        if n > self.above || (legacy_line && self.always_on_legacy_lines) {
            if legacy_line {
                let unlimited = if n == 0 { " (no limit)" } else { "" };
                said.notes.push(format!("legacy {}: --{}={n}{unlimited}", alias.shown(), self.modern));
            } else {
                said.warnings.push(StartupWarning::DeprecatedAlias {
                    alias: self.alias,
                    modern: self.modern,
                    shown: alias.shown(),
                    value: n,
                });
            }
            return Ok(Some(n));
        }
        Ok(modern)
    }
}

/// Where the readers put what they have to say about the command line.
pub(crate) struct Said<'a> {
    pub notes: &'a mut Vec<String>,
    pub warnings: &'a mut Vec<StartupWarning>,
}

/// The general options. A 0.4/0.5 command line keeps 0.4/0.5's limits:
/// 10000 requests unless --max-requests says otherwise, and no time limit
/// unless --max-time sets one.
pub(crate) fn general(
    opts: &Opts,
    legacy_line: bool,
    command: Command,
    mut said: Said<'_>,
) -> Result<GeneralOptions, CliError> {
    let mut general = GeneralOptions::default();
    read_limits(&mut general, opts, legacy_line, command, &mut said)?;
    read_reports(&mut general, opts)?;
    read_the_rest(&mut general, opts, said.notes)?;
    general.shard = shard_args::shard(opts, std::env::var(shard_args::JOB_INDEX_VARIABLE).ok().as_deref())?;
    general.start_at = shard_args::start_at(opts)?;
    if !general.shard.is_whole() && !general.sweep.is_empty() {
        return Err(CliError::Conflict(format!(
            "--shard={} with a --threads list: a sweep is not split between shards yet; run one step per command \
             (see docs/shards.md)",
            general.shard
        )));
    }
    Ok(general)
}

/// `--threads`, `--events`, `--time`, `--rate` and their aliases.
fn read_limits(
    general: &mut GeneralOptions,
    opts: &Opts,
    legacy_line: bool,
    command: Command,
    said: &mut Said<'_>,
) -> Result<(), CliError> {
    let run = command.runs_events();
    // Whether a limit was given at all, before the readers below apply
    // their defaults: --rate-stages sets the run's length itself.
    let time_given = ["time", "max_time"].iter().find_map(|k| opts.peek(k).map(RawOpt::label));
    let events_given =
        ["events", "max_requests"].iter().find_map(|k| opts.peek(k).map(|o| (o.label(), o.value.clone())));
    let steps = thread_steps(opts)?;
    if let Some(&largest) = steps.iter().max() {
        if let Some(alias) = opts.get("num_threads") {
            return Err(CliError::Conflict(format!(
                "{} and a --threads list: give the connection counts in --threads alone",
                alias.shown()
            )));
        }
        general.threads = largest;
        if steps.len() > 1 {
            general.sweep = steps;
        }
    } else if let Some(threads) = THREADS.read(opts, legacy_line, said)? {
        general.threads = threads;
    }
    match EVENTS.read(opts, legacy_line, said)? {
        Some(n) => general.events = (n > 0).then_some(u64::from(n)),
        None if legacy_line => {
            if run {
                said.notes.push(
                    "no --max-requests: sysbench 0.4/0.5 stopped after its default of 10000 requests, so \
                     --events=10000"
                        .to_owned(),
                );
            }
            general.events = Some(10_000);
        }
        None => {}
    }
    match TIME.read(opts, legacy_line, said)? {
        Some(n) => general.time = (n > 0).then_some(n),
        None if legacy_line => {
            if run {
                said.notes.push("no --max-time: sysbench 0.4/0.5 had no time limit by default, so --time=0".to_owned());
            }
            general.time = None;
        }
        None => {}
    }
    if let Some(rate) = RATE.read(opts, legacy_line, said)? {
        general.rate = (rate > 0).then_some(rate);
    }
    if let Some(opt) = opts.get("rate_stages") {
        let stages = rate_stages(opt)?;
        refuse_beside_stages(general, &opt.label(), time_given, events_given)?;
        general.time = Some(stages.total_secs());
        general.rate_stages = Some(stages);
    }
    if general.events.is_none() && general.time.is_none() {
        said.warnings.push(StartupWarning::NoLimit);
    }
    if let Some(opt) = opts.get("rate_arrival") {
        let choices = [("poisson", Arrival::Poisson), ("fixed", Arrival::Fixed)];
        general.rate_arrival = value::choice(opt, &choices, "poisson or fixed")?;
    }
    Ok(())
}

/// `--rate-stages=RATE:SECONDS[,RATE:SECONDS...]`; an error names the
/// stage that is not one.
fn rate_stages(opt: &RawOpt) -> Result<RateStages, CliError> {
    let invalid = |expected: String| CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected,
    };
    let mut stages = Vec::new();
    for (n, item) in value::list(opt)?.iter().enumerate() {
        let whole = |part: Option<&str>| part.and_then(|p| p.trim().parse::<u32>().ok()).filter(|&v| v <= INT_MAX);
        let mut parts = item.split(':');
        let (rate, secs, rest) = (whole(parts.next()), whole(parts.next()), parts.next());
        let (Some(rate), Some(secs), None) = (rate, secs, rest) else {
            return Err(invalid(format!(
                "RATE:SECONDS pairs such as 0:0,5000:30,5000:60, each a whole number of events per second and of \
                 seconds; stage {} is '{item}'",
                n + 1
            )));
        };
        stages.push(Stage { rate, secs });
    }
    RateStages::new(stages).map_err(|e| invalid(e.to_string()))
}

/// `--rate-stages` gives the target and the run's length; the options that
/// would give them too are refused, naming both and what to do.
fn refuse_beside_stages(
    general: &GeneralOptions,
    stages: &str,
    time_given: Option<String>,
    events_given: Option<(String, Option<String>)>,
) -> Result<(), CliError> {
    let conflict = |why: String| Err(CliError::Conflict(why));
    if let Some(time) = time_given {
        return conflict(format!(
            "{time} with {stages}: the stages set the run's length (their seconds add up to it); drop {time}, or \
             lengthen or add a stage"
        ));
    }
    if let Some(rate) = general.rate {
        return conflict(format!(
            "--rate={rate} with {stages}: --rate is one constant target, the stages a target that changes; give \
             one stage (--rate-stages={rate}:SECONDS) for a constant rate"
        ));
    }
    // --events=0 is no limit, and fine.
    if let Some((events, value)) = events_given.filter(|(_, v)| v.as_deref().map(str::trim) != Some("0")) {
        return conflict(format!(
            "{events}={} with {stages}: the run would stop at that count, at a point of the stages that depends \
             on how fast the server went, and the later stages would not run; drop {events} (the stages' seconds \
             set the run's length)",
            value.unwrap_or_default()
        ));
    }
    if !general.sweep.is_empty() {
        return conflict(format!(
            "a --threads list with {stages}: a sweep is not run under stages; run one --threads count per command"
        ));
    }
    Ok(())
}

/// At most this many steps in a sweep: 1 to 65,536 by doubling is 17.
const MAX_SWEEP_STEPS: usize = 64;

/// `--threads=1,2,4`: the connection counts of a sweep, each once; empty
/// when `--threads` is a single number.
fn thread_steps(opts: &Opts) -> Result<Vec<u32>, CliError> {
    let Some(opt) = opts.peek("threads").filter(|o| o.value.as_deref().is_some_and(|v| v.contains(','))) else {
        return Ok(Vec::new());
    };
    let expected = "a number of threads >= 1, or a list of them such as 1,2,4,8";
    let mut steps = Vec::new();
    for item in value::list(opt)? {
        let item_opt = RawOpt { value: Some(item.trim().to_owned()), ..opt.clone() };
        let threads = value::u32_in(&item_opt, 1, INT_MAX, expected)?;
        if steps.contains(&threads) {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: opt.value.clone().unwrap_or_default(),
                expected: format!("each count once ({threads} is given twice)"),
            });
        }
        steps.push(threads);
    }
    if steps.is_empty() || steps.len() > MAX_SWEEP_STEPS {
        return Err(CliError::InvalidValue {
            option: opt.label(),
            value: opt.value.clone().unwrap_or_default(),
            expected: format!("a list of 1 to {MAX_SWEEP_STEPS} thread counts such as 1,2,4,8"),
        });
    }
    // Marks every occurrence as read.
    opts.get("threads");
    Ok(steps)
}

/// `--report-interval`, `--report-checkpoints`, `--percentile`,
/// `--histogram`.
fn read_reports(general: &mut GeneralOptions, opts: &Opts) -> Result<(), CliError> {
    if let Some(secs) = opts.int("report_interval", 0, INT_MAX, "a number of seconds >= 0")? {
        general.report_interval = (secs > 0).then_some(secs);
    }
    if let Some(opt) = opts.get("report_checkpoints") {
        general.report_checkpoints = checkpoints(opt)?;
    }
    if let Some(opt) = opts.get("percentile") {
        general.percentiles = percentiles(opt)?;
        general.percentile = sysbench_percentile(&general.percentiles);
    }
    general.per_statement = opts.flag("per_statement", general.per_statement)?;
    if let Some(opt) = opts.get("hdr_log") {
        let path = value::text(opt, "FILENAME")?;
        if path.is_empty() {
            return Err(CliError::MissingValue { option: opt.label(), expected: "FILENAME".to_owned() });
        }
        general.hdr_log = Some(path.into());
    }
    general.histogram = opts.flag("histogram", general.histogram)?;
    if general.histogram && general.percentile.is_none() {
        return Err(CliError::Conflict(
            "--histogram cannot be used with --percentile=0 (sysbench refuses it too): drop one".to_owned(),
        ));
    }
    Ok(())
}

/// `--percentile=95` or a list, `50,95,99,99.9`: each above 0 and at most
/// 100, at most 32 of them; `0` alone disables percentiles.
pub(super) fn percentiles(opt: &RawOpt) -> Result<Vec<f64>, CliError> {
    let expected = "a percentile from 1 to 100 or a list such as 50,95,99,99.9 (each above 0 and at most 100), \
                    or 0 to disable percentiles";
    let invalid = || CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected: expected.to_owned(),
    };
    let items = value::list(opt)?;
    if items.len() == 1 && items.first().is_some_and(|v| v.trim().parse::<f64>() == Ok(0.0)) {
        return Ok(Vec::new());
    }
    let mut list = Vec::with_capacity(items.len());
    for item in &items {
        let p: f64 = item.trim().parse().map_err(|_| invalid())?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(invalid());
        }
        list.push(p);
    }
    if list.is_empty() || list.len() > 32 {
        return Err(invalid());
    }
    Ok(list)
}

/// The percentile of sysbench's own report lines, which print it as a
/// whole number: the list's first value when whole, else 95.
pub(super) fn sysbench_percentile(list: &[f64]) -> Option<u8> {
    let first = *list.first()?;
    Some(if first.fract() == 0.0 { first as u8 } else { 95 })
}

/// `--report-checkpoints=10,60`: at most 256, sorted.
fn checkpoints(opt: &RawOpt) -> Result<Vec<u32>, CliError> {
    let mut checkpoints = Vec::new();
    for item in value::list(opt)? {
        let item_opt = RawOpt { value: Some(item), ..opt.clone() };
        checkpoints.push(value::u32_in(&item_opt, 0, INT_MAX, "a list of seconds >= 0, such as 10,60")?);
    }
    if checkpoints.len() > 256 {
        return Err(CliError::InvalidValue {
            option: opt.label(),
            value: opt.value.clone().unwrap_or_default(),
            expected: "at most 256 checkpoints".to_owned(),
        });
    }
    checkpoints.sort_unstable();
    Ok(checkpoints)
}

/// `--forced-shutdown`, `--verbosity`, `--debug`, `--validate`,
/// `--thread-stack-size`, `--sweep-pause`, and sysbench master's `--warmup-time` and
/// `--thread-init-timeout`.
fn read_the_rest(general: &mut GeneralOptions, opts: &Opts, notes: &mut Vec<String>) -> Result<(), CliError> {
    if let Some(opt) = opts.get("forced_shutdown") {
        general.forced_shutdown = forced_shutdown(opt)?;
    }
    if let Some(level) = opts.int("verbosity", 0, 5, "a level from 0 (critical only) to 5 (debug)")? {
        general.verbosity = u8::try_from(level).unwrap_or(general.verbosity);
    }
    general.debug = opts.flag("debug", general.debug)?;
    if general.debug {
        general.verbosity = 5;
    }
    general.validate = opts.flag("validate", general.validate)?;
    if let Some(opt) = opts.get("thread_stack_size") {
        general.thread_stack_size = value::size(opt)?;
    }
    // Read so that --help=off and --version=off count as handled.
    opts.flag("help", false)?;
    opts.flag("version", false)?;
    if let Some(opt) = opts.get("warmup_time") {
        general.warmup_time = value::u32_in(opt, 0, INT_MAX, "a number of seconds >= 0")?;
        notes.push(master_note(opt));
    }
    if let Some(secs) = opts.int("sweep_pause", 0, INT_MAX, "a number of seconds >= 0")? {
        general.sweep_pause = secs;
        if general.sweep.is_empty() && secs > 0 {
            notes.push(format!("--sweep-pause={secs}: ignored, as --threads is not a list"));
        }
    }
    if let Some(opt) = opts.get("thread_init_timeout") {
        general.thread_init_timeout = value::u32_in(opt, 1, INT_MAX, "a number of seconds >= 1")?;
        notes.push(master_note(opt));
    }
    Ok(())
}

/// sysbench's `--forced-shutdown`: `off` (any case), `N` seconds or `N%` of
/// `--time`; an empty value means 5 %.
fn forced_shutdown(opt: &RawOpt) -> Result<ForcedShutdown, CliError> {
    let expected = "off, a number of seconds, or a percentage of --time such as 5%";
    let text = value::text(opt, "off|N|N%")?;
    if text.eq_ignore_ascii_case("off") {
        return Ok(ForcedShutdown::Off);
    }
    if text.is_empty() {
        return Ok(ForcedShutdown::PercentOfTime(5));
    }
    let (number, percent) = match text.strip_suffix('%') {
        Some(number) => (number, true),
        None => (text, false),
    };
    let number_opt = RawOpt { value: Some(number.to_owned()), ..opt.clone() };
    let n = value::u32_in(&number_opt, 0, INT_MAX, expected).map_err(|_| CliError::InvalidValue {
        option: opt.label(),
        value: text.to_owned(),
        expected: expected.to_owned(),
    })?;
    Ok(if percent { ForcedShutdown::PercentOfTime(n) } else { ForcedShutdown::Seconds(n) })
}

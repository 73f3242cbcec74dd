//! From split arguments to an [`Invocation`]: the test and command, which
//! options this command line may take, and every option's value.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use super::defs::{self, OptDef};
use super::error::CliError;
use super::raw::{self, CommandLine, RawOpt};
use super::test_name::{self, TestRef};
use super::{
    legacy, null_server, value, Bench, Command, DbOptions, Dialect, ForcedShutdown, GeneralOptions, Invocation,
    MysqlOptions, RandOptions, Test, TestOptions,
};
use crate::driver::{EngineOptions, IgnoreErrors, IoBackend, PollMode, PsMode};
use crate::rand::Distribution;

const INT_MAX: u32 = i32::MAX as u32;

pub(crate) fn invocation(line: CommandLine) -> Result<Invocation, CliError> {
    let CommandLine { opts, positionals } = line;
    for positional in &positionals {
        if let Some(bare) = &positional.after_bare {
            let takes_value = defs::find(&bare.key).is_some_and(|d| d.kind != defs::Kind::Bool);
            if takes_value {
                return Err(CliError::NotHere {
                    option: bare.label(),
                    reason: format!(
                        "write {}={} (sysbench options take their value after '=', not as the next word)",
                        bare.label(),
                        positional.word
                    ),
                });
            }
        }
    }
    let words: Vec<&str> = positionals.iter().map(|p| p.word.as_str()).collect();
    if let Some((&"null-server", rest)) = words.split_first() {
        return null_server::parse(&opts, rest);
    }
    // sysbench answers --help and --version before looking at anything else.
    if is_set(&opts, "help")? {
        return Ok(Invocation::Help { null_server: false });
    }
    if is_set(&opts, "version")? {
        return Ok(Invocation::Version);
    }

    let mut notes = Vec::new();
    // Config files first, so that the command line wins over them.
    let mut list = Vec::new();
    for opt in opts.iter().filter(|o| o.key == "config_file") {
        let path = value::text(opt, "FILENAME")?;
        list.extend(raw::read_config_file(Path::new(path), &mut notes)?);
    }
    if let Some(opt) = list.iter().find(|o| o.key == "test") {
        return Err(CliError::NotHere { option: opt.label(), reason: "name the test on the command line".to_owned() });
    }
    let test_opt = opts.iter().rev().find(|o| o.key == "test").cloned();
    list.extend(opts.into_iter().filter(|o| o.key != "config_file" && o.key != "test"));

    // With --test (0.4/0.5 style, deprecated in 1.0) the only word is the
    // command; otherwise the words are TESTNAME COMMAND.
    let (test_word, named, rest) = match &test_opt {
        Some(opt) => (value::text(opt, "NAME")?, opt.shown(), words.as_slice()),
        None => match words.split_first() {
            Some((&first, rest)) => (first, first.to_owned(), rest),
            None => return Err(CliError::MissingTest),
        },
    };
    if test_word.starts_with('-') {
        return Err(CliError::UnexpectedArgument(test_word.to_owned()));
    }
    if let Some(extra) = rest.get(1) {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    let test_ref = test_name::resolve(test_word)?;
    let command = match rest.first() {
        None => return Err(CliError::MissingCommand { test: test_word.to_owned() }),
        Some(&word) => Command::from_name(word)
            .ok_or_else(|| CliError::UnknownCommand { command: word.to_owned(), test: test_word.to_owned() })?,
    };
    if let (Some(opt), TestRef::Modern(_)) = (&test_opt, test_ref) {
        notes.push(format!("{} is deprecated (sysbench 1.0.20 warns too): name the test without --test", opt.shown()));
    }

    for opt in &list {
        check_scope(opt, test_ref)?;
    }
    let (test, command) = legacy::apply(test_ref, &named, command, &mut list, &mut notes)?;
    if test == Test::BulkInsert && matches!(command, Command::Help | Command::Prewarm) {
        return Err(CliError::UnsupportedCommand {
            test: test.name().to_owned(),
            command: command.name().to_owned(),
            advice: if command == Command::Help {
                "it has no options of its own; it inserts into tables sbtest1..sbtestN, N = --threads"
            } else {
                "use prepare, run or cleanup"
            },
        });
    }

    let dialect = match test_ref {
        TestRef::Modern(_) => Dialect::V1_0,
        TestRef::Oltp04 => Dialect::V0_4,
        TestRef::Script05(_) => Dialect::V0_5,
    };
    let legacy_form = dialect != Dialect::V1_0;
    let opts = Opts::new(list);
    let mut general = general(&opts, legacy_form, command, &mut notes)?;
    let rand = rand(&opts, &mut notes)?;
    let db = db(&opts)?;
    let mysql = mysql(&opts, &mut notes)?;
    let mut test_options = test_options(&opts, test, command, &mut notes)?;
    // bulk_insert's prepare and cleanup handle one table per thread.
    test_options.threads = general.threads;
    let engine = engine(&opts)?;
    for def in defs::PGSQL {
        if let Some(opt) = opts.get(&defs::key(def.name)) {
            notes.push(format!("{}: ignored (a PostgreSQL driver option; wirebench speaks MySQL only)", opt.shown()));
        }
    }
    if mysql.debug {
        general.verbosity = 5;
    }
    if let Some(opt) = opts.unused() {
        // Every option that passed check_scope is read above; this is a
        // safety net against a table entry without a reader.
        return Err(CliError::NotHere { option: opt.label(), reason: "not supported by wirebench yet".to_owned() });
    }
    Ok(Invocation::Bench(Box::new(Bench {
        test,
        command,
        dialect,
        general,
        rand,
        db,
        mysql,
        test_options,
        engine,
        notes,
    })))
}

fn is_set(opts: &[RawOpt], key: &str) -> Result<bool, CliError> {
    opts.iter().rev().find(|o| o.key == key).map_or(Ok(false), value::boolean)
}

/// Refuses an option this command line cannot take, as sysbench 1.0.20
/// refuses options its script does not define.
fn check_scope(opt: &RawOpt, test_ref: TestRef) -> Result<(), CliError> {
    let key = opt.key.as_str();
    if defs::find(key).is_none() {
        let names = defs::ALL_GROUPS.iter().flat_map(|g| g.iter()).map(|d: &OptDef| d.name);
        return Err(CliError::UnknownOption {
            option: opt.label(),
            suggestion: defs::closest(&opt.name, names).map(|name| format!("--{name}")),
        });
    }
    let TestRef::Modern(test) = test_ref else { return Ok(()) };
    if defs::is_in(defs::LEGACY, key) {
        let hint = match (legacy::modern_hint(key), &opt.value) {
            (Some(hint), Some(value)) if hint.starts_with("--") => format!("use {hint}={value}"),
            (Some(hint), _) => format!("use {hint}"),
            (None, _) => "drop it".to_owned(),
        };
        return Err(CliError::NotHere {
            option: opt.label(),
            reason: format!(
                "a sysbench 0.4/0.5 option, which sysbench 1.0.20 refuses with {test}: {hint}, or name the test \
                 the 0.4/0.5 way (--test=oltp) for a whole 0.4/0.5 command line"
            ),
        });
    }
    let owner = if defs::is_in(defs::RANDOM_POINTS, key) {
        Some(Test::SelectRandomPoints)
    } else if defs::is_in(defs::RANDOM_RANGES, key) {
        Some(Test::SelectRandomRanges)
    } else {
        None
    };
    match owner {
        Some(owner) if owner != test && test != Test::BulkInsert => Err(CliError::NotHere {
            option: opt.label(),
            reason: format!("an option of {owner}, not of {test} (sysbench refuses it too)"),
        }),
        _ => Ok(()),
    }
}

/// The options of one command line, each read at most once; the last one
/// written wins, as in sysbench.
struct Opts {
    list: Vec<RawOpt>,
    used: Vec<Cell<bool>>,
}

impl Opts {
    fn new(list: Vec<RawOpt>) -> Self {
        let used = list.iter().map(|_| Cell::new(false)).collect();
        Opts { list, used }
    }

    fn get(&self, key: &str) -> Option<&RawOpt> {
        let mut found = None;
        for (opt, used) in self.list.iter().zip(&self.used) {
            if opt.key == key {
                used.set(true);
                found = Some(opt);
            }
        }
        found
    }

    /// Every occurrence, in order: sysbench checks each boolean as it
    /// reads it, so `--debug=yes --debug` is refused; wirebench checks every
    /// occurrence of every kind.
    fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a RawOpt> + 'a {
        self.list.iter().zip(&self.used).filter(move |(opt, _)| opt.key == key).map(|(opt, used)| {
            used.set(true);
            opt
        })
    }

    fn unused(&self) -> Option<&RawOpt> {
        self.list.iter().zip(&self.used).find(|(_, used)| !used.get()).map(|(opt, _)| opt)
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, CliError> {
        self.all(key).try_fold(default, |_, o| value::boolean(o))
    }

    fn int(&self, key: &str, min: u32, max: u32, expected: &str) -> Result<Option<u32>, CliError> {
        self.all(key).try_fold(None, |_, o| value::u32_in(o, min, max, expected).map(Some))
    }

    /// A Lua script's numeric option.
    fn whole(&self, key: &str, min: u32, max: u32, expected: &str) -> Result<Option<u32>, CliError> {
        self.all(key).try_fold(None, |_, o| value::whole(o, min, max, expected).map(Some))
    }

    fn text(&self, key: &str) -> Result<Option<String>, CliError> {
        self.get(key).map(|o| value::text(o, "STRING").map(str::to_owned)).transpose()
    }
}

fn alias_note(legacy_form: bool, alias: &RawOpt, modern: &str, value: u32) -> String {
    let unlimited = if value == 0 { " (no limit)" } else { "" };
    if legacy_form {
        format!("legacy {}: --{modern}={value}{unlimited}", alias.shown())
    } else {
        format!("{} is deprecated (sysbench 1.0.20 warns too): --{modern}={value}{unlimited}", alias.shown())
    }
}

/// The general options. The deprecated aliases win when above their
/// defaults, as in sysbench 1.0.20's `init()`. A 0.4/0.5 command line
/// keeps 0.4/0.5's limits: 10000 requests unless --max-requests says
/// otherwise, and no time limit unless --max-time sets one.
fn general(
    opts: &Opts,
    legacy_form: bool,
    command: Command,
    notes: &mut Vec<String>,
) -> Result<GeneralOptions, CliError> {
    let mut general = GeneralOptions::default();
    let count = "a whole number >= 0";

    let threads = opts.int("threads", 1, INT_MAX, "a number of threads >= 1")?;
    let num_threads = opts.get("num_threads");
    general.threads = match num_threads {
        Some(alias) => {
            let n = value::u32_in(alias, 1, INT_MAX, "a number of threads >= 1")?;
            if n > 1 {
                notes.push(alias_note(legacy_form, alias, "threads", n));
                n
            } else {
                threads.unwrap_or(1)
            }
        }
        None => threads.unwrap_or(1),
    };

    let events = opts.int("events", 0, INT_MAX, count)?;
    let max_requests =
        opts.get("max_requests").map(|o| Ok::<_, CliError>((o, value::u32_in(o, 0, INT_MAX, count)?))).transpose()?;
    let events = match (max_requests, events) {
        (Some((alias, n)), _) if n > 0 || legacy_form => {
            notes.push(alias_note(legacy_form, alias, "events", n));
            n
        }
        (_, Some(n)) => n,
        (_, None) if legacy_form => {
            if command == Command::Run {
                notes.push(
                    "no --max-requests: sysbench 0.4/0.5 stopped after its default of 10000 requests, so \
                     --events=10000"
                        .to_owned(),
                );
            }
            10_000
        }
        (_, None) => 0,
    };
    general.events = (events > 0).then_some(u64::from(events));

    let time = opts.int("time", 0, INT_MAX, "a number of seconds >= 0")?;
    let max_time = opts
        .get("max_time")
        .map(|o| Ok::<_, CliError>((o, value::u32_in(o, 0, INT_MAX, "a number of seconds >= 0")?)))
        .transpose()?;
    let time = match (max_time, time) {
        (Some((alias, n)), _) if n > 0 || legacy_form => {
            notes.push(alias_note(legacy_form, alias, "time", n));
            n
        }
        (_, Some(n)) => n,
        (_, None) if legacy_form => {
            if command == Command::Run {
                notes.push("no --max-time: sysbench 0.4/0.5 had no time limit by default, so --time=0".to_owned());
            }
            0
        }
        (_, None) => 10,
    };
    general.time = (time > 0).then_some(time);

    let rate = opts.int("rate", 0, INT_MAX, "a rate in events per second >= 0 (0 = unlimited)")?;
    let tx_rate = opts.get("tx_rate");
    let rate = match tx_rate {
        Some(alias) => {
            let n = value::u32_in(alias, 0, INT_MAX, "a rate in events per second >= 0")?;
            if n > 0 {
                notes.push(alias_note(legacy_form, alias, "rate", n));
                n
            } else {
                rate.unwrap_or(0)
            }
        }
        None => rate.unwrap_or(0),
    };
    general.rate = (rate > 0).then_some(rate);

    general.report_interval =
        opts.int("report_interval", 0, INT_MAX, "a number of seconds >= 0")?.filter(|&secs| secs > 0);
    if let Some(opt) = opts.get("report_checkpoints") {
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
        general.report_checkpoints = checkpoints;
    }

    let percentile = opts.int("percentile", 0, 100, "a percentile from 1 to 100, or 0 to disable it")?.unwrap_or(95);
    general.percentile = u8::try_from(percentile).ok().filter(|&p| p > 0);
    general.histogram = opts.flag("histogram", false)?;
    if general.histogram && general.percentile.is_none() {
        return Err(CliError::Conflict(
            "--histogram cannot be used with --percentile=0 (sysbench refuses it too): drop one".to_owned(),
        ));
    }
    if let Some(opt) = opts.get("forced_shutdown") {
        general.forced_shutdown = forced_shutdown(opt)?;
    }
    general.verbosity = opts
        .int("verbosity", 0, 5, "a level from 0 (critical only) to 5 (debug)")?
        .and_then(|v| u8::try_from(v).ok())
        .unwrap_or(3);
    general.debug = opts.flag("debug", false)?;
    if general.debug {
        general.verbosity = 5;
    }
    general.validate = opts.flag("validate", false)?;
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
    if let Some(opt) = opts.get("thread_init_timeout") {
        general.thread_init_timeout = value::u32_in(opt, 1, INT_MAX, "a number of seconds >= 1")?;
        notes.push(master_note(opt));
    }
    Ok(general)
}

fn master_note(opt: &RawOpt) -> String {
    format!("{}: a sysbench 1.1 (master) option, which sysbench 1.0.20 refuses", opt.shown())
}

/// sysbench's `--forced-shutdown`: `off` (any case), `N` seconds or `N%` of
/// `--time`; an empty value means 5 %.
fn forced_shutdown(opt: &RawOpt) -> Result<ForcedShutdown, CliError> {
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
    let n = value::u32_in(&number_opt, 0, INT_MAX, "off, a number of seconds, or a percentage of --time such as 5%")
        .map_err(|_| CliError::InvalidValue {
            option: opt.label(),
            value: text.to_owned(),
            expected: "off, a number of seconds, or a percentage of --time such as 5%".to_owned(),
        })?;
    Ok(if percent { ForcedShutdown::PercentOfTime(n) } else { ForcedShutdown::Seconds(n) })
}

fn rand(opts: &Opts, notes: &mut Vec<String>) -> Result<RandOptions, CliError> {
    let mut rand = RandOptions::default();
    if let Some(opt) = opts.get("rand_type") {
        let text = value::text(opt, "special")?;
        rand.rand_type = text.parse::<Distribution>().map_err(|_| CliError::InvalidValue {
            option: opt.label(),
            value: text.to_owned(),
            expected: "uniform, gaussian, special or pareto (or zipfian, from sysbench master)".to_owned(),
        })?;
        if rand.rand_type == Distribution::Zipfian {
            notes.push(format!("{}: zipfian is a sysbench 1.1 (master) distribution, refused by 1.0.20", opt.shown()));
        }
    }
    if let Some(n) = opts.int("rand_spec_iter", 1, INT_MAX, "a number of iterations >= 1")? {
        rand.spec_iter = n;
    }
    if let Some(n) = opts.int("rand_spec_pct", 0, 100, "a percentage from 0 to 100")? {
        rand.spec_pct = n;
    }
    if let Some(n) = opts.int("rand_spec_res", 0, 100, "a percentage from 0 to 100")? {
        rand.spec_res = n;
    }
    if let Some(opt) = opts.get("rand_seed") {
        let seed = value::int(opt, i64::from(i32::MIN), i64::from(i32::MAX), "a seed (0 = from the time)")?;
        rand.seed = i32::try_from(seed).unwrap_or(0);
    }
    if let Some(opt) = opts.get("rand_pareto_h") {
        let h = value::double(opt, "a number strictly between 0 and 1, such as 0.2")?;
        if !(h > 0.0 && h < 1.0) {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: opt.value.clone().unwrap_or_default(),
                expected: "a number strictly between 0 and 1, such as 0.2".to_owned(),
            });
        }
        rand.pareto_h = h;
    }
    if let Some(opt) = opts.get("rand_zipfian_exp") {
        let e = value::double(opt, "an exponent >= 0, such as 0.8")?;
        if e < 0.0 {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: opt.value.clone().unwrap_or_default(),
                expected: "an exponent >= 0, such as 0.8".to_owned(),
            });
        }
        rand.zipfian_exp = e;
        notes.push(master_note(opt));
    }
    Ok(rand)
}

fn db(opts: &Opts) -> Result<DbOptions, CliError> {
    if let Some(opt) = opts.get("db_driver") {
        let driver = value::text(opt, "mysql")?;
        if driver != "mysql" {
            return Err(CliError::NotHere {
                option: opt.shown(),
                reason: "wirebench speaks only the MySQL/MariaDB protocol: use --db-driver=mysql or drop the option"
                    .to_owned(),
            });
        }
    }
    let ps_mode = match opts.get("db_ps_mode") {
        None => PsMode::Auto,
        Some(opt) => match value::text(opt, "auto|disable")? {
            "auto" => PsMode::Auto,
            "disable" => PsMode::Disable,
            other => {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: other.to_owned(),
                    expected: "auto or disable".to_owned(),
                })
            }
        },
    };
    Ok(DbOptions { ps_mode, debug: opts.flag("db_debug", false)? })
}

fn mysql(opts: &Opts, notes: &mut Vec<String>) -> Result<MysqlOptions, CliError> {
    let mut mysql = MysqlOptions::default();
    if let Some(opt) = opts.get("mysql_host") {
        mysql.hosts = value::list(opt)?;
        if mysql.hosts.is_empty() {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: String::new(),
                expected: "one or more hosts, such as 127.0.0.1 or db1,db2".to_owned(),
            });
        }
    }
    if let Some(opt) = opts.get("mysql_port") {
        let expected = "one or more ports from 1 to 65535, such as 3306 or 3306,3307";
        let ports = value::list(opt)?
            .iter()
            .map(|port| port.trim().parse::<u16>().ok().filter(|&p| p > 0))
            .collect::<Option<Vec<u16>>>()
            .filter(|ports| !ports.is_empty());
        mysql.ports = ports.ok_or_else(|| CliError::InvalidValue {
            option: opt.label(),
            value: opt.value.clone().unwrap_or_default(),
            expected: expected.to_owned(),
        })?;
    }
    if let Some(opt) = opts.get("mysql_socket") {
        mysql.sockets = value::list(opt)?.into_iter().map(PathBuf::from).collect();
    }
    if let Some(user) = opts.text("mysql_user")? {
        mysql.user = user;
    }
    if let Some(password) = opts.text("mysql_password")? {
        mysql.password = password;
    }
    if let Some(db) = opts.text("mysql_db")? {
        mysql.db = db;
    }
    if let Some(opt) = opts.get("mysql_ssl") {
        mysql.ssl = value::ssl_mode(opt)?;
        if value::boolean(opt).is_err() {
            notes.push(format!("{}: a sysbench 1.1 (master) value, which sysbench 1.0.20 refuses", opt.shown()));
        }
    }
    if let Some(cipher) = opts.text("mysql_ssl_cipher")? {
        mysql.ssl_cipher = cipher;
    }
    for (key, slot) in [
        ("mysql_ssl_key", &mut mysql.ssl_key),
        ("mysql_ssl_cert", &mut mysql.ssl_cert),
        ("mysql_ssl_ca", &mut mysql.ssl_ca),
    ] {
        if let Some(opt) = opts.get(key) {
            *slot = Some(PathBuf::from(value::text(opt, "FILE")?));
            notes.push(master_note(opt));
        }
    }
    mysql.compression = opts.flag("mysql_compression", false)?;
    mysql.debug = opts.flag("mysql_debug", false)?;
    if let Some(opt) = opts.get("mysql_ignore_errors") {
        let items = value::list(opt)?;
        mysql.ignore_errors = if items.iter().any(|item| item == "all") {
            IgnoreErrors::All
        } else {
            let codes = items.iter().map(|item| item.trim().parse::<u16>().ok()).collect::<Option<Vec<u16>>>();
            IgnoreErrors::List(codes.ok_or_else(|| CliError::InvalidValue {
                option: opt.label(),
                value: opt.value.clone().unwrap_or_default(),
                expected: "error numbers such as 1213,1020,1205, or all".to_owned(),
            })?)
        };
    }
    mysql.dry_run = opts.flag("mysql_dry_run", false)?;
    Ok(mysql)
}

/// Which test options a test's `event()` reads; the others only matter to
/// `prepare` or not at all.
fn run_time_options(test: Test) -> &'static [&'static str] {
    match test {
        Test::OltpReadWrite => &[
            "point_selects",
            "simple_ranges",
            "sum_ranges",
            "order_ranges",
            "distinct_ranges",
            "range_size",
            "range_selects",
            "index_updates",
            "non_index_updates",
            "delete_inserts",
            "skip_trx",
        ],
        Test::OltpReadOnly => &[
            "point_selects",
            "simple_ranges",
            "sum_ranges",
            "order_ranges",
            "distinct_ranges",
            "range_size",
            "range_selects",
            "skip_trx",
        ],
        Test::OltpWriteOnly => &["index_updates", "non_index_updates", "delete_inserts", "skip_trx"],
        Test::OltpPointSelect => &["point_selects"],
        Test::OltpUpdateIndex => &["index_updates"],
        Test::OltpUpdateNonIndex => &["non_index_updates"],
        Test::OltpDelete => &[],
        Test::OltpInsert => &["auto_inc"],
        Test::SelectRandomPoints => &["random_points"],
        Test::SelectRandomRanges => &["number_of_ranges", "delta"],
        Test::BulkInsert => &[],
    }
}

/// Options that shape the tables `prepare` creates: never "ignored".
const PREPARE_OPTIONS: [&str; 7] = [
    "tables",
    "table_size",
    "auto_inc",
    "secondary",
    "create_secondary",
    "mysql_storage_engine",
    "create_table_options",
];

fn test_options(opts: &Opts, test: Test, command: Command, notes: &mut Vec<String>) -> Result<TestOptions, CliError> {
    let mut t = TestOptions::default();
    let count = "a whole number >= 0";
    if let Some(n) = opts.whole("tables", 1, INT_MAX, "a number of tables >= 1")? {
        t.tables = n;
    }
    if let Some(opt) = opts.get("table_size") {
        let reads_ids = !matches!(test, Test::OltpInsert | Test::BulkInsert) && command == Command::Run;
        let min = u32::from(reads_ids);
        t.table_size = value::whole(
            opt,
            min,
            INT_MAX,
            if reads_ids { "a number of rows from 1 to 2147483647" } else { "a number of rows from 0 to 2147483647" },
        )?;
    }
    for (key, slot) in [
        ("range_size", &mut t.range_size),
        ("point_selects", &mut t.point_selects),
        ("simple_ranges", &mut t.simple_ranges),
        ("sum_ranges", &mut t.sum_ranges),
        ("order_ranges", &mut t.order_ranges),
        ("distinct_ranges", &mut t.distinct_ranges),
        ("index_updates", &mut t.index_updates),
        ("non_index_updates", &mut t.non_index_updates),
        ("delete_inserts", &mut t.delete_inserts),
    ] {
        if let Some(n) = opts.whole(key, 0, INT_MAX, count)? {
            *slot = n;
        }
    }
    if let Some(n) = opts.whole("delta", 0, INT_MAX, count)? {
        t.delta = i64::from(n);
    }
    // A prepared statement takes at most 65535 parameters.
    if let Some(n) = opts.whole("random_points", 1, 65_535, "a number of points from 1 to 65535")? {
        t.random_points = n;
    }
    if let Some(n) = opts.whole("number_of_ranges", 1, 32_767, "a number of ranges from 1 to 32767")? {
        t.number_of_ranges = n;
    }
    t.range_selects = opts.flag("range_selects", t.range_selects)?;
    t.auto_inc = opts.flag("auto_inc", t.auto_inc)?;
    t.skip_trx = opts.flag("skip_trx", t.skip_trx)?;
    t.secondary = opts.flag("secondary", t.secondary)?;
    t.create_secondary = opts.flag("create_secondary", t.create_secondary)?;
    if let Some(opt) = opts.get("mysql_storage_engine") {
        let engine = value::text(opt, "innodb")?;
        if engine.is_empty() || !engine.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CliError::InvalidValue {
                option: opt.label(),
                value: engine.to_owned(),
                expected: "a storage engine name such as innodb".to_owned(),
            });
        }
        t.mysql_storage_engine = engine.to_owned();
    }
    if let Some(opt) = opts.get("create_table_options") {
        t.mysql_table_options = value::text(opt, "OPTIONS")?.to_owned();
        // The 0.4/0.5 spellings (--mysql-create-options, ...) have their note.
        if !opt.name.starts_with("mysql") {
            notes.push(master_note(opt));
        }
    }
    if let Some(opt) = opts.get("pgsql_variant") {
        notes.push(format!("{}: ignored (PostgreSQL only)", opt.shown()));
    }

    if test == Test::OltpPointSelect {
        if let Some(opt) = opts.get("point_selects").filter(|_| t.point_selects != 1) {
            notes.push(format!(
                "{}: oltp_point_select runs 1 point select per event whatever it says, as in sysbench",
                opt.shown()
            ));
        }
        t.point_selects = 1;
    }
    if matches!(test, Test::SelectRandomPoints | Test::SelectRandomRanges) && t.tables > 1 {
        match command {
            Command::Cleanup => {
                return Err(CliError::Conflict(format!(
                    "{test} does not support --tables > 1 (sysbench's cleanup refuses it too): clean up with \
                     oltp_read_write cleanup --tables={}",
                    t.tables
                )))
            }
            Command::Run => notes.push(format!("--tables={}: {test} reads only sbtest1, as in sysbench", t.tables)),
            Command::Prepare | Command::Prewarm | Command::Help => {}
        }
    }
    if command == Command::Run {
        let used = run_time_options(test);
        for def in defs::OLTP.iter().chain(defs::RANDOM_POINTS).chain(defs::RANDOM_RANGES) {
            let key = defs::key(def.name);
            if used.contains(&key.as_str()) || PREPARE_OPTIONS.contains(&key.as_str()) || key == "pgsql_variant" {
                continue;
            }
            if test == Test::OltpPointSelect && key == "point_selects" {
                continue;
            }
            if let Some(opt) = opts.list.iter().rev().find(|o| o.key == key) {
                notes.push(format!("{}: ignored by {test}, as in sysbench", opt.shown()));
            }
        }
    }
    Ok(t)
}

fn engine(opts: &Opts) -> Result<EngineOptions, CliError> {
    let mut engine = EngineOptions::default();
    if let Some(opt) = opts.get("cpus") {
        engine.cpus = Some(value::cpu_list(opt)?);
    }
    if let Some(opt) = opts.get("io") {
        engine.io = match value::text(opt, "auto|uring|epoll")? {
            "auto" => IoBackend::Auto,
            "uring" | "io_uring" => IoBackend::Uring,
            "epoll" => IoBackend::Epoll,
            other => {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: other.to_owned(),
                    expected: "auto, uring or epoll".to_owned(),
                })
            }
        };
    }
    if let Some(opt) = opts.get("poll") {
        engine.poll = match value::text(opt, "sleep|adaptive|spin")? {
            "sleep" => PollMode::Sleep,
            "adaptive" => PollMode::Adaptive,
            "spin" => PollMode::Spin,
            other => {
                return Err(CliError::InvalidValue {
                    option: opt.label(),
                    value: other.to_owned(),
                    expected: "sleep, adaptive or spin".to_owned(),
                })
            }
        };
    }
    if let Some(n) = opts.int("pipeline", 1, 65_536, "a number of events in flight per connection >= 1")? {
        engine.pipeline = n;
    }
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::raw::split;

    /// Every option in the tables has a reader: none falls through to the
    /// "not supported" safety net.
    #[test]
    fn every_defined_option_is_read() {
        for group in defs::ALL_GROUPS {
            for def in *group {
                let value = match def.kind {
                    defs::Kind::Bool => None,
                    defs::Kind::File => continue,
                    defs::Kind::Int | defs::Kind::Double | defs::Kind::Size => Some("1"),
                    defs::Kind::String | defs::Kind::List => Some("x"),
                };
                let option = match value {
                    Some(value) => format!("--{}={value}", def.name),
                    None => format!("--{}", def.name),
                };
                let test = if defs::is_in(defs::LEGACY, &defs::key(def.name)) {
                    "--test=oltp"
                } else if defs::is_in(defs::RANDOM_RANGES, &defs::key(def.name)) {
                    "select_random_ranges"
                } else {
                    "select_random_points"
                };
                let args = [test, "run", option.as_str()].map(str::to_owned).to_vec();
                if let Err(err) = invocation(split(args)) {
                    assert!(!err.to_string().contains("not supported by wirebench yet"), "{option}: {err}");
                }
            }
        }
    }
}

//! sysbench's own options as a script reads them in `sysbench.opt`: every
//! general, random-number, log, database and mysql driver option of
//! sysbench 1.0.20, under its name and with the type its `export_options`
//! gives it (numbers, booleans, strings, lists of strings; nothing for
//! `--config-file`). The pgsql driver's options are not there: wirebench
//! has no pgsql driver.

use crate::cli::{Bench, ForcedShutdown, StartupWarning};
use crate::driver::{IgnoreErrors, PsMode};
use crate::lua::OptValue;
use crate::transport::tls::SslMode;

/// The options in `bench`, as sysbench 1.0.20 exports them.
pub(super) fn general_options(bench: &Bench) -> Vec<(String, OptValue)> {
    let mut options = general_opts(bench);
    options.extend(rand_and_log(bench));
    options.extend(database(bench));
    options.extend(mysql(bench));
    options
}

fn number(name: &str, n: f64) -> (String, OptValue) {
    (name.to_owned(), OptValue::Number(n))
}

fn flag_opt(name: &str, b: bool) -> (String, OptValue) {
    (name.to_owned(), OptValue::Bool(b))
}

fn text_opt(name: &str, s: &str) -> (String, OptValue) {
    (name.to_owned(), OptValue::Text(s.to_owned()))
}

fn list_opt<T: ToString>(name: &str, items: &[T]) -> (String, OptValue) {
    (name.to_owned(), OptValue::List(items.iter().map(T::to_string).collect()))
}

/// A deprecated alias holds the value it gave its option (sysbench copies
/// it over), else its own default.
fn alias(bench: &Bench, name: &str, resolved: f64, default: f64) -> (String, OptValue) {
    let given =
        bench.warnings.iter().any(|w| matches!(w, StartupWarning::DeprecatedAlias { alias, .. } if *alias == name));
    number(&name.replace('-', "_"), if given { resolved } else { default })
}

fn general_opts(bench: &Bench) -> Vec<(String, OptValue)> {
    let g = &bench.general;
    let (threads, time) = (f64::from(g.threads), f64::from(g.time.unwrap_or(0)));
    let (events, rate) = (g.events.unwrap_or(0) as f64, f64::from(g.rate.unwrap_or(0)));
    let forced_shutdown = match g.forced_shutdown {
        ForcedShutdown::Off => "off".to_owned(),
        ForcedShutdown::Seconds(s) => s.to_string(),
        ForcedShutdown::PercentOfTime(p) => format!("{p}%"),
    };
    vec![
        number("threads", threads),
        number("events", events),
        number("time", time),
        text_opt("forced_shutdown", &forced_shutdown),
        number("thread_stack_size", g.thread_stack_size as f64),
        number("rate", rate),
        number("report_interval", f64::from(g.report_interval.unwrap_or(0))),
        list_opt("report_checkpoints", &g.report_checkpoints),
        flag_opt("debug", g.debug),
        flag_opt("validate", g.validate),
        flag_opt("help", false),
        flag_opt("version", false),
        alias(bench, "tx-rate", rate, 0.0),
        alias(bench, "max-requests", events, 0.0),
        alias(bench, "max-time", time, 0.0),
        alias(bench, "num-threads", threads, 1.0),
    ]
}

fn rand_and_log(bench: &Bench) -> Vec<(String, OptValue)> {
    let (r, g) = (&bench.rand, &bench.general);
    vec![
        text_opt("rand_type", r.distribution.name()),
        number("rand_spec_iter", f64::from(r.spec_iter)),
        number("rand_spec_pct", f64::from(r.spec_pct)),
        number("rand_spec_res", f64::from(r.spec_res)),
        number("rand_seed", f64::from(r.seed)),
        number("rand_pareto_h", r.pareto_h),
        number("verbosity", f64::from(g.verbosity)),
        number("percentile", f64::from(g.percentile.unwrap_or(0))),
        flag_opt("histogram", g.histogram),
    ]
}

fn database(bench: &Bench) -> Vec<(String, OptValue)> {
    let ps_mode = match bench.db.ps_mode {
        PsMode::Auto => "auto",
        PsMode::Disable => "disable",
    };
    vec![text_opt("db_driver", "mysql"), text_opt("db_ps_mode", ps_mode), flag_opt("db_debug", bench.db.debug)]
}

fn mysql(bench: &Bench) -> Vec<(String, OptValue)> {
    let m = &bench.mysql;
    let sockets: Vec<String> = m.servers.sockets.iter().map(|s| s.display().to_string()).collect();
    let ignore_errors = match &m.ignore_errors {
        IgnoreErrors::All => vec!["all".to_owned()],
        IgnoreErrors::List(codes) => codes.iter().map(u16::to_string).collect(),
    };
    vec![
        list_opt("mysql_host", &m.servers.hosts),
        list_opt("mysql_port", &m.servers.ports),
        list_opt("mysql_socket", &sockets),
        text_opt("mysql_user", &m.user),
        text_opt("mysql_password", &m.password),
        text_opt("mysql_db", &m.db),
        flag_opt("mysql_ssl", m.tls.mode != SslMode::Disabled),
        text_opt("mysql_ssl_cipher", &m.tls.cipher),
        flag_opt("mysql_compression", m.compression),
        flag_opt("mysql_debug", m.debug),
        list_opt("mysql_ignore_errors", &ignore_errors),
        flag_opt("mysql_dry_run", m.dry_run),
    ]
}

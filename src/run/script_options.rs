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
    let mut options = general(bench);
    options.extend(rand_and_log(bench));
    options.extend(database(bench));
    options.extend(mysql(bench));
    options
}

fn number(name: &str, n: f64) -> (String, OptValue) {
    (name.to_owned(), OptValue::Number(n))
}

fn flag(name: &str, b: bool) -> (String, OptValue) {
    (name.to_owned(), OptValue::Bool(b))
}

fn text(name: &str, s: &str) -> (String, OptValue) {
    (name.to_owned(), OptValue::Text(s.to_owned()))
}

fn list<T: ToString>(name: &str, items: &[T]) -> (String, OptValue) {
    (name.to_owned(), OptValue::List(items.iter().map(T::to_string).collect()))
}

/// A deprecated alias holds the value it gave its option (sysbench copies
/// it over), else its own default.
fn alias(bench: &Bench, name: &str, resolved: f64, default: f64) -> (String, OptValue) {
    let given =
        bench.warnings.iter().any(|w| matches!(w, StartupWarning::DeprecatedAlias { alias, .. } if *alias == name));
    number(&name.replace('-', "_"), if given { resolved } else { default })
}

fn general(bench: &Bench) -> Vec<(String, OptValue)> {
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
        text("forced_shutdown", &forced_shutdown),
        number("thread_stack_size", g.thread_stack_size as f64),
        number("rate", rate),
        number("report_interval", f64::from(g.report_interval.unwrap_or(0))),
        list("report_checkpoints", &g.report_checkpoints),
        flag("debug", g.debug),
        flag("validate", g.validate),
        flag("help", false),
        flag("version", false),
        alias(bench, "tx-rate", rate, 0.0),
        alias(bench, "max-requests", events, 0.0),
        alias(bench, "max-time", time, 0.0),
        alias(bench, "num-threads", threads, 1.0),
    ]
}

fn rand_and_log(bench: &Bench) -> Vec<(String, OptValue)> {
    let (r, g) = (&bench.rand, &bench.general);
    vec![
        text("rand_type", r.distribution.name()),
        number("rand_spec_iter", f64::from(r.spec_iter)),
        number("rand_spec_pct", f64::from(r.spec_pct)),
        number("rand_spec_res", f64::from(r.spec_res)),
        number("rand_seed", f64::from(r.seed)),
        number("rand_pareto_h", r.pareto_h),
        number("verbosity", f64::from(g.verbosity)),
        number("percentile", f64::from(g.percentile.unwrap_or(0))),
        flag("histogram", g.histogram),
    ]
}

fn database(bench: &Bench) -> Vec<(String, OptValue)> {
    let ps_mode = match bench.db.ps_mode {
        PsMode::Auto => "auto",
        PsMode::Disable => "disable",
    };
    vec![text("db_driver", "mysql"), text("db_ps_mode", ps_mode), flag("db_debug", bench.db.debug)]
}

fn mysql(bench: &Bench) -> Vec<(String, OptValue)> {
    let m = &bench.mysql;
    let sockets: Vec<String> = m.servers.sockets.iter().map(|s| s.display().to_string()).collect();
    let ignore_errors = match &m.ignore_errors {
        IgnoreErrors::All => vec!["all".to_owned()],
        IgnoreErrors::List(codes) => codes.iter().map(u16::to_string).collect(),
    };
    vec![
        list("mysql_host", &m.servers.hosts),
        list("mysql_port", &m.servers.ports),
        list("mysql_socket", &sockets),
        text("mysql_user", &m.user),
        text("mysql_password", &m.password),
        text("mysql_db", &m.db),
        flag("mysql_ssl", m.tls.mode != SslMode::Disabled),
        text("mysql_ssl_cipher", &m.tls.cipher),
        flag("mysql_compression", m.compression),
        flag("mysql_debug", m.debug),
        list("mysql_ignore_errors", &ignore_errors),
        flag("mysql_dry_run", m.dry_run),
    ]
}

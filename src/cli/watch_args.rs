//! `--metrics-listen`, `--metrics-push`, `--metrics-label`, `--web` and
//! `--report-html`, read into the watch layer's [`WatchSettings`]; and
//! `wirebench report FILE... --html=FILE`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use super::cli_error::CliError;
use super::defs;
use super::opts::Opts;
use super::raw::RawOpt;
use super::result_args::output_path;
use super::{value, Command, Invocation};
use crate::watch::{PushTarget, ReportOptions, SeriesLabel, WatchSettings};

/// The watch options of a command that takes them (`run`, `search`,
/// `fuzz`); refused on the others, which have nothing to watch.
pub(crate) fn watch_settings(opts: &Opts, command: Option<Command>) -> Result<WatchSettings, CliError> {
    let mut settings = WatchSettings::default();
    if let Some(opt) = opts.get("metrics_listen") {
        settings.listen = Some(listen_address(opt)?);
    }
    if let Some(opt) = opts.get("web") {
        settings.web = Some(listen_address(opt)?);
    }
    if let Some(opt) = opts.get("metrics_push") {
        let url = value::text(opt, "URL")?;
        let target = PushTarget::parse(url).map_err(|e| invalid_watch_value(opt, "(hidden)", &e.to_string()))?;
        settings.push = Some(target);
    }
    for opt in opts.every("metrics_label") {
        let text = value::text(opt, "KEY=VALUE")?;
        let label = SeriesLabel::parse(text).map_err(|e| invalid_watch_value(opt, text, &e.to_string()))?;
        if settings.labels.iter().any(|l| l.name == label.name) {
            return Err(CliError::Conflict(format!(
                "--metrics-label names {} twice: give each label once",
                label.name
            )));
        }
        settings.labels.push(label);
    }
    if let Some(opt) = opts.get("report_html") {
        settings.report_html = Some(output_path(opt, "report.html")?);
    }
    match command {
        Some(Command::Prepare | Command::Prewarm | Command::Cleanup) if settings.any() => {
            let given = ["metrics_listen", "metrics_push", "metrics_label", "web", "report_html"];
            let opt = given.iter().find_map(|key| opts.peek(key));
            Err(CliError::NotHere {
                option: opt.map_or_else(|| "--metrics-listen".to_owned(), RawOpt::label),
                reason: "applies to run and search (and fuzz), which have figures to watch".to_owned(),
            })
        }
        _ => Ok(settings),
    }
}

/// `HOST:PORT`, `[V6]:PORT` or `:PORT` (every interface); port 0 takes
/// any free one.
fn listen_address(opt: &RawOpt) -> Result<SocketAddr, CliError> {
    let text = value::text(opt, "HOST:PORT")?.trim();
    let expected = "HOST:PORT, e.g. 127.0.0.1:9464, or :9464 for every interface";
    let spelled = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    let resolved =
        spelled.to_socket_addrs().map_err(|e| invalid_watch_value(opt, text, &format!("{expected} ({e})")))?;
    let mut addresses = resolved;
    addresses.next().ok_or_else(|| invalid_watch_value(opt, text, expected))
}

fn invalid_watch_value(opt: &RawOpt, value: &str, expected: &str) -> CliError {
    CliError::InvalidValue { option: opt.label(), value: value.to_owned(), expected: expected.to_owned() }
}

/// `wirebench report FILE... --html=FILE`.
pub(crate) fn parse_report(opts: &[RawOpt], files: &[&str]) -> Result<Invocation, CliError> {
    if let Some(opt) = opts.iter().find(|o| !defs::is_in(defs::REPORT, &o.key)) {
        let suggestion = defs::closest(&opt.name, defs::REPORT.iter().map(|d| d.name)).map(|n| format!("--{n}"));
        if defs::find(&opt.key).is_some() {
            return Err(CliError::NotHere {
                option: opt.label(),
                reason: "not a report option: report takes --html=FILE, then the result files".to_owned(),
            });
        }
        return Err(CliError::UnknownOption { option: opt.label(), suggestion, written: opt.shown() });
    }
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    if last("help").map_or(Ok(false), value::boolean)? {
        return Ok(Invocation::ReportHelp);
    }
    let Some(html) = last("html") else {
        return Err(CliError::MissingValue { option: "--html".to_owned(), expected: "FILE.html".to_owned() });
    };
    let html = output_path(html, "report.html")?;
    if files.is_empty() {
        return Err(CliError::Conflict(
            "report needs result files: wirebench report RESULTS.json --html=report.html, the file written by \
             `wirebench ... --format=json run > RESULTS.json` (or a run's shards, or `wirebench merge --format=json`)"
                .to_owned(),
        ));
    }
    Ok(Invocation::Report(ReportOptions { files: files.iter().map(PathBuf::from).collect(), html }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::raw::split;

    fn settings(args: &[&str], command: Option<Command>) -> Result<WatchSettings, CliError> {
        let line = split(args.iter().map(|a| (*a).to_owned()).collect());
        watch_settings(&Opts::new(line.opts), command)
    }

    #[test]
    fn the_options_read_into_the_settings() {
        let s = settings(
            &[
                "--metrics-listen=:0",
                "--web=127.0.0.1:8080",
                "--metrics-push=http://u:secret@prom:9090/api/v1/write",
                "--metrics-label=env=ci",
                "--metrics-label=team=db",
                "--report-html=r.html",
            ],
            Some(Command::Run),
        )
        .unwrap();
        assert_eq!(s.listen, Some("0.0.0.0:0".parse().unwrap()));
        assert_eq!(s.web, Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(s.push.as_ref().map(|p| p.shown.as_str()), Some("http://prom:9090/api/v1/write"));
        let labels: Vec<_> = s.labels.iter().map(|l| format!("{}={}", l.name, l.value)).collect();
        assert_eq!(labels, ["env=ci", "team=db"]);
        assert_eq!(s.report_html, Some(PathBuf::from("r.html")));
    }

    #[test]
    fn bad_values_say_what_is_expected() {
        let message = |args: &[&str]| settings(args, Some(Command::Run)).unwrap_err().to_string();
        assert!(message(&["--metrics-listen=nowhere"]).contains("HOST:PORT"), "{}", message(&["--metrics-listen=x"]));
        assert!(message(&["--metrics-push=https://p/api"]).contains("https is not supported"));
        let secret = message(&["--metrics-push=ftp://u:secret@p/"]);
        assert!(!secret.contains("secret"), "{secret}");
        assert!(message(&["--metrics-label=test=x"]).contains("a label wirebench sets itself"));
        assert!(message(&["--metrics-label=a=1", "--metrics-label=a=2"]).contains("names a twice"));
        assert!(message(&["--report-html=/no/such/dir/r.html"]).contains("in a directory that exists"));
        let prepare = settings(&["--web=:0"], Some(Command::Prepare)).unwrap_err().to_string();
        assert!(prepare.starts_with("--web: applies to run and search"), "{prepare}");
    }
}

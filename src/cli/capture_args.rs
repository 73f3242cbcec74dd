//! `wirebench capture import --from=pcap|general-log|slow-log IN --out=FILE
//! [--port=N]` and `wirebench capture info FILE [--format=text|json] [--top=N]`.

use std::path::PathBuf;

use super::cli_error::CliError;
use super::defs::{self, OptDef};
use super::raw::RawOpt;
use super::{value, Invocation};
use crate::capture::{CaptureCommand, ImportFrom, ImportOptions, InfoFormat, InfoOptions};

const USAGE: &str = "wirebench capture import --from=pcap|general-log|slow-log IN --out=FILE [--port=N], or wirebench \
                     capture info FILE [--format=text|json]";

pub(crate) fn parse_capture(opts: &[RawOpt], words: &[&str]) -> Result<Invocation, CliError> {
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    let help = last("help").map_or(Ok(false), value::boolean)?;
    match words.split_first() {
        Some((&"import", rest)) => {
            capture_options_check(opts, defs::CAPTURE_IMPORT, "import takes --from, --out and --port, then IN")?;
            if help {
                return Ok(Invocation::CaptureHelp);
            }
            parse_import(opts, rest).map(|o| Invocation::Capture(CaptureCommand::Import(o)))
        }
        Some((&"info", rest)) => {
            capture_options_check(opts, defs::CAPTURE_INFO, "info takes --format and --top, then FILE")?;
            if help {
                return Ok(Invocation::CaptureHelp);
            }
            parse_info(opts, rest).map(|o| Invocation::Capture(CaptureCommand::Info(o)))
        }
        _ if help => Ok(Invocation::CaptureHelp),
        Some((other, _)) => Err(CliError::Conflict(format!("capture has no command {other:?}: {USAGE}"))),
        None => Err(CliError::Conflict(format!("capture needs a command: {USAGE}"))),
    }
}

/// Every option is one of `group`'s.
fn capture_options_check(opts: &[RawOpt], group: &[OptDef], takes: &str) -> Result<(), CliError> {
    let Some(opt) = opts.iter().find(|o| !defs::is_in(group, &o.key)) else { return Ok(()) };
    if defs::find(&opt.key).is_some()
        || defs::is_in(defs::CAPTURE_IMPORT, &opt.key)
        || defs::is_in(defs::CAPTURE_INFO, &opt.key)
    {
        return Err(CliError::NotHere { option: opt.label(), reason: format!("not an option here: capture {takes}") });
    }
    let suggestion = defs::closest(&opt.name, group.iter().map(|d| d.name)).map(|n| format!("--{n}"));
    Err(CliError::UnknownOption { option: opt.label(), suggestion, written: opt.shown() })
}

/// The one positional file a command takes.
fn one_file(words: &[&str], what: &str) -> Result<PathBuf, CliError> {
    match words {
        [file] => Ok(PathBuf::from(file)),
        [] => Err(CliError::Conflict(format!("capture needs {what}: {USAGE}"))),
        [_, extra, ..] => Err(CliError::UnexpectedArgument((*extra).to_owned())),
    }
}

fn parse_import(opts: &[RawOpt], words: &[&str]) -> Result<ImportOptions, CliError> {
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    let input = one_file(words, "the file to import (IN; - for standard input)")?;
    let from = match last("from") {
        Some(opt) => value::choice(opt, &ImportFrom::NAMES, "pcap, general-log or slow-log")?,
        None => return Err(CliError::Conflict(
            "capture import needs --from: pcap (tcpdump -w, tshark -w), general-log or slow-log (long_query_time=0)"
                .into(),
        )),
    };
    let output = match last("out") {
        Some(opt) => PathBuf::from(value::text(opt, "FILE")?),
        None => return Err(CliError::Conflict("capture import needs --out=FILE, the capture to write".into())),
    };
    if output.as_os_str().is_empty() {
        return Err(CliError::MissingValue { option: "--out".into(), expected: "FILE".into() });
    }
    let port = match last("port") {
        Some(opt) => u16::try_from(value::u32_in(opt, 1, 65_535, "a TCP port from 1 to 65535")?).unwrap_or(3306),
        None => wirebench_capture::import::pcap::DEFAULT_PORT,
    };
    if from != ImportFrom::Pcap && last("port").is_some() {
        return Err(CliError::Conflict("--port is a pcap's: a log names no port, drop it".into()));
    }
    Ok(ImportOptions { from, input, output, port })
}

fn parse_info(opts: &[RawOpt], words: &[&str]) -> Result<InfoOptions, CliError> {
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    let file = one_file(words, "the capture to read (FILE)")?;
    let format = match last("format") {
        Some(opt) => value::choice(opt, &InfoFormat::NAMES, "text or json")?,
        None => InfoFormat::Text,
    };
    let top = match last("top") {
        Some(opt) => value::u32_in(opt, 0, 1_000_000, "a number of statements from 0 to 1000000")? as usize,
        None => 10,
    };
    Ok(InfoOptions { file, format, top })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(list: &[(&str, Option<&str>)]) -> Vec<RawOpt> {
        list.iter().map(|(n, v)| RawOpt::arg(n, *v)).collect()
    }

    #[test]
    fn import_and_info_lines() {
        let parsed = parse_capture(
            &opts(&[("from", Some("pcap")), ("out", Some("c.wbc")), ("port", Some("3307"))]),
            &["import", "x.pcap"],
        )
        .unwrap();
        assert_eq!(
            parsed,
            Invocation::Capture(CaptureCommand::Import(ImportOptions {
                from: ImportFrom::Pcap,
                input: "x.pcap".into(),
                output: "c.wbc".into(),
                port: 3307
            }))
        );
        let parsed = parse_capture(&opts(&[("format", Some("json"))]), &["info", "c.wbc"]).unwrap();
        assert_eq!(
            parsed,
            Invocation::Capture(CaptureCommand::Info(InfoOptions {
                file: "c.wbc".into(),
                format: InfoFormat::Json,
                top: 10
            }))
        );
        assert_eq!(parse_capture(&opts(&[("help", None)]), &[]).unwrap(), Invocation::CaptureHelp);
    }

    #[test]
    fn what_is_refused_says_what_to_write() {
        let refused = |o: &[(&str, Option<&str>)], w: &[&str]| parse_capture(&opts(o), w).unwrap_err().to_string();
        assert!(refused(&[], &[]).contains("needs a command"));
        assert!(refused(&[], &["export"]).contains("no command"));
        assert!(refused(&[("out", Some("c"))], &["import", "x"]).contains("--from"));
        assert!(refused(&[("from", Some("pcap"))], &["import", "x"]).contains("--out"));
        assert!(refused(&[("from", Some("tcpdump")), ("out", Some("c"))], &["import", "x"])
            .contains("pcap, general-log or slow-log"));
        assert!(refused(&[("from", Some("slow-log")), ("out", Some("c")), ("port", Some("1"))], &["import", "x"])
            .contains("--port"));
        assert!(refused(&[("fromm", Some("pcap"))], &["import", "x"]).contains("--from"));
        assert!(refused(&[("threads", Some("4"))], &["info", "x"]).contains("not an option here"));
        assert!(refused(&[("port", Some("1"))], &["info", "x"]).contains("not an option here"));
        assert!(refused(&[], &["info"]).contains("FILE"));
    }
}

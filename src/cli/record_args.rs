//! `wirebench record --listen=ADDR --upstream=HOST:PORT --out=FILE
//! [--cpus=LIST] [--time=N] [--max-size=SIZE] [--ssl-cert=FILE
//! --ssl-key=FILE] [--mysql-ssl*]`, read into the driver's
//! [`RecordOptions`].

use std::path::PathBuf;
use std::time::Duration;

use super::cli_error::CliError;
use super::defs;
use super::into::tls_options;
use super::null_server::listen_addr;
use super::opts::{Opts, INT_MAX};
use super::raw::RawOpt;
use super::watch_args::watch_settings;
use super::{value, Invocation};
use crate::client::Endpoint;
use crate::driver::relay::{ListenAddress, RecordOptions};
use crate::transport::SslMode;

const USAGE: &str = "wirebench record --listen=HOST:PORT|PATH --upstream=HOST:PORT|--upstream-socket=PATH --out=FILE";

/// How long opening a connection upstream may take, by default (as
/// `defs::RECORD` shows it in `--help`).
const CONNECT_TIMEOUT_S: u32 = 10;

pub(crate) fn parse_record(opts: &[RawOpt], words: &[&str]) -> Result<Invocation, CliError> {
    check_record_options(opts)?;
    if opts.iter().rev().find(|o| o.key == "help").map_or(Ok(false), value::boolean)? {
        return Ok(Invocation::RecordHelp);
    }
    if let Some(extra) = words.first() {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    let opts = Opts::new(opts.to_vec());
    let secs = |n: u32| Duration::from_secs(u64::from(n));
    let mut notes = Vec::new();
    let mut upstream_tls = tls_options(&opts, &mut notes)?;
    if opts.peek("mysql_ssl").is_none() {
        // A client that uses TLS gets it upstream too, unless told otherwise.
        upstream_tls.mode = SslMode::Required;
    }
    let options = RecordOptions {
        listen: listen_addresses(&opts)?,
        upstream: upstream(&opts)?,
        out: out_file(&opts)?,
        cpus: opts.get("cpus").map(value::cpu_list).transpose()?,
        time: opts.int("time", 0, INT_MAX, "seconds >= 0 (0: until Ctrl-C)")?.filter(|&t| t > 0).map(secs),
        max_bytes: opts.get("max_size").map(value::size).transpose()?.filter(|&n| n > 0),
        serve_tls: serve_tls(&opts)?,
        upstream_tls,
        connect_timeout: secs(
            opts.int("mysql_connect_timeout", 1, 3600, "seconds from 1 to 3600")?.unwrap_or(CONNECT_TIMEOUT_S),
        ),
    };
    let watch = watch_settings(&opts, None)?;
    let _ = opts.get("help");
    if let Some(opt) = opts.unused() {
        return Err(CliError::NotHere { option: opt.label(), reason: "not read by wirebench record".to_owned() });
    }
    Ok(Invocation::Record(Box::new(options), watch))
}

/// Refuses options record does not take, naming the closest it does.
fn check_record_options(opts: &[RawOpt]) -> Result<(), CliError> {
    let is_record = |key: &str| {
        defs::is_in(defs::RECORD, key)
            || defs::is_in(defs::WATCH, key)
            || defs::RECORD_UPSTREAM.iter().any(|n| defs::key(n) == key)
    };
    let Some(opt) = opts.iter().find(|o| !is_record(&o.key)) else { return Ok(()) };
    let names = defs::RECORD.iter().chain(defs::WATCH).map(|d| d.name).chain(defs::RECORD_UPSTREAM.iter().copied());
    let reason = match defs::closest(&opt.name, names) {
        Some(name) if defs::find(&opt.key).is_none() => format!("unknown option (did you mean --{name}?)"),
        _ => "not an option of record: `wirebench record --help` lists its options".to_owned(),
    };
    Err(CliError::NotHere { option: opt.label(), reason })
}

/// `--listen`, once or more: a TCP address, or a unix socket's path (a
/// value with a `/`).
fn listen_addresses(opts: &Opts) -> Result<Vec<ListenAddress>, CliError> {
    let mut addresses = Vec::new();
    for text in opts.texts("listen") {
        let address = if text.contains('/') {
            Some(ListenAddress::Unix(PathBuf::from(&text)))
        } else {
            listen_addr(&text).map(ListenAddress::Tcp)
        };
        addresses.push(address.ok_or_else(|| {
            CliError::InvalidValue {
                option: "--listen".to_owned(),
                value: text.clone(),
                expected: "an address such as 127.0.0.1:3307, [::1]:3307, 0.0.0.0:3307 or a bare port (on 127.0.0.1), \
                       or a unix socket's path (with a /, e.g. ./record.sock)"
                    .to_owned(),
            }
        })?);
    }
    if addresses.is_empty() {
        return Err(CliError::Conflict(format!(
            "record needs somewhere to listen: --listen=127.0.0.1:3307 (the applications connect there): {USAGE}"
        )));
    }
    Ok(addresses)
}

/// `--upstream=HOST:PORT` (a bare host: port 3306) or `--upstream-socket=PATH`.
fn upstream(opts: &Opts) -> Result<Endpoint, CliError> {
    match (opts.get("upstream"), opts.get("upstream_socket")) {
        (Some(_), Some(_)) => {
            Err(CliError::Conflict("--upstream and --upstream-socket name the server twice: give one".to_owned()))
        }
        (None, None) => Err(CliError::Conflict(format!("record needs the server it forwards to: {USAGE}"))),
        (None, Some(opt)) => match value::text(opt, "PATH")? {
            "" => Err(CliError::MissingValue { option: opt.label(), expected: "PATH".to_owned() }),
            path => Ok(Endpoint::unix(path)),
        },
        (Some(opt), None) => {
            let text = value::text(opt, "HOST:PORT")?;
            upstream_address(text).ok_or_else(|| CliError::InvalidValue {
                option: opt.label(),
                value: text.to_owned(),
                expected: "HOST:PORT, e.g. 127.0.0.1:3306, db1:3306 or [::1]:3306 (a bare host: port 3306)".to_owned(),
            })
        }
    }
}

fn upstream_address(text: &str) -> Option<Endpoint> {
    let text = text.trim();
    let (host, port) = if let Some(bracketed) = text.strip_prefix('[') {
        let (host, after) = bracketed.split_once(']')?;
        (host, if after.is_empty() { 3306 } else { after.strip_prefix(':')?.parse().ok()? })
    } else if text.matches(':').count() > 1 {
        (text, 3306)
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, port.parse().ok()?),
            None => (text, 3306),
        }
    };
    (port > 0 && !host.is_empty() && !host.contains(['/', ' '])).then(|| Endpoint::tcp(host, port))
}

fn out_file(opts: &Opts) -> Result<PathBuf, CliError> {
    match opts.get("out") {
        Some(opt) => match value::text(opt, "FILE")? {
            "" => Err(CliError::MissingValue { option: opt.label(), expected: "FILE".to_owned() }),
            path => Ok(PathBuf::from(path)),
        },
        None => Err(CliError::Conflict("record needs --out=FILE, the capture to write".to_owned())),
    }
}

/// `--ssl-cert` and `--ssl-key`: both, or neither.
fn serve_tls(opts: &Opts) -> Result<Option<(PathBuf, PathBuf)>, CliError> {
    let file = |key: &str| -> Result<Option<PathBuf>, CliError> {
        opts.get(key).map(|opt| value::text(opt, "FILE").map(PathBuf::from)).transpose()
    };
    match (file("ssl_cert")?, file("ssl_key")?) {
        (Some(cert), Some(key)) => Ok(Some((cert, key))),
        (None, None) => Ok(None),
        _ => Err(CliError::Conflict(
            "--ssl-cert and --ssl-key go together: the certificate record serves to clients that use TLS, and its \
             key"
            .to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(list: &[(&str, Option<&str>)]) -> Result<RecordOptions, String> {
        let opts: Vec<RawOpt> = list.iter().map(|(n, v)| RawOpt::arg(n, *v)).collect();
        match parse_record(&opts, &[]) {
            Ok(Invocation::Record(options, _)) => Ok(*options),
            Ok(other) => Err(format!("{other:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    const BASE: [(&str, Option<&str>); 3] =
        [("listen", Some("3307")), ("upstream", Some("db1:3306")), ("out", Some("app.wbc"))];

    #[test]
    fn a_whole_line() {
        let mut line = BASE.to_vec();
        line.extend([
            ("listen", Some("/tmp/rec.sock")),
            ("time", Some("60")),
            ("max-size", Some("2G")),
            ("cpus", Some("0-1")),
            ("ssl-cert", Some("c.pem")),
            ("ssl-key", Some("k.pem")),
        ]);
        let options = parse(&line).unwrap();
        assert_eq!(
            options.listen,
            [ListenAddress::Tcp("127.0.0.1:3307".parse().unwrap()), ListenAddress::Unix("/tmp/rec.sock".into())]
        );
        assert_eq!(options.upstream, Endpoint::tcp("db1", 3306));
        assert_eq!((options.time, options.max_bytes), (Some(Duration::from_secs(60)), Some(2 << 30)));
        assert_eq!(options.cpus, Some(vec![0, 1]));
        assert_eq!(options.serve_tls, Some(("c.pem".into(), "k.pem".into())));
        assert_eq!(options.upstream_tls.mode, SslMode::Required);
        assert_eq!(options.connect_timeout, Duration::from_secs(10));
    }

    #[test]
    fn upstreams() {
        assert_eq!(upstream_address("127.0.0.1:3480"), Some(Endpoint::tcp("127.0.0.1", 3480)));
        assert_eq!(upstream_address("[::1]:3307"), Some(Endpoint::tcp("::1", 3307)));
        assert_eq!(upstream_address("db1"), Some(Endpoint::tcp("db1", 3306)));
        assert_eq!(upstream_address("db1:0"), None);
        assert_eq!(upstream_address("db1:x"), None);
        let mut line = BASE.to_vec();
        line[1] = ("upstream-socket", Some("/run/mysqld/mysqld.sock"));
        assert_eq!(parse(&line).unwrap().upstream, Endpoint::unix("/run/mysqld/mysqld.sock"));
        let mut off = BASE.to_vec();
        off.push(("mysql-ssl", Some("off")));
        assert_eq!(parse(&off).unwrap().upstream_tls.mode, SslMode::Disabled);
    }

    #[test]
    fn what_is_refused_says_what_to_write() {
        let refused = |drop: usize, extra: &[(&str, Option<&str>)]| {
            let mut line: Vec<_> = BASE.iter().enumerate().filter(|(i, _)| *i != drop).map(|(_, o)| *o).collect();
            line.extend_from_slice(extra);
            parse(&line).unwrap_err()
        };
        assert!(refused(0, &[]).contains("--listen=127.0.0.1:3307"));
        assert!(refused(1, &[]).contains("the server it forwards to"));
        assert!(refused(2, &[]).contains("--out=FILE"));
        assert!(refused(9, &[("upstream-socket", Some("/s"))]).contains("give one"));
        assert!(refused(9, &[("ssl-cert", Some("c.pem"))]).contains("go together"));
        assert!(refused(9, &[("threads", Some("4"))]).contains("not an option of record"));
        assert!(refused(9, &[("upstrem", Some("x"))]).contains("did you mean --upstream"));
        assert!(refused(9, &[("listen", Some("example.com:3307"))]).contains("unix socket's path"));
    }
}

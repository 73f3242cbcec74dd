//! `wirebench null-server --listen=ADDR --socket=PATH --cpus=LIST --delay-us=N --wait-timeout=S`.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use super::cli_error::CliError;
use super::defs;
use super::raw::RawOpt;
use super::{value, Invocation, NullServerOptions};

const ADDRESS: &str =
    "one address such as 127.0.0.1:3307, [::1]:3307 or a bare port (on 127.0.0.1); the null server listens on one TCP address (and --socket)";

pub(crate) fn parse_null_server(opts: &[RawOpt], words: &[&str]) -> Result<Invocation, CliError> {
    if let Some(extra) = words.first() {
        return Err(CliError::UnexpectedArgument((*extra).to_owned()));
    }
    for opt in opts {
        if defs::is_in(defs::NULL_SERVER, &opt.key) {
            continue;
        }
        if defs::find(&opt.key).is_some() {
            return Err(CliError::NotHere {
                option: opt.label(),
                reason: "not a null-server option: null-server takes --listen, --socket, --cpus, --delay-us, \
                         --wait-timeout and --serial"
                    .to_owned(),
            });
        }
        return Err(CliError::UnknownOption {
            option: opt.label(),
            suggestion: defs::closest(&opt.name, defs::NULL_SERVER.iter().map(|d| d.name)).map(|n| format!("--{n}")),
            written: opt.shown(),
        });
    }
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    if last("help").map_or(Ok(false), value::boolean)? {
        return Ok(Invocation::Help { null_server: true });
    }
    let mut options =
        NullServerOptions { listen: None, socket: None, cpus: None, delay_us: 0, wait_timeout_s: 0, serial: false };
    if let Some(opt) = last("listen") {
        let text = value::text(opt, "ADDR")?;
        let addr = listen_addr(text).ok_or_else(|| CliError::InvalidValue {
            option: opt.label(),
            value: text.to_owned(),
            expected: ADDRESS.to_owned(),
        })?;
        options.listen = Some(addr);
    }
    if let Some(opt) = last("socket") {
        let path = value::text(opt, "PATH")?;
        if path.is_empty() {
            return Err(CliError::MissingValue { option: opt.label(), expected: "PATH".to_owned() });
        }
        options.socket = Some(PathBuf::from(path));
    }
    if let Some(opt) = last("cpus") {
        options.cpus = Some(value::cpu_list(opt)?);
    }
    if let Some(opt) = last("delay_us") {
        options.delay_us = value::u32_in(opt, 0, 60_000_000, "microseconds from 0 to 60000000")?.into();
    }
    if let Some(opt) = last("wait_timeout") {
        options.wait_timeout_s = value::u32_in(opt, 0, 31_536_000, "seconds from 0 (never) to 31536000")?.into();
    }
    if let Some(opt) = last("serial") {
        options.serial = value::boolean(opt)?;
        if options.serial && options.delay_us == 0 {
            return Err(CliError::Conflict(
                "--serial without --delay-us: give each command its service time, e.g. --serial --delay-us=4000 \
                 for a server that holds 250 commands per second"
                    .to_owned(),
            ));
        }
    }
    if options.listen.is_none() && options.socket.is_none() {
        return Err(CliError::Conflict(
            "null-server needs somewhere to listen: --listen=127.0.0.1:3307 and/or --socket=/tmp/null.sock".to_owned(),
        ));
    }
    Ok(Invocation::NullServer(options))
}

pub(super) fn listen_addr(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(addr);
    }
    let port = text.strip_prefix("localhost:").or_else(|| text.strip_prefix(':')).unwrap_or(text);
    port.parse::<u16>().ok().map(|port| SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(listen_addr("127.0.0.1:3307"), Some("127.0.0.1:3307".parse().unwrap()));
        assert_eq!(listen_addr("[::1]:3307"), Some("[::1]:3307".parse().unwrap()));
        assert_eq!(listen_addr("3307"), Some("127.0.0.1:3307".parse().unwrap()));
        assert_eq!(listen_addr(":3307"), Some("127.0.0.1:3307".parse().unwrap()));
        assert_eq!(listen_addr("localhost:3307"), Some("127.0.0.1:3307".parse().unwrap()));
        assert_eq!(listen_addr("example.com:3307"), None);
        assert_eq!(listen_addr("70000"), None);
    }
}

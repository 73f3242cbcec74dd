//! `--shard=I/N`, `--shards=N` and `--start-at=TIME`: this instance's part
//! of a run spread over several client hosts, and the instant they all
//! start at. A Kubernetes Indexed Job gives each pod its index in
//! `JOB_COMPLETION_INDEX`, so `--shards=N` alone is enough there.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::cli_error::CliError;
use super::opts::Opts;
use super::raw::RawOpt;
use super::value;
use crate::driver::Shard;

/// The variable a Kubernetes Indexed Job sets to each pod's index.
pub(crate) const JOB_INDEX_VARIABLE: &str = "JOB_COMPLETION_INDEX";

/// `--shard=I/N`; or `--shards=N` with the index from `job_index` (the
/// value of [`JOB_INDEX_VARIABLE`]); or the whole run.
pub(crate) fn shard(opts: &Opts, job_index: Option<&str>) -> Result<Shard, CliError> {
    let count = match opts.get("shards") {
        Some(opt) => Some(value::u32_in(opt, 1, 1 << 20, "a number of shards >= 1")?),
        None => None,
    };
    if let Some(opt) = opts.get("shard") {
        let given = shard_value(opt)?;
        return match count {
            Some(count) if count != given.count() => Err(CliError::Conflict(format!(
                "--shard={given} and --shards={count} disagree on the number of shards: give one of them (see docs/shards.md)"
            ))),
            _ => Ok(given),
        };
    }
    let Some(count) = count else { return Ok(Shard::WHOLE) };
    let Some(index) = job_index else {
        return Err(CliError::Conflict(format!(
            "--shards={count} needs this instance's index: add --shard=I/{count} (I from 0 to {}), or set \
             {JOB_INDEX_VARIABLE} as a Kubernetes Indexed Job does (see docs/shards.md)",
            count - 1
        )));
    };
    let index: u32 = index.trim().parse().map_err(|_| CliError::Environment {
        variable: JOB_INDEX_VARIABLE,
        message: format!("'{index}' is not a shard index (a whole number from 0); unset it or give --shard=I/{count}"),
    })?;
    Shard::new(index, count).map_err(|e| CliError::Environment { variable: JOB_INDEX_VARIABLE, message: e.to_string() })
}

/// `I/N`, I from 0.
fn shard_value(opt: &RawOpt) -> Result<Shard, CliError> {
    let text = value::text(opt, "I/N")?;
    let invalid = |expected: String| CliError::InvalidValue { option: opt.label(), value: text.to_owned(), expected };
    let (index, count) =
        text.split_once('/').ok_or_else(|| invalid("I/N, such as 0/3 (shards count from 0)".into()))?;
    let index: u32 = index.trim().parse().map_err(|_| invalid("I/N with I a whole number from 0".into()))?;
    let count: u32 = count.trim().parse().map_err(|_| invalid("I/N with N a whole number of shards".into()))?;
    Shard::new(index, count).map_err(|e| invalid(format!("I/N with I from 0 to N-1: {e}")))
}

/// `--start-at`: Unix seconds (`1767225600`, `1767225600.25`) or RFC 3339
/// (`2026-01-01T00:00:00Z`, `2026-01-01T01:00:00.5+01:00`).
pub(crate) fn start_at(opts: &Opts) -> Result<Option<SystemTime>, CliError> {
    let Some(opt) = opts.get("start_at") else { return Ok(None) };
    let text = value::text(opt, "TIME")?.trim();
    let parsed = if text.contains('-') && text.len() > 10 { rfc3339(text) } else { parse_unix_seconds(text) };
    parsed.map(Some).ok_or_else(|| CliError::InvalidValue {
        option: opt.label(),
        value: text.to_owned(),
        expected: "Unix seconds such as $(( $(date +%s) + 30 )), or an RFC 3339 time such as 2026-01-01T12:00:00Z"
            .to_owned(),
    })
}

fn parse_unix_seconds(text: &str) -> Option<SystemTime> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let secs: u64 = whole.parse().ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs) + fraction_of_second(fraction)?)
}

/// The digits after a decimal point, as a duration (nanoseconds at most).
fn fraction_of_second(digits: &str) -> Option<Duration> {
    if digits.is_empty() {
        return Some(Duration::ZERO);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: String = digits.chars().chain(std::iter::repeat('0')).take(9).collect();
    Some(Duration::from_nanos(nanos.parse().ok()?))
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; `t` and a space are taken for
/// the `T`, `z` for the `Z`, as RFC 3339 allows.
fn rfc3339(text: &str) -> Option<SystemTime> {
    let (date, rest) = text.split_at_checked(10)?;
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (clock, offset_s) = split_offset(rest)?;
    let mut ymd = date.split('-').map(|part| part.parse::<i64>().ok());
    let (year, month, day) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.split(':').map(|part| part.parse::<i64>().ok());
    let (hour, minute, second) = (parts.next()??, parts.next()??, parts.next()??);
    let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second <= 60;
    if !valid || ymd.next().is_some() || parts.next().is_some() {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(secs).ok()?) + fraction_of_second(fraction)?)
}

/// The time of day and its offset from UTC in seconds.
fn split_offset(rest: &str) -> Option<(&str, i64)> {
    if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        return Some((clock, 0));
    }
    let at = rest.rfind(['+', '-'])?;
    let (clock, offset) = rest.split_at(at);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let (hours, minutes) = offset.get(1..)?.split_once(':')?;
    let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
    Some((clock, sign * (hours * 3600 + minutes * 60)))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> Opts {
        Opts::new(pairs.iter().map(|(name, value)| RawOpt::arg(name, Some(value))).collect())
    }

    fn at(secs: u64, nanos: u64) -> Option<SystemTime> {
        Some(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_nanos(nanos))
    }

    #[test]
    fn start_at_reads_unix_seconds_and_rfc3339() {
        let read = |text: &str| start_at(&opts(&[("start-at", text)]));
        assert_eq!(read("1767225600").unwrap(), at(1_767_225_600, 0));
        assert_eq!(read("1767225600.25").unwrap(), at(1_767_225_600, 250_000_000));
        assert_eq!(read("2026-01-01T00:00:00Z").unwrap(), at(1_767_225_600, 0));
        assert_eq!(read("2026-01-01T01:00:00.5+01:00").unwrap(), at(1_767_225_600, 500_000_000));
        assert_eq!(read("2025-12-31 19:30:00-04:30").unwrap(), at(1_767_225_600, 0));
        assert_eq!(read("2000-02-29T12:00:00Z").unwrap(), at(951_825_600, 0));
        for bad in ["tomorrow", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00", "12.x", "-5", ""] {
            let error = read(bad).unwrap_err().to_string();
            assert!(error.starts_with("invalid value for --start-at") && error.contains("RFC 3339"), "{bad}: {error}");
        }
        assert_eq!(start_at(&opts(&[])).unwrap(), None);
    }

    #[test]
    fn shard_comes_from_the_option_or_the_job_index() {
        let read = |pairs: &[(&str, &str)], job: Option<&str>| shard(&opts(pairs), job);
        assert_eq!(read(&[], Some("4")).unwrap(), Shard::WHOLE, "no --shards: the variable alone splits nothing");
        assert_eq!(read(&[("shard", "1/3")], None).unwrap(), Shard::new(1, 3).unwrap());
        assert_eq!(read(&[("shards", "3")], Some("2")).unwrap(), Shard::new(2, 3).unwrap());
        assert_eq!(read(&[("shard", "1/3"), ("shards", "3")], Some("2")).unwrap(), Shard::new(1, 3).unwrap());
        let error = |pairs: &[(&str, &str)], job| read(pairs, job).unwrap_err().to_string();
        assert_eq!(
            error(&[("shard", "3/2")], None),
            "invalid value for --shard: '3/2' (expected I/N with I from 0 to N-1: shard 3 of 2 does not exist: \
             shards are numbered 0 to 1, as a Kubernetes Indexed Job's JOB_COMPLETION_INDEX is)"
        );
        assert!(error(&[("shard", "1")], None).contains("I/N, such as 0/3"));
        assert!(error(&[("shard", "0/0")], None).contains("0 shards"));
        assert!(error(&[("shards", "3")], None).contains("add --shard=I/3 (I from 0 to 2)"));
        assert!(error(&[("shards", "3")], Some("3")).starts_with("environment variable JOB_COMPLETION_INDEX"));
        assert!(error(&[("shards", "3")], Some("x")).contains("'x' is not a shard index"));
        assert!(error(&[("shard", "1/3"), ("shards", "4")], None).contains("disagree"));
    }
}

//! Turning one option's text into a value, as sysbench reads each kind, or
//! a one-line refusal naming the option.

use super::cli_error::CliError;
use super::raw::RawOpt;
use crate::transport::tls::SslMode;

fn invalid(opt: &RawOpt, expected: &str) -> CliError {
    CliError::InvalidValue {
        option: opt.label(),
        value: opt.value.clone().unwrap_or_default(),
        expected: expected.to_owned(),
    }
}

/// The value text; a bare `--name` is refused for every kind but booleans.
pub(crate) fn text<'a>(opt: &'a RawOpt, expected: &str) -> Result<&'a str, CliError> {
    opt.value.as_deref().ok_or_else(|| CliError::MissingValue { option: opt.label(), expected: expected.to_owned() })
}

/// sysbench's booleans: bare, `on`, `true`, `1`; or `off`, `false`, `0`.
/// Nothing else, not even `ON` or `yes`: sysbench 1.0.20 refuses those.
pub(crate) fn boolean(opt: &RawOpt) -> Result<bool, CliError> {
    match opt.value.as_deref() {
        None | Some("on" | "true" | "1") => Ok(true),
        Some("off" | "false" | "0") => Ok(false),
        Some(_) => Err(invalid(opt, "on, off, true, false, 1 or 0; sysbench takes no other spelling")),
    }
}

/// `--mysql-ssl`: a sysbench 1.0.20 boolean (on means [`SslMode::On`]), or
/// a sysbench master mode name in any case, as master's `strcasecmp`.
pub(crate) fn ssl_mode(opt: &RawOpt) -> Result<SslMode, CliError> {
    let by_name = opt.value.as_deref().and_then(|value| {
        SslMode::NAMES.iter().find(|(name, _)| name.eq_ignore_ascii_case(value)).map(|(_, mode)| *mode)
    });
    match by_name {
        Some(mode) => Ok(mode),
        None => match boolean(opt) {
            Ok(true) => Ok(SslMode::On),
            Ok(false) => Ok(SslMode::Disabled),
            Err(_) => Err(invalid(
                opt,
                "on or off (sysbench 1.0.20), or DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY \
                 (sysbench master)",
            )),
        },
    }
}

/// One of a fixed set of words (`--io=uring`); `expected` names them for
/// the refusal ("auto, uring or epoll").
pub(crate) fn choice<T: Copy>(opt: &RawOpt, choices: &[(&str, T)], expected: &str) -> Result<T, CliError> {
    let word = text(opt, &choices.iter().map(|(name, _)| *name).collect::<Vec<_>>().join("|"))?;
    choices.iter().find(|(name, _)| *name == word).map(|(_, value)| *value).ok_or_else(|| invalid(opt, expected))
}

/// A C `int` option (`sb_opt_to_int`: `strtol`, base 10, leading blanks and
/// sign allowed, nothing after the digits, within `int`), then `min..=max`.
/// An empty value is refused although sysbench reads it as 0.
pub(crate) fn int(opt: &RawOpt, min: i64, max: i64, expected: &str) -> Result<i64, CliError> {
    let value = text(opt, "N")?;
    let n = parse_c_long(value).ok_or_else(|| invalid(opt, expected))?;
    if n < i64::from(i32::MIN) || n > i64::from(i32::MAX) || n < min || n > max {
        return Err(invalid(opt, expected));
    }
    Ok(n)
}

fn parse_c_long(text: &str) -> Option<i64> {
    let trimmed = text.trim_start();
    let digits = trimmed.strip_prefix('+').unwrap_or(trimmed);
    if digits.starts_with('+') || digits.is_empty() {
        return None;
    }
    digits.parse::<i64>().ok()
}

pub(crate) fn u32_in(opt: &RawOpt, min: u32, max: u32, expected: &str) -> Result<u32, CliError> {
    let n = int(opt, i64::from(min), i64::from(max), expected)?;
    u32::try_from(n).map_err(|_| invalid(opt, expected))
}

/// A Lua script's numeric option. sysbench stores these as doubles
/// (`strtod`, no check at all); wirebench wants a whole number in
/// `min..=max`, written as an integer or a whole float such as `1e6`.
pub(crate) fn whole(opt: &RawOpt, min: u32, max: u32, expected: &str) -> Result<u32, CliError> {
    let value = text(opt, "N")?.trim();
    if let Some(n) = parse_c_long(value) {
        if n >= i64::from(min) && n <= i64::from(max) {
            return u32::try_from(n).map_err(|_| invalid(opt, expected));
        }
        return Err(invalid(opt, expected));
    }
    match value.parse::<f64>() {
        Ok(x) if x.is_finite() && x.fract() == 0.0 && x >= f64::from(min) && x <= f64::from(max) => {
            // Exact: a whole number inside the u32 bounds just checked.
            Ok(x as u32)
        }
        _ => Err(invalid(opt, expected)),
    }
}

/// A C `double` option (`strtod`); wirebench refuses what `strtod` would
/// silently read as 0.
pub(crate) fn double(opt: &RawOpt, expected: &str) -> Result<f64, CliError> {
    let value = text(opt, "N")?;
    value.trim_start().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| invalid(opt, expected))
}

/// A size (`sb_opt_to_size`): digits and an optional K, M, G or T (powers
/// of 1024). sysbench reads anything else as 0 and then refuses it.
pub(crate) fn size(opt: &RawOpt) -> Result<u64, CliError> {
    let expected = "a size such as 64K, 1M or 65536";
    let value = text(opt, "SIZE")?;
    let digits_end = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    let (digits, suffix) = value.split_at(digits_end);
    let n: u64 = digits.parse().map_err(|_| invalid(opt, expected))?;
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(invalid(opt, expected)),
    };
    n.checked_mul(1u64 << shift).filter(|&bytes| bytes > 0).ok_or_else(|| invalid(opt, expected))
}

/// A list option: split at commas, empty items dropped (`strtok`), so an
/// empty value is an empty list.
pub(crate) fn list(opt: &RawOpt) -> Result<Vec<String>, CliError> {
    let value = text(opt, "[LIST,...]")?;
    Ok(value.split(',').filter(|item| !item.is_empty()).map(str::to_owned).collect())
}

/// A CPU list: `0,2,4-7`.
pub(crate) fn cpu_list(opt: &RawOpt) -> Result<Vec<usize>, CliError> {
    let expected = "CPU numbers and ranges, e.g. 0,2,4-7";
    let mut cpus = Vec::new();
    for item in list(opt)? {
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (a.trim().parse::<usize>(), b.trim().parse::<usize>()),
            None => (item.trim().parse::<usize>(), item.trim().parse::<usize>()),
        };
        let (Ok(first), Ok(last)) = (first, last) else { return Err(invalid(opt, expected)) };
        if first > last || last >= 65536 {
            return Err(invalid(opt, expected));
        }
        for cpu in first..=last {
            if cpus.contains(&cpu) {
                return Err(invalid(opt, "each CPU once"));
            }
            cpus.push(cpu);
        }
    }
    if cpus.is_empty() {
        return Err(invalid(opt, expected));
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(value: Option<&str>) -> RawOpt {
        RawOpt::arg("x", value)
    }

    #[test]
    fn booleans_take_sysbench_spellings_only() {
        for (value, expected) in [(None, true), (Some("on"), true), (Some("true"), true), (Some("1"), true)] {
            assert_eq!(boolean(&opt(value)).unwrap(), expected);
        }
        for value in ["off", "false", "0"] {
            assert!(!boolean(&opt(Some(value))).unwrap());
        }
        for value in ["yes", "no", "ON", "Off", "", "2"] {
            assert!(boolean(&opt(Some(value))).is_err(), "{value}");
        }
    }

    #[test]
    fn mysql_ssl_takes_booleans_and_master_modes() {
        for (value, expected) in [
            (None, SslMode::On),
            (Some("on"), SslMode::On),
            (Some("1"), SslMode::On),
            (Some("off"), SslMode::Disabled),
            (Some("disabled"), SslMode::Disabled),
            (Some("PREFERRED"), SslMode::Preferred),
            (Some("Required"), SslMode::Required),
            (Some("verify_ca"), SslMode::VerifyCa),
            (Some("VERIFY_IDENTITY"), SslMode::VerifyIdentity),
        ] {
            assert_eq!(ssl_mode(&opt(value)).unwrap(), expected, "{value:?}");
        }
        for bad in ["ON", "yes", "verify", ""] {
            let err = ssl_mode(&opt(Some(bad))).unwrap_err().to_string();
            assert!(err.contains("VERIFY_IDENTITY"), "{bad}: {err}");
        }
    }

    #[test]
    fn ints_are_strtol_within_int() {
        assert_eq!(int(&opt(Some("42")), 0, 100, "").unwrap(), 42);
        assert_eq!(int(&opt(Some("+4")), 0, 100, "").unwrap(), 4);
        assert_eq!(int(&opt(Some(" 4")), 0, 100, "").unwrap(), 4);
        assert_eq!(int(&opt(Some("-4")), -10, 100, "").unwrap(), -4);
        for bad in ["abc", "2x", "", "4 ", "1e3", "0x10", "++4", "99999999999", "2147483648"] {
            assert!(int(&opt(Some(bad)), i64::MIN, i64::MAX, "").is_err(), "{bad}");
        }
        assert!(int(&opt(Some("0")), 1, 10, "").is_err());
        assert!(matches!(int(&opt(None), 0, 1, ""), Err(CliError::MissingValue { .. })));
    }

    #[test]
    fn lua_numbers_are_whole() {
        assert_eq!(whole(&opt(Some("1000000")), 0, u32::MAX, "").unwrap(), 1_000_000);
        assert_eq!(whole(&opt(Some("1e6")), 0, u32::MAX, "").unwrap(), 1_000_000);
        assert_eq!(whole(&opt(Some("10.0")), 0, u32::MAX, "").unwrap(), 10);
        for bad in ["1.5", "abc", "-1", "nan", "inf", "5000000000"] {
            assert!(whole(&opt(Some(bad)), 0, u32::MAX, "").is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_have_binary_suffixes() {
        assert_eq!(size(&opt(Some("64K"))).unwrap(), 65536);
        assert_eq!(size(&opt(Some("1m"))).unwrap(), 1 << 20);
        assert_eq!(size(&opt(Some("100"))).unwrap(), 100);
        for bad in ["abc", "K", "0", "1X", "1KB"] {
            assert!(size(&opt(Some(bad))).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_drop_empty_items() {
        assert_eq!(list(&opt(Some("a,,b,"))).unwrap(), ["a", "b"]);
        assert!(list(&opt(Some(""))).unwrap().is_empty());
    }

    #[test]
    fn cpu_lists_expand_ranges() {
        assert_eq!(cpu_list(&opt(Some("0,2,4-6"))).unwrap(), [0, 2, 4, 5, 6]);
        for bad in ["", "a", "3-1", "1,1", "0-2,2"] {
            assert!(cpu_list(&opt(Some(bad))).is_err(), "{bad}");
        }
    }
}

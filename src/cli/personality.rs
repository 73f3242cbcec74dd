//! Which program the user ran: wirebench by its own name, or wirebench
//! installed as `sysbench` (a symlink or a copy), where scripts written for
//! sysbench 1.0.20 read its output.

use std::ffi::OsStr;
use std::path::Path;

/// The name wirebench was invoked under, read from `argv[0]`. The help,
/// version, banner and the refusals of a test or command consult it;
/// nothing below `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Personality {
    /// `wirebench ...`: its own name, texts and extensions.
    #[default]
    Wirebench,
    /// `sysbench ...`: sysbench 1.0.20's texts, where a script could see
    /// them, wherever they are true of wirebench.
    Sysbench,
}

/// What `sysbench --version` prints: the version whose behaviour wirebench
/// reproduces.
pub const SYSBENCH_VERSION_LINE: &str = "sysbench 1.0.20";

/// sysbench's first line (`sysbench 1.0.20 (using system LuaJIT
/// 2.1.0-beta3)`), its parentheses saying what actually runs.
pub const SYSBENCH_BANNER_LINE: &str = concat!("sysbench 1.0.20 (wirebench ", env!("CARGO_PKG_VERSION"), ")");

impl Personality {
    /// `Sysbench` when the program's file name is `sysbench`, whatever its
    /// directory; `Wirebench` otherwise (and when there is no `argv[0]`).
    pub fn of_program(argv0: Option<&OsStr>) -> Personality {
        let file_name = argv0.and_then(|arg| Path::new(arg).file_name());
        if file_name == Some(OsStr::new("sysbench")) {
            Personality::Sysbench
        } else {
            Personality::Wirebench
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_name_decides() {
        let of = |name: &str| Personality::of_program(Some(OsStr::new(name)));
        assert_eq!(of("sysbench"), Personality::Sysbench);
        assert_eq!(of("/usr/local/bin/sysbench"), Personality::Sysbench);
        assert_eq!(of("./sysbench"), Personality::Sysbench);
        assert_eq!(of("wirebench"), Personality::Wirebench);
        assert_eq!(of("/usr/bin/sysbench-1.0"), Personality::Wirebench);
        assert_eq!(of("/opt/sysbench/wirebench"), Personality::Wirebench);
        assert_eq!(Personality::of_program(None), Personality::Wirebench);
        assert_eq!(SYSBENCH_BANNER_LINE, format!("sysbench 1.0.20 (wirebench {})", env!("CARGO_PKG_VERSION")));
    }
}

//! The cores the event loops may be pinned to: those this process may run
//! on (`sched_getaffinity`, which `taskset` and cgroups set). Pinning to
//! any other fails, and a loop would then run unpinned without a word, so
//! `--cpus` is checked against them before anything starts.

use std::fmt;

/// The cores this process may run on, ascending; `None` when the kernel
/// does not say.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    core_affinity::get_core_ids().map(|ids| ids.into_iter().map(|id| id.id).collect())
}

/// Refuses the first of `wanted` this process may not run on. When the
/// allowed set is unknown, every core passes: pinning is then best effort.
pub fn check_loop_cpus(wanted: &[usize]) -> Result<(), CpuUnavailable> {
    let Some(allowed) = allowed_cpus() else { return Ok(()) };
    match wanted.iter().find(|cpu| !allowed.contains(cpu)) {
        Some(&cpu) => Err(CpuUnavailable { cpu, allowed }),
        None => Ok(()),
    }
}

/// A `--cpus` core outside the process's allowed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--cpus: this process may not run on cpu {cpu}; it may run on cpus {} (its affinity, set by taskset or \
     cgroups): choose among those",
    CpuRanges(.allowed)
)]
pub struct CpuUnavailable {
    pub cpu: usize,
    pub allowed: Vec<usize>,
}

/// Ascending cores written as `--cpus` takes them: `0-3,6`.
struct CpuRanges<'a>(&'a [usize]);

impl fmt::Display for CpuRanges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0.iter().copied().peekable();
        let mut first = true;
        while let Some(start) = rest.next() {
            let mut end = start;
            while rest.next_if(|&next| Some(next) == end.checked_add(1)).is_some() {
                end += 1;
            }
            let separator = if first { "" } else { "," };
            first = false;
            if end == start {
                write!(f, "{separator}{start}")?;
            } else {
                write!(f, "{separator}{start}-{end}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_written_as_cpus_takes_them() {
        assert_eq!(CpuRanges(&[0, 1, 2, 3, 6, 8, 9]).to_string(), "0-3,6,8-9");
        assert_eq!(CpuRanges(&[5]).to_string(), "5");
        assert_eq!(CpuRanges(&[]).to_string(), "");
    }

    #[test]
    fn a_core_outside_the_affinity_is_refused_naming_the_allowed_ones() {
        let allowed = allowed_cpus().unwrap();
        assert_eq!(check_loop_cpus(&allowed), Ok(()));
        let outside = allowed.iter().max().unwrap() + 1;
        let err = check_loop_cpus(&[outside]).unwrap_err();
        assert_eq!(err.cpu, outside);
        let message = err.to_string();
        assert!(message.contains(&format!("may not run on cpu {outside}")), "{message}");
        assert!(message.contains(&CpuRanges(&allowed).to_string()), "{message}");
    }
}

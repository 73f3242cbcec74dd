//! Hiding passwords from `ps`: `/proc/PID/cmdline` is read from the
//! process's own argument strings, so the mysql client overwrites the value
//! of `--password=...` in place once it has read it, and wirebench does the
//! same for `--mysql-password=...` (and `--pgsql-password=...`).
//!
//! Rust's std does not hand out `argv`; glibc passes `argc` and `argv` to
//! every `.init_array` function (std reads its own copy the same way), so
//! [`CAPTURE_ARGV`] saves them before `main`. Elsewhere than Linux with
//! glibc nothing is saved and nothing is hidden.

use super::defs;

/// What is written over a password, byte for byte, as the mysql client
/// does (`--mysql-password=xxxxxx`).
const MASK: u8 = b'x';

/// Overwrites the value of every password option in this process's
/// argument strings; how many it hid. Call it at the start of `main`,
/// after reading the arguments (`std::env::args_os` copies them) and
/// before starting any thread.
pub fn hide_passwords_from_ps() -> usize {
    saved_argv::hide_passwords()
}

/// Where in `arg` the password starts, if `arg` is a password option
/// with a value (`--mysql-password=s3cr3t` gives 17).
fn password_value_start(arg: &[u8]) -> Option<usize> {
    let option = arg.strip_prefix(b"--")?;
    let equals = option.iter().position(|&b| b == b'=')?;
    let name = std::str::from_utf8(option.get(..equals)?).ok()?;
    defs::is_secret(&defs::key(name)).then_some(2 + equals + 1)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod saved_argv {
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    use super::{password_value_start, MASK};

    static ARGC: AtomicUsize = AtomicUsize::new(0);
    static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());

    /// Runs before `main` (glibc calls `.init_array` entries with argc,
    /// argv and envp); the section name is the one std uses for its own.
    #[used]
    #[link_section = ".init_array.00099"]
    static CAPTURE_ARGV: extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) = save_argv;

    extern "C" fn save_argv(argc: c_int, argv: *mut *mut c_char, _envp: *mut *mut c_char) {
        ARGC.store(usize::try_from(argc).unwrap_or(0), Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
    }

    pub(super) fn hide_passwords() -> usize {
        let argv = ARGV.load(Ordering::Relaxed);
        if argv.is_null() {
            return 0;
        }
        let mut hidden = 0;
        for index in 1..ARGC.load(Ordering::Relaxed) {
            // SAFETY: glibc passed `argv` with `argc` entries to the
            // .init_array function; they stay valid for the whole process.
            let arg = unsafe { *argv.add(index) };
            if arg.is_null() {
                continue;
            }
            let (start, len) = {
                // SAFETY: each entry is a NUL-terminated string; the borrow
                // ends with this block, before anything is written.
                let bytes = unsafe { CStr::from_ptr(arg) }.to_bytes();
                (password_value_start(bytes), bytes.len())
            };
            let Some(start) = start.filter(|&start| start < len) else { continue };
            // SAFETY: the strings argv points to are the program's to
            // modify (C11 5.1.2.2.1p2); `start..len` lies inside this one,
            // before its NUL; no other thread runs yet, and std's
            // `env::args` copies the strings rather than borrowing them.
            unsafe { std::ptr::write_bytes(arg.add(start), MASK, len - start) };
            hidden += 1;
        }
        hidden
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod saved_argv {
    pub(super) fn hide_passwords() -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_values_are_found() {
        assert_eq!(password_value_start(b"--mysql-password=s3cr3t"), Some(17));
        assert_eq!(password_value_start(b"--mysql_password=s3cr3t"), Some(17));
        assert_eq!(password_value_start(b"--pgsql-password=a=b"), Some(17));
        assert_eq!(password_value_start(b"--mysql-password="), Some(17));
        for other in [&b"--mysql-password"[..], b"--mysql-user=root", b"mysql-password=x", b"--x=--mysql-password=y"] {
            assert_eq!(password_value_start(other), None);
        }
    }
}

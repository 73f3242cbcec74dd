//! `sysbench.cmdline`'s C functions: `sb_lua_set_test_args`, which
//! registers the option definitions `sysbench.cmdline.read_cmdline_options()`
//! made, and `sb_print_test_options`, which lists the registered options
//! as `help` does. A state's definitions are registered when its options
//! are exported (`state::export_options`), as sysbench registers them
//! after loading the script; the options' values are not changed.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Write as _;

use super::{alert_once, guarded, with_state};
use crate::lua::cmdline_options::{option_lines, OptKind, ScriptOption};

/// sysbench's `sb_arg_t` (cdefs.lua), field for field.
#[repr(C)]
pub(crate) struct SbArg {
    name: *const c_char,
    desc: *const c_char,
    value: *const c_char,
    pub(super) kind: c_int,
    /// A `sb_opt_validate_t *`; sysbench 1.0.20 never calls it, nor does wirebench.
    pub(super) validate: *const c_void,
}

/// `int sb_lua_set_test_args(sb_arg_t *args, size_t len)`: the state's
/// options become `args` (copied); 0, or 1 (logged) when an entry has no
/// name or description or a type that is not an option's.
///
/// # Safety
///
/// `args` points to `len` entries, each string NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn sb_lua_set_test_args(args: *const SbArg, len: usize) -> c_int {
    guarded("sb_lua_set_test_args", 1, || {
        let entries: &[SbArg] = match len {
            0 => &[],
            // SAFETY: the caller's promise above.
            _ if !args.is_null() => unsafe { std::slice::from_raw_parts(args, len) },
            _ => {
                alert_once(
                    "sb_lua_set_test_args",
                    "null",
                    format_args!("sb_lua_set_test_args(NULL, {len}): no options"),
                );
                return 1;
            }
        };
        // SAFETY: the caller's promise above.
        let Some(defs) = entries.iter().map(|arg| unsafe { option_of_arg(arg) }).collect::<Option<Vec<_>>>() else {
            return 1;
        };
        with_state("sb_lua_set_test_args", |ctx| ctx.test_args = defs).map_or(1, |()| 0)
    })
}

/// `void sb_print_test_options(void)`: the state's options, one a line,
/// as `help` lists them (nothing for a script without options).
#[no_mangle]
pub extern "C" fn sb_print_test_options() {
    guarded("sb_print_test_options", (), || {
        let text = with_state("sb_print_test_options", |ctx| {
            (!ctx.test_args.is_empty()).then(|| option_lines(&ctx.test_args))
        });
        if let Some(text) = text.flatten() {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    })
}

/// One entry as a definition; `None` (logged) if it is not one.
///
/// # Safety
///
/// Each string of `arg` is NULL or NUL-terminated.
unsafe fn option_of_arg(arg: &SbArg) -> Option<ScriptOption> {
    // SAFETY: the caller's promise above.
    let text = |p: *const c_char| (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
    let kind = OptKind::from_arg_type(i64::from(arg.kind));
    match (text(arg.name), text(arg.desc), kind) {
        (Some(name), Some(description), Some(kind)) => {
            Some(ScriptOption { name, description, default: text(arg.value), kind })
        }
        (name, _, _) => {
            let name = name.unwrap_or_else(|| "(NULL)".to_owned());
            alert_once(
                "sb_lua_set_test_args",
                "entry",
                format_args!(
                    "sb_lua_set_test_args(): option {name} needs a name, a description and a type from \
                     SB_ARG_TYPE_BOOL (1) to SB_ARG_TYPE_FILE (7) (it has type {}): no options set",
                    arg.kind
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_without_a_name_or_a_known_type_are_refused() {
        let name = c"rows".as_ptr();
        let arg = |name, kind| SbArg { name, desc: name, value: std::ptr::null(), kind, validate: std::ptr::null() };
        // SAFETY: the strings are NUL-terminated or NULL.
        unsafe {
            assert!(option_of_arg(&arg(name, 2)).is_some());
            assert!(option_of_arg(&arg(std::ptr::null(), 2)).is_none());
            assert!(option_of_arg(&arg(name, 0)).is_none());
            assert!(option_of_arg(&arg(name, 8)).is_none());
            assert_eq!(sb_lua_set_test_args(std::ptr::null(), 3), 1);
        }
    }
}

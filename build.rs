//! Link settings of the `wirebench` binary.
//!
//! A Lua script reaches sysbench's C functions through LuaJIT's FFI
//! (`ffi.C.db_query`, `ffi.C.sb_counter_inc`): LuaJIT looks each name up
//! in the running executable with dlsym, so the binary exports the ones
//! wirebench implements (`src/lua/sql.rs`, `src/lua/events.rs`), and only
//! those: sysbench's own names, all starting `db_` or `sb_`.
fn main() {
    for pattern in ["db_*", "sb_*"] {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={pattern}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! Exports sysbench's C functions from the wirebench executable (see
//! src/lua/ffi/mod.rs): only those names, each with
//! `--export-dynamic-symbol`, rather than every global symbol of the
//! binary (`-rdynamic`).

include!("src/lua/ffi/exports.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/lua/ffi/exports.rs");
    for name in EXPORTED_C_FUNCTIONS {
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic-symbol={name}");
    }
}

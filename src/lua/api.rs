//! The raw functions under the prelude's output and `sysbench.rand.zipfian`
//! (which draws from the state's own generator, as sysbench's thread-local
//! one).

use std::io::Write as _;

use mlua::{Lua, Table};

use super::context;

/// Adds the raw functions to `raw` (`__wirebench` in Lua).
pub(crate) fn install(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    install_rand(lua, raw)?;
    raw.set(
        "write",
        lua.create_function(|_, text: mlua::String| {
            // Through Rust's stdout, so that script output and reports keep their order.
            std::io::stdout().write_all(&text.as_bytes()).map_err(mlua::Error::external)
        })?,
    )?;
    raw.set(
        "write_err",
        lua.create_function(|_, text: mlua::String| {
            std::io::stderr().write_all(&text.as_bytes()).map_err(mlua::Error::external)
        })?,
    )?;
    raw.set("on_close", lua.create_function(|lua, text: String| context::with(lua, |ctx| ctx.on_close = Some(text)))?)?;
    Ok(())
}

/// Runs `f` with the state's generator.
fn with_rng<T>(lua: &Lua, f: impl FnOnce(&mut crate::rand::Rng) -> T) -> mlua::Result<T> {
    context::with(lua, |ctx| f(&mut ctx.rng))
}

/// `sysbench.rand.zipfian`, which sysbench 1.0.20 has no C function for
/// (its other draws are the exported `sb_rand_*`, `ffi/rand.rs`).
fn install_rand(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    // Lua numbers convert to uint32_t as the FFI converts them.
    let zipfian = lua.create_function(|lua, (a, b): (f64, f64)| {
        with_rng(lua, |rng| rng.zipfian(a as i64 as u32, b as i64 as u32))
    })?;
    raw.set("rand_zipfian", zipfian)
}

//! The raw functions under `sysbench.rand`, `sysbench.histogram` and the
//! prelude's output: each draws from the state's own generator, as
//! sysbench's thread-local one.

use std::fmt::Write as _;
use std::io::Write as _;

use mlua::{Lua, Table, UserData, UserDataMethods};

use super::context;

/// Adds the raw functions to `raw` (`__wirebench` in Lua).
pub(crate) fn install(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    install_rand(lua, raw)?;
    raw.set(
        "histogram_new",
        lua.create_function(|_, (size, min, max): (usize, f64, f64)| Histogram::new(size, min, max))?,
    )?;
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
    raw.set(
        "on_close",
        lua.create_function(|lua, text: String| {
            context::with(lua, |ctx| ctx.on_close = Some(text))
        })?,
    )?;
    Ok(())
}

/// Runs `f` with the state's generator.
fn with_rng<T>(lua: &Lua, f: impl FnOnce(&mut crate::rand::Rng) -> T) -> mlua::Result<T> {
    context::with(lua, |ctx| f(&mut ctx.rng))
}

type Draw = fn(&mut crate::rand::Rng, u32, u32) -> u32;

fn install_rand(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    let ranged: [(&str, Draw); 6] = [
        ("rand_default", crate::rand::Rng::default),
        ("rand_uniform", crate::rand::Rng::uniform),
        ("rand_gaussian", crate::rand::Rng::gaussian),
        ("rand_special", crate::rand::Rng::special),
        ("rand_pareto", crate::rand::Rng::pareto),
        ("rand_zipfian", crate::rand::Rng::zipfian),
    ];
    for (name, draw) in ranged {
        // sysbench's C functions take uint32_t: Lua numbers convert as C does.
        let f = lua.create_function(move |lua, (a, b): (f64, f64)| {
            with_rng(lua, |rng| draw(rng, a as i64 as u32, b as i64 as u32))
        })?;
        raw.set(name, f)?;
    }
    // Two halves, which the prelude joins into a uint64_t cdata: a Lua
    // number would round draws above 2^53, sysbench's function returns
    // uint64_t through the FFI.
    raw.set(
        "rand_uniform_uint64",
        lua.create_function(|lua, ()| {
            let n = with_rng(lua, |rng| rng.next_u64())?;
            Ok(((n >> 32) as u32, n as u32))
        })?,
    )?;
    raw.set("rand_uniform_double", lua.create_function(|lua, ()| with_rng(lua, |rng| rng.next_f64()))?)?;
    raw.set(
        "rand_unique",
        lua.create_function(|lua, ()| {
            context::with(lua, |ctx| ctx.env.unique.next_value())
        })?,
    )?;
    raw.set(
        "rand_string",
        lua.create_function(|lua, template: mlua::String| {
            let template = template.as_bytes().to_vec();
            let mut out = vec![0; template.len()];
            with_rng(lua, |rng| rng.rand_str(&template, &mut out))?;
            lua.create_string(&out)
        })?,
    )?;
    Ok(())
}

/// `sysbench.histogram.new(size, min, max)`: sysbench's `sb_histogram_t`,
/// `size` counters on a log scale from `min` to `max`.
pub(crate) struct Histogram {
    counts: Vec<u64>,
    deduct: f64,
    mult: f64,
}

impl Histogram {
    fn new(size: usize, min: f64, max: f64) -> mlua::Result<Histogram> {
        if size == 0 || size > 1 << 24 || !(min > 0.0 && max > min) {
            return Err(mlua::Error::runtime(format!(
                "sysbench.histogram.new({size}, {min}, {max}): give 1 to 16777216 slots and 0 < min < max"
            )));
        }
        let deduct = min.ln();
        Ok(Histogram { counts: vec![0; size], deduct, mult: (size - 1) as f64 / (max.ln() - deduct) })
    }

    fn update(&mut self, value: f64) {
        let i = ((value.ln() - self.deduct) * self.mult + 0.5).floor();
        let last = self.counts.len() - 1;
        let i = if i.is_nan() || i < 0.0 { 0 } else { (i as usize).min(last) };
        if let Some(count) = self.counts.get_mut(i) {
            *count += 1;
        }
    }

    /// sysbench's `sb_histogram_print`; nothing when empty.
    fn rows(&self) -> String {
        let max = self.counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return String::new();
        }
        let mut text = String::from("       value  ------------- distribution ------------- count\n");
        for (i, &count) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let width = (count as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
            let value = (i as f64 / self.mult + self.deduct).exp();
            let _ = writeln!(text, "{value:12.3} |{:<40} {count}", "*".repeat(width));
        }
        text
    }
}

impl UserData for Histogram {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("update", |lua, this, value: f64| {
            // sysbench picks one of its slot arrays with a draw from the
            // thread's generator; drawing keeps a seeded run's values equal.
            with_rng(lua, |rng| rng.next_u64())?;
            this.update(value);
            Ok(())
        });
        methods.add_method("print", |_, this, ()| {
            std::io::stdout().write_all(this.rows().as_bytes()).map_err(mlua::Error::external)
        });
        methods.add_meta_method("__tostring", |_, _, ()| Ok("<sb_histogram>"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_rows_as_sysbench_prints_them() {
        let mut h = Histogram::new(10, 1.0, 1000.0).unwrap();
        for v in [1.0, 1.0, 10.0, 5000.0, 0.001] {
            h.update(v);
        }
        let rows = h.rows();
        assert!(rows.starts_with("       value  ------------- distribution ------------- count\n"));
        assert!(rows.contains("       1.000 |**************************************** 3\n"), "{rows}");
        assert!(rows.contains("    1000.000 |*************                            1\n"), "{rows}");
        assert_eq!(Histogram::new(10, 1.0, 1000.0).unwrap().rows(), "");
        assert!(Histogram::new(0, 1.0, 2.0).is_err());
    }
}

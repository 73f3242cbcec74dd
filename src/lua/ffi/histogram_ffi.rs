//! `sysbench.histogram`'s C functions (`sb_histogram.h`): a bounded
//! histogram of `size` counters on a log scale from `range_min` to
//! `range_max`, which a script gets as an opaque `sb_histogram_t *`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{alert_once, guarded, with_state};

/// The most counters a histogram may have.
const MAX_SLOTS: usize = 1 << 24;

/// sysbench's `sb_histogram_t`, as far as a script sees it. The counters
/// are atomic, as sysbench's: the pointer is the script's to pass around.
pub(crate) struct Histogram {
    counts: Box<[AtomicU64]>,
    deduct: f64,
    mult: f64,
}

impl Histogram {
    /// `None` unless 1 <= `size` <= 2^24 and 0 < `min` < `max`.
    fn new(size: usize, min: f64, max: f64) -> Option<Histogram> {
        if size == 0 || size > MAX_SLOTS || !(min > 0.0 && max > min && max.is_finite()) {
            return None;
        }
        let deduct = min.ln();
        Some(Histogram {
            counts: (0..size).map(|_| AtomicU64::new(0)).collect(),
            deduct,
            mult: (size - 1) as f64 / (max.ln() - deduct),
        })
    }

    /// Counts `value` in its slot, as sysbench rounds it: below the range
    /// (or not a number, which x86 converts to a negative index) in the
    /// first slot, above it in the last.
    fn update(&self, value: f64) {
        let i = ((value.ln() - self.deduct) * self.mult + 0.5).floor();
        let last = self.counts.len() - 1;
        let i = if i.is_nan() || i < 0.0 { 0 } else { (i as usize).min(last) };
        if let Some(count) = self.counts.get(i) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// sysbench's `sb_histogram_print`; nothing when empty.
    fn rows(&self) -> String {
        let counts: Vec<u64> = self.counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let max = counts.iter().copied().max().unwrap_or(0);
        if max == 0 {
            return String::new();
        }
        let mut text = String::from("       value  ------------- distribution ------------- count\n");
        for (i, &count) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let width = (count as f64 * 40.0 / max as f64 + 0.5).floor() as usize;
            let value = (i as f64 / self.mult + self.deduct).exp();
            let _ = writeln!(text, "{value:12.3} |{:<40} {count}", "*".repeat(width));
        }
        text
    }
}

/// `sb_histogram_t *sb_histogram_new(size_t size, double range_min, double
/// range_max)`: NULL (logged) for a size or range no histogram can have.
#[no_mangle]
pub extern "C" fn sb_histogram_new(size: usize, range_min: f64, range_max: f64) -> *mut Histogram {
    guarded("sb_histogram_new", std::ptr::null_mut(), || match Histogram::new(size, range_min, range_max) {
        Some(histogram) => Box::into_raw(Box::new(histogram)),
        None => {
            let _ = writeln!(
                std::io::stderr(),
                "ALERT: sb_histogram_new({size}, {range_min}, {range_max}): a histogram has 1 to {MAX_SLOTS} \
                 slots and 0 < range_min < range_max: none made"
            );
            std::ptr::null_mut()
        }
    })
}

/// `void sb_histogram_delete(sb_histogram_t *h)`.
///
/// # Safety
///
/// `h` is NULL or came from [`sb_histogram_new`] and was not deleted.
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_delete(h: *mut Histogram) {
    guarded("sb_histogram_delete", (), || {
        if !h.is_null() {
            // SAFETY: the caller's promise above.
            drop(unsafe { Box::from_raw(h) });
        }
    })
}

/// `void sb_histogram_update(sb_histogram_t *h, double value)`. sysbench
/// picks one of its slot arrays with a draw from the thread's generator;
/// drawing here too keeps a seeded run's later draws sysbench's.
///
/// # Safety
///
/// `h` is NULL or a live histogram from [`sb_histogram_new`].
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_update(h: *mut Histogram, value: f64) {
    guarded("sb_histogram_update", (), || {
        // SAFETY: the caller's promise above.
        let Some(histogram) = (unsafe { live(h, "sb_histogram_update") }) else { return };
        with_state("sb_histogram_update", |ctx| ctx.rng.next_u64());
        histogram.update(value);
    })
}

/// `void sb_histogram_print(sb_histogram_t *h)`: to stdout, in order with
/// the reports.
///
/// # Safety
///
/// `h` is NULL or a live histogram from [`sb_histogram_new`].
#[no_mangle]
pub unsafe extern "C" fn sb_histogram_print(h: *mut Histogram) {
    guarded("sb_histogram_print", (), || {
        // SAFETY: the caller's promise above.
        let Some(histogram) = (unsafe { live(h, "sb_histogram_print") }) else { return };
        let _ = std::io::stdout().write_all(histogram.rows().as_bytes());
    })
}

/// The histogram `h` points to; NULL is logged.
///
/// # Safety
///
/// `h` is NULL or a live histogram from [`sb_histogram_new`].
unsafe fn live<'a>(h: *mut Histogram, function: &'static str) -> Option<&'a Histogram> {
    // SAFETY: the caller's promise above.
    let histogram = unsafe { h.as_ref() };
    if histogram.is_none() {
        alert_once(function, "null", format_args!("{function}(NULL): no histogram: nothing done"));
    }
    histogram
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_rows_as_sysbench_prints_them() {
        let h = Histogram::new(10, 1.0, 1000.0).unwrap();
        for v in [1.0, 1.0, 10.0, 5000.0, 0.001] {
            h.update(v);
        }
        let rows = h.rows();
        assert!(rows.starts_with("       value  ------------- distribution ------------- count\n"));
        assert!(rows.contains("       1.000 |**************************************** 3\n"), "{rows}");
        assert!(rows.contains("    1000.000 |*************                            1\n"), "{rows}");
        assert_eq!(Histogram::new(10, 1.0, 1000.0).unwrap().rows(), "");
    }

    #[test]
    fn a_histogram_no_range_fits_is_refused() {
        for (size, min, max) in [(0, 1.0, 2.0), (MAX_SLOTS + 1, 1.0, 2.0), (10, 0.0, 2.0), (10, 2.0, 2.0)] {
            assert!(Histogram::new(size, min, max).is_none(), "{size} {min} {max}");
            assert!(sb_histogram_new(size, min, max).is_null());
        }
        assert!(Histogram::new(10, 1.0, f64::NAN).is_none());
    }

    #[test]
    fn null_histograms_are_refused_without_crashing() {
        // SAFETY: NULL is allowed.
        unsafe {
            sb_histogram_update(std::ptr::null_mut(), 1.0);
            sb_histogram_print(std::ptr::null_mut());
            sb_histogram_delete(std::ptr::null_mut());
        }
    }
}

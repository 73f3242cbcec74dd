//! Ignored errors by the server's error code (`--mysql-ignore-errors`):
//! what the metrics' `wirebench_errors_total{code="1213"}` counts.
//!
//! A fixed table, so that recording an error costs a short scan and never
//! an allocation: a run meets a handful of codes (sysbench's default list
//! has three). Codes beyond the table's slots are counted together, as
//! `other`; errors counted without a code (a Lua script's own
//! `sb_counter_inc`) are the run's error total less these.

/// How many distinct codes are counted apart.
pub const CODE_SLOTS: usize = 16;

/// Errors by code, in the order each code was first met.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ErrorCodes {
    slots: [(u16, u64); CODE_SLOTS],
    used: usize,
    /// Errors whose code found no free slot.
    overflow: u64,
}

impl ErrorCodes {
    /// One error with code `code`.
    #[inline]
    pub fn record(&mut self, code: u16) {
        self.add(code, 1);
    }

    fn add(&mut self, code: u16, count: u64) {
        let used = self.used.min(CODE_SLOTS);
        if let Some(slot) = self.slots.iter_mut().take(used).find(|(c, _)| *c == code) {
            slot.1 += count;
        } else if let Some(slot) = self.slots.get_mut(used) {
            *slot = (code, count);
            self.used += 1;
        } else {
            self.overflow += count;
        }
    }

    pub fn merge(&mut self, other: &ErrorCodes) {
        for &(code, count) in other.codes() {
            self.add(code, count);
        }
        self.overflow += other.overflow;
    }

    pub fn reset(&mut self) {
        *self = ErrorCodes::default();
    }

    /// Each code met and its count, in the order first met.
    pub fn codes(&self) -> &[(u16, u64)] {
        self.slots.get(..self.used.min(CODE_SLOTS)).unwrap_or_default()
    }

    /// Errors whose code was not counted apart (the table was full).
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// Every error counted here.
    pub fn total(&self) -> u64 {
        self.codes().iter().map(|(_, n)| n).sum::<u64>() + self.overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_count_apart_in_the_order_met() {
        let mut a = ErrorCodes::default();
        for code in [1213, 1205, 1213, 1213] {
            a.record(code);
        }
        assert_eq!(a.codes(), [(1213, 3), (1205, 1)]);
        let mut b = ErrorCodes::default();
        b.record(1020);
        b.record(1205);
        a.merge(&b);
        assert_eq!(a.codes(), [(1213, 3), (1205, 2), (1020, 1)]);
        assert_eq!(a.total(), 6);
        a.reset();
        assert_eq!((a.codes(), a.total()), (&[][..], 0));
    }

    /// Past the table's slots, codes are counted together, none lost.
    #[test]
    fn a_full_table_counts_the_rest_together() {
        let mut codes = ErrorCodes::default();
        for code in 0..(CODE_SLOTS as u16 + 4) {
            codes.record(code);
        }
        codes.record(0);
        assert_eq!(codes.codes().len(), CODE_SLOTS);
        assert_eq!(codes.codes().first(), Some(&(0, 2)));
        assert_eq!(codes.overflow(), 4);
        assert_eq!(codes.total(), CODE_SLOTS as u64 + 5);
        let mut merged = ErrorCodes::default();
        merged.merge(&codes);
        assert_eq!(merged, codes);
    }
}

//! `--shard=I/N`: this instance's part of a run that N instances, started
//! on N client hosts, carry out together. Whatever the run has a total of
//! (connections, `--events`, `--rate`) is split so that the shards' parts
//! add up to it exactly: `total / N` each, the remainder one apiece to the
//! first shards, as a Kubernetes Indexed Job numbers them (from 0).

use std::fmt;
use std::ops::Range;

/// One of `count` parts of a run, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// A `--shard` that names no part of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("a run cannot be split into 0 shards: give --shards=N (or --shard=I/N) with N >= 1")]
    NoShards,
    #[error(
        "shard {index} of {count} does not exist: shards are numbered 0 to {last}, as a Kubernetes Indexed Job's \
         JOB_COMPLETION_INDEX is",
        last = count - 1
    )]
    IndexOutOfRange { index: u32, count: u32 },
}

impl Shard {
    /// The whole run, in one instance.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: u32, count: u32) -> Result<Self, ShardError> {
        match count {
            0 => Err(ShardError::NoShards),
            _ if index >= count => Err(ShardError::IndexOutOfRange { index, count }),
            _ => Ok(Shard { index, count }),
        }
    }

    pub fn index(self) -> u32 {
        self.index
    }

    pub fn count(self) -> u32 {
        self.count
    }

    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Which of `total` things, numbered from 0, are this shard's: a run of
    /// them, the first shards one longer when `total` does not divide.
    pub fn range(self, total: u64) -> Range<u64> {
        let (count, index) = (u64::from(self.count), u64::from(self.index));
        let (each, extra) = (total / count, total % count);
        let start = index * each + index.min(extra);
        start..start + each + u64::from(index < extra)
    }

    /// How many of `total` things are this shard's.
    pub fn share(self, total: u64) -> u64 {
        let range = self.range(total);
        range.end - range.start
    }

    /// This shard among the first `active` shards only (those that have a
    /// connection, when there are fewer connections than shards), or
    /// `None` when it is not one of them.
    pub fn among_first(self, active: u32) -> Option<Shard> {
        (self.index < active).then(|| Shard { index: self.index, count: self.count.min(active) })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::{Shard, ShardError};

    /// The shards' ranges tile 0..total in order, whatever the remainder.
    #[test]
    fn shares_add_up_to_the_total_without_overlap() {
        for count in 1..=7u32 {
            for total in [0u64, 1, 2, 3, 6, 7, 10, 100, 1001] {
                let mut next = 0;
                for index in 0..count {
                    let range = Shard::new(index, count).unwrap().range(total);
                    assert_eq!(range.start, next, "{index}/{count} of {total}");
                    let share = range.end - range.start;
                    assert!(share == total / u64::from(count) || share == total / u64::from(count) + 1);
                    next = range.end;
                }
                assert_eq!(next, total, "{count} shards of {total}");
            }
        }
        assert_eq!(Shard::new(0, 3).unwrap().range(10), 0..4);
        assert_eq!(Shard::new(2, 3).unwrap().range(10), 7..10);
        assert_eq!(Shard::WHOLE.range(5), 0..5);
    }

    #[test]
    fn a_shard_outside_the_run_is_refused() {
        assert_eq!(Shard::new(3, 2), Err(ShardError::IndexOutOfRange { index: 3, count: 2 }));
        assert_eq!(Shard::new(2, 2), Err(ShardError::IndexOutOfRange { index: 2, count: 2 }));
        assert_eq!(Shard::new(0, 0), Err(ShardError::NoShards));
        let text = Shard::new(3, 2).unwrap_err().to_string();
        assert!(text.contains("shards are numbered 0 to 1"), "{text}");
    }

    #[test]
    fn only_shards_with_connections_share_the_events() {
        let shard = Shard::new(1, 3).unwrap();
        assert_eq!(shard.among_first(2), Some(Shard::new(1, 2).unwrap()));
        assert_eq!(shard.among_first(1), None);
        assert_eq!(shard.among_first(5), Some(shard));
    }
}

//! What each statement is, for the per-statement report: the workload
//! knows (it wrote the SQL); the driver records each answer under its
//! statement's kind, and the statistics keep one count and one latency
//! histogram per kind, in the order of [`StatementKind::NAMES`].

/// The kinds of statement `oltp_common.lua` sends, and "other" for the
/// rest (select_random_* queries, the 0.4/0.5 workloads' extras, SET ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatementKind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    Insert,
    Begin,
    Commit,
    Other,
}

impl StatementKind {
    /// Every kind, in index order.
    #[cfg(test)]
    pub const ALL: [StatementKind; 12] = [
        StatementKind::PointSelect,
        StatementKind::SimpleRange,
        StatementKind::SumRange,
        StatementKind::OrderRange,
        StatementKind::DistinctRange,
        StatementKind::UpdateIndex,
        StatementKind::UpdateNonIndex,
        StatementKind::Delete,
        StatementKind::Insert,
        StatementKind::Begin,
        StatementKind::Commit,
        StatementKind::Other,
    ];

    /// The kinds' names, as reports and JSON show them; kind `k` is
    /// `NAMES[k.index()]`, and "other" comes last.
    pub const NAMES: &'static [&'static str] = &[
        "point_select",
        "simple_range",
        "sum_range",
        "order_range",
        "distinct_range",
        "update_index",
        "update_non_index",
        "delete",
        "insert",
        "begin",
        "commit",
        "other",
    ];

    /// The kind's position in [`ALL`](Self::ALL) and [`NAMES`](Self::NAMES).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    #[cfg(test)]
    pub fn name(self) -> &'static str {
        Self::NAMES.get(self.index()).copied().unwrap_or("other")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_order() {
        assert_eq!(StatementKind::ALL.len(), StatementKind::NAMES.len());
        for (i, kind) in StatementKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
        assert_eq!(StatementKind::UpdateNonIndex.name(), "update_non_index");
        assert_eq!(StatementKind::NAMES.last(), Some(&"other"));
    }
}

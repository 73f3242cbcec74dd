//! `oltp_common.lua`'s statements (`stmt_defs`) with their SQL text and
//! parameters, the `execute_*` groups that run them, and the steps an OLTP
//! test's event is planned in.

use wirebench_protocol::command::ParamSlot;

use super::common::{C_TEMPLATE, PAD_TEMPLATE};
use super::StatementKind;

/// One of `oltp_common.lua`'s `stmt_defs`, prepared once per table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OltpStatement {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl OltpStatement {
    pub(super) const COUNT: usize = 9;

    /// The Lua format string; `%u` is the table number.
    pub(crate) fn template(self) -> &'static str {
        match self {
            OltpStatement::PointSelect => "SELECT c FROM sbtest%u WHERE id=?",
            OltpStatement::SimpleRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?",
            OltpStatement::SumRange => "SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?",
            OltpStatement::OrderRange => "SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            OltpStatement::DistinctRange => "SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c",
            OltpStatement::IndexUpdate => "UPDATE sbtest%u SET k=k+1 WHERE id=?",
            OltpStatement::NonIndexUpdate => "UPDATE sbtest%u SET c=? WHERE id=?",
            OltpStatement::Delete => "DELETE FROM sbtest%u WHERE id=?",
            OltpStatement::Insert => "INSERT INTO sbtest%u (id, k, c, pad) VALUES (?, ?, ?, ?)",
        }
    }

    /// The per-statement report's kind.
    pub(crate) fn kind(self) -> StatementKind {
        match self {
            OltpStatement::PointSelect => StatementKind::PointSelect,
            OltpStatement::SimpleRange => StatementKind::SimpleRange,
            OltpStatement::SumRange => StatementKind::SumRange,
            OltpStatement::OrderRange => StatementKind::OrderRange,
            OltpStatement::DistinctRange => StatementKind::DistinctRange,
            OltpStatement::IndexUpdate => StatementKind::UpdateIndex,
            OltpStatement::NonIndexUpdate => StatementKind::UpdateNonIndex,
            OltpStatement::Delete => StatementKind::Delete,
            OltpStatement::Insert => StatementKind::Insert,
        }
    }

    pub(crate) fn sql(self, table: u32) -> String {
        self.template().replace("%u", &table.to_string())
    }

    /// The parameters as sysbench binds them; strings as long as the values
    /// `set_rand_str` writes (the templates), not the CHAR(120)/CHAR(60)
    /// buffer sizes.
    pub(crate) fn slots(self) -> Vec<ParamSlot> {
        const C: ParamSlot = ParamSlot::Bytes { len: C_TEMPLATE.len() };
        const PAD: ParamSlot = ParamSlot::Bytes { len: PAD_TEMPLATE.len() };
        match self {
            OltpStatement::PointSelect | OltpStatement::IndexUpdate | OltpStatement::Delete => vec![ParamSlot::Int64],
            OltpStatement::SimpleRange
            | OltpStatement::SumRange
            | OltpStatement::OrderRange
            | OltpStatement::DistinctRange => {
                vec![ParamSlot::Int64, ParamSlot::Int64]
            }
            OltpStatement::NonIndexUpdate => vec![C, ParamSlot::Int64],
            OltpStatement::Insert => vec![ParamSlot::Int64, ParamSlot::Int64, C, PAD],
        }
    }
}

/// One `execute_*` function of `oltp_common.lua`: a table drawn once, then
/// its statements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatementGroup {
    PointSelects,
    SimpleRanges,
    SumRanges,
    OrderRanges,
    DistinctRanges,
    IndexUpdates,
    NonIndexUpdates,
    /// `execute_delete_inserts`: a DELETE and an INSERT of the same id.
    DeleteInserts,
    /// `oltp_delete.lua`'s event: DELETE alone.
    Deletes,
}

impl StatementGroup {
    pub(super) fn statements(self) -> &'static [OltpStatement] {
        match self {
            StatementGroup::PointSelects => &[OltpStatement::PointSelect],
            StatementGroup::SimpleRanges => &[OltpStatement::SimpleRange],
            StatementGroup::SumRanges => &[OltpStatement::SumRange],
            StatementGroup::OrderRanges => &[OltpStatement::OrderRange],
            StatementGroup::DistinctRanges => &[OltpStatement::DistinctRange],
            StatementGroup::IndexUpdates => &[OltpStatement::IndexUpdate],
            StatementGroup::NonIndexUpdates => &[OltpStatement::NonIndexUpdate],
            StatementGroup::DeleteInserts => &[OltpStatement::Delete, OltpStatement::Insert],
            StatementGroup::Deletes => &[OltpStatement::Delete],
        }
    }
}

/// A step of an event, in the order the script's `event()` runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventStep {
    Begin,
    Commit,
    /// A group and how many times its statements run.
    Group(StatementGroup, u32),
}

impl EventStep {
    pub(super) fn sends_something(self) -> bool {
        match self {
            EventStep::Begin | EventStep::Commit => true,
            EventStep::Group(_, count) => count > 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::common::{C_TEMPLATE, PAD_TEMPLATE};
    use crate::workload::testkit::lua_script;

    #[test]
    fn statement_text_is_oltp_common_lua() {
        let Some(lua) = lua_script("oltp_common.lua") else { return };
        for statement in [
            OltpStatement::PointSelect,
            OltpStatement::SimpleRange,
            OltpStatement::SumRange,
            OltpStatement::OrderRange,
            OltpStatement::DistinctRange,
            OltpStatement::IndexUpdate,
            OltpStatement::NonIndexUpdate,
            OltpStatement::Delete,
            OltpStatement::Insert,
        ] {
            assert!(lua.contains(&format!("\"{}\"", statement.template())), "{statement:?} not in oltp_common.lua");
            assert_eq!(statement.sql(12), statement.template().replace("%u", "12"));
        }
        assert!(lua.contains(r#"con:prepare("COMMIT")"#));
        assert!(lua.contains(r#"con:prepare("BEGIN")"#));
        let c: String = C_TEMPLATE.iter().map(|&b| char::from(b)).collect();
        let pad: String = PAD_TEMPLATE.iter().map(|&b| char::from(b)).collect();
        let unquote = |s: &str| s.replace("\" ..\n   \"", "");
        assert!(unquote(&lua).contains(&format!("local c_value_template = \"{c}\"")));
        assert!(unquote(&lua).contains(&format!("local pad_value_template = \"{pad}\"")));
    }
}

//! Server responses: OK, ERR, EOF, column definitions, rows, whole result
//! sets, and the summary of an answer (with its rows' checksum).

pub mod answer_summary;
pub mod binary_row;
pub mod column;
pub mod err;
pub mod ok;
pub mod prepare_ok;
pub mod resultset;
pub mod row_checksum;
#[doc(hidden)]
pub mod testdata;
pub mod text_row;

pub use answer_summary::{
    AnswerForm, AnswerKind, AnswerSummariser, AnswerSummary, ColumnShape, PreparedSummary, SummaryProgress,
};
pub use binary_row::{BinaryRow, Value};
pub use column::{Column, ColumnDefinition};
pub use err::{ErrPacket, ServerError};
pub use ok::{EofPacket, OkPacket};
pub use prepare_ok::{PrepareOk, PrepareOutcome, PrepareResponse, PreparedStatement};
pub use resultset::{
    ErrorInfo, Outcome, Progress, QueryResult, Response, ResponseReader, ResultSet, ResultSetDecoder, Row, RowFormat,
};
pub use row_checksum::{RowChecksum, Xxh64};
pub use text_row::TextRow;

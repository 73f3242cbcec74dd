//! Server responses: OK, ERR, EOF, column definitions, rows, whole result sets.

pub mod binary_row;
pub mod column;
pub mod err;
pub mod ok;
pub mod prepare_ok;
pub mod resultset;
#[doc(hidden)]
pub mod testdata;
pub mod text_row;

pub use binary_row::{BinaryRow, Value};
pub use column::{Column, ColumnDefinition};
pub use err::{ErrPacket, ServerError};
pub use ok::{EofPacket, OkPacket};
pub use prepare_ok::{PrepareOk, PrepareOutcome, PrepareResponse, PreparedStatement};
pub use resultset::{
    ErrorInfo, Outcome, Progress, QueryResult, Response, ResponseReader, ResultSet, ResultSetDecoder, Row, RowFormat,
};
pub use text_row::TextRow;

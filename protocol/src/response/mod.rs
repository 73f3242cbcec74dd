//! Server responses: OK, ERR, EOF, column definitions, rows, whole result sets.

pub mod err;
pub mod ok;

pub use err::{ErrPacket, ServerError};
pub use ok::{EofPacket, OkPacket};

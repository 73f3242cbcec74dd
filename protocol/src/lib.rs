//! wirebench-protocol: the MySQL/MariaDB client protocol, sans-IO.
//!
//! The crate turns bytes into messages and commands into bytes; it owns no
//! socket, no runtime and no clock. Nonces, passwords and time come in as
//! arguments, so the same code runs under tokio, io_uring or a unit test.
//!
//! Contract for every decoder: it takes the bytes it has, returns `Ok(None)`
//! when more are needed, an error when the bytes can never form a valid
//! message, and it never panics, whatever the input. Encoders append to a
//! buffer the caller owns.
//!
//! Errors say whose fault they are ([`error`]): [`ProtocolError`] when the
//! peer broke the protocol, [`UsageError`] when the caller asked for
//! something the API cannot do, [`CodecError`] from the state machines,
//! which can fail both ways.
//!
//! Where things are: [`framing`], [`buf`] and [`constants`] under everything;
//! [`handshake`] for the login (its packets and the client's state
//! machine) with [`auth`] for the plugins; [`command`] for what the client
//! sends afterwards and [`response`] for what comes back; [`compress`] for
//! the compressed protocol; [`server_text`] for showing what a server
//! wrote without letting it drive the user's terminal; [`tolerance`] for
//! what a server may get wrong and still be served, as libmariadb serves it.

#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

pub mod auth;
pub mod buf;
pub mod command;
pub mod compress;
pub mod constants;
pub mod error;
pub mod framing;
pub mod handshake;
pub mod response;
pub mod server_text;
pub mod tolerance;

pub use constants::{Capabilities, ColumnFlags, ColumnType, StatusFlags};
pub use error::{CodecError, ProtocolError, UsageError};
pub use server_text::{ServerText, SERVER_TEXT_LIMIT};

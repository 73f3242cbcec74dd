//! Client commands: encoders for every command packet.
//!
//! Each encoder appends one complete packet, header included, to a buffer the
//! caller owns. Every command starts a new exchange, so its first packet
//! carries sequence id 0. Encoders whose payload can reach 16 MiB (a query, a
//! statement to prepare, an execute with large values) split it with
//! [`crate::framing::finish_packet`] and return the sequence id the server's
//! response will start with; fixed-size commands always answer from 1.

pub mod bulk_execute;
pub mod change_user;
pub mod close;
pub mod execute;
pub mod execute_params;
pub mod fetch;
pub mod field_list;
pub mod init_db;
pub mod local_infile;
pub mod ping;
pub mod placeholders;
pub mod prepare;
pub mod query;
pub mod quit;
pub mod reset;
pub mod reset_connection;
pub mod send_long_data;
pub mod set_option;
pub mod statistics;

pub use bulk_execute::{bulk_execute_head_len, encode_bulk_execute, push_bulk_row, SEND_TYPES_TO_SERVER};
pub use change_user::ChangeUser;
pub use close::encode_stmt_close;
pub use execute::{encode_execute, Date, DateTime, ExecuteTemplate, Param, ParamSlot, Time, NO_CURSOR};
pub use execute_params::{ExecuteParams, ParamValues};
pub use fetch::{encode_stmt_fetch, CURSOR_TYPE_READ_ONLY};
pub use field_list::encode_field_list;
pub use init_db::encode_init_db;
pub use local_infile::{accept_local_infile, encode_local_infile_data, local_infile_request};
pub use ping::encode_ping;
pub use placeholders::count_placeholders;
pub use prepare::encode_prepare;
pub use query::encode_query;
pub use quit::encode_quit;
pub use reset::encode_stmt_reset;
pub use reset_connection::encode_reset_connection;
pub use send_long_data::encode_send_long_data;
pub use set_option::{encode_set_option, MULTI_STATEMENTS_OFF, MULTI_STATEMENTS_ON};
pub use statistics::encode_statistics;

use crate::buf::WriteExt;
use crate::framing::{finish_packet, start_packet};

/// Appends a command whose payload is the command byte followed by `body`.
/// Returns the sequence id of the response's first packet.
fn encode_simple(out: &mut Vec<u8>, command: u8, body: &[u8]) -> u8 {
    let start = start_packet(out);
    out.put_u8(command);
    out.put_bytes(body);
    finish_packet(out, start, 0)
}

/// Appends a command that is its command byte alone (COM_PING, COM_QUIT,
/// COM_STATISTICS, COM_RESET_CONNECTION).
fn encode_bare_command(out: &mut Vec<u8>, command: u8) {
    let start = crate::framing::start_packet(out);
    out.push(command);
    crate::framing::finish_packet(out, start, 0);
}

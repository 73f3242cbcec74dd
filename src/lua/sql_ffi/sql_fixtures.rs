//! What the unit tests of the `db_*` functions share: a connection as a
//! script holds one, opened on no loop (so that a call to the server fails
//! as a lost loop would), and a text answer's packets as the loop keeps them.

use wirebench_protocol::Capabilities;

use super::sql_connection::db_connection_free;
use super::sql_structs::SqlConnection;
use crate::driver::OpenedConn;

/// The packet size the fixtures' connections were given.
pub(super) const FIXTURE_MAX_PACKET: usize = 1 << 24;

/// A connection as `db_connection_create` hands it to a script, with no
/// loop behind it: freed when dropped.
pub(super) struct FakeConn(pub(super) *mut SqlConnection);

impl FakeConn {
    pub(super) fn new() -> FakeConn {
        let opened = OpenedConn { id: 1, capabilities: Capabilities::DEPRECATE_EOF, max_packet: FIXTURE_MAX_PACKET };
        FakeConn(SqlConnection::boxed(opened))
    }

    pub(super) fn get(&mut self) -> &mut SqlConnection {
        // SAFETY: boxed by `new`, freed only by `drop`.
        unsafe { &mut *self.0 }
    }
}

impl Drop for FakeConn {
    fn drop(&mut self) {
        // SAFETY: made by SqlConnection::boxed, freed once.
        unsafe { db_connection_free(self.0) };
    }
}

/// A text result set's packets from sequence id 1, as the loop keeps a
/// query's answer (DEPRECATE_EOF: no EOF after the column definitions, an
/// OK headed 0xFE after the rows); `None` is SQL NULL.
pub(super) fn text_answer(columns: usize, rows: &[&[Option<&str>]]) -> Vec<u8> {
    let mut payloads: Vec<Vec<u8>> = vec![vec![columns as u8]];
    for n in 0..columns {
        // The definitions are skipped, not read: any bytes do.
        payloads.push(format!("column {n}").into_bytes());
    }
    for row in rows {
        let mut payload = Vec::new();
        for value in *row {
            match value {
                Some(text) => {
                    payload.push(text.len() as u8);
                    payload.extend_from_slice(text.as_bytes());
                }
                None => payload.push(0xFB),
            }
        }
        payloads.push(payload);
    }
    payloads.push(vec![0xFE, 0, 0, 2, 0, 0, 0]);
    let mut kept = Vec::new();
    for (seq, payload) in payloads.iter().enumerate() {
        kept.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
        kept.push(seq as u8 + 1);
        kept.extend_from_slice(payload);
    }
    kept
}

//! The compressed protocol (CLIENT_COMPRESS) as a transport layer. Not
//! implemented yet: the type has no values, so no connection can hold one.

use super::TransportError;

/// The zlib codec of one connection.
pub enum Zlib {}

impl Zlib {
    pub fn decode(&mut self, _wire: &[u8], _plain: &mut Vec<u8>) -> Result<usize, TransportError> {
        match *self {}
    }

    pub fn encode(&mut self, _plain: &[u8], _wire: &mut Vec<u8>) -> Result<(), TransportError> {
        match *self {}
    }
}

//! One fuzzed connection's socket: raw writes of whatever the session
//! built, reads with deadlines, and the compressed protocol once the login
//! negotiated it. It never trusts the server: a packet header announcing
//! more than [`MAX_ANSWER_PACKET`] ends the session instead of buffering.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use wirebench_protocol::compress::{inflate_payload, CompressedHeader, Inflater, COMPRESSED_HEADER_LEN};
use wirebench_protocol::framing::{Header, HEADER_LEN};

use super::frame::Wrapper;
use super::spec::WrapEdit;
use crate::client::{Endpoint, Stream};

/// The largest answer packet read; a larger announcement is garbled.
pub const MAX_ANSWER_PACKET: usize = 64 * 1024 * 1024;

/// Why a connection stopped giving answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// The server closed it.
    Closed,
    /// Reset, or a write failed.
    Reset,
    /// Nothing came before the deadline.
    Timeout,
    /// The bytes are no packet stream (a compressed packet that does not inflate, a huge header).
    Garbled,
}

/// A packet at the front of the read buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Front {
    pub seq: u8,
    pub len: usize,
}

#[derive(Debug)]
struct Compression {
    wrapper: Wrapper,
    inflater: Inflater,
}

#[derive(Debug)]
pub struct FuzzConn {
    stream: Stream,
    /// Bytes read and not yet inflated (compressed protocol only).
    wire: Vec<u8>,
    /// The packet stream read and not yet consumed.
    plain: Vec<u8>,
    compression: Option<Compression>,
}

impl FuzzConn {
    pub async fn open(endpoint: &Endpoint, timeout: Duration) -> io::Result<FuzzConn> {
        let stream = tokio::time::timeout(timeout, Stream::open(endpoint))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
        Ok(FuzzConn { stream, wire: Vec::new(), plain: Vec::new(), compression: None })
    }

    /// From now on both directions are compressed.
    pub fn start_compression(&mut self) {
        self.wire = std::mem::take(&mut self.plain);
        self.compression = Some(Compression { wrapper: Wrapper::default(), inflater: Inflater::new() });
    }

    /// Writes `bytes` (wrapped in compressed packets, broken by `wrap`, once
    /// compression is on) before `deadline`.
    pub async fn send(&mut self, bytes: &[u8], wrap: &[WrapEdit], deadline: Instant) -> Result<(), Gone> {
        let wrapped;
        let out = match &mut self.compression {
            Some(c) => {
                let mut buf = Vec::with_capacity(bytes.len() + 16);
                c.wrapper.wrap(bytes, wrap, &mut buf);
                wrapped = buf;
                &wrapped[..]
            }
            None => bytes,
        };
        match tokio::time::timeout_at(deadline, self.stream.write_all(out)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Gone::Reset),
            Err(_) => Err(Gone::Timeout),
        }
    }

    /// The packet at the front of the read buffer, once it is whole.
    pub fn front(&self) -> Result<Option<Front>, Gone> {
        let Some(header) = Header::parse(&self.plain) else { return Ok(None) };
        if header.len > MAX_ANSWER_PACKET {
            return Err(Gone::Garbled);
        }
        Ok((self.plain.len() >= HEADER_LEN + header.len).then_some(Front { seq: header.seq, len: header.len }))
    }

    /// The payload of the packet at the front (see [`front`](Self::front)).
    pub fn front_payload(&self, front: Front) -> &[u8] {
        self.plain.get(HEADER_LEN..HEADER_LEN + front.len).unwrap_or_default()
    }

    /// Drops the packet at the front.
    pub fn consume(&mut self, front: Front) {
        self.plain.drain(..(HEADER_LEN + front.len).min(self.plain.len()));
    }

    /// Reads more before `deadline`.
    pub async fn fill(&mut self, deadline: Instant) -> Result<(), Gone> {
        let mut chunk = [0u8; 16 * 1024];
        let n = match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
            Err(_) => return Err(Gone::Timeout),
            Ok(Err(_)) => return Err(Gone::Reset),
            Ok(Ok(0)) => return Err(Gone::Closed),
            Ok(Ok(n)) => n,
        };
        let read = chunk.get(..n).unwrap_or_default();
        match &mut self.compression {
            None => self.plain.extend_from_slice(read),
            Some(c) => {
                self.wire.extend_from_slice(read);
                inflate_available(&mut self.wire, &mut self.plain, &mut c.inflater)?;
            }
        }
        Ok(())
    }

    /// Closes the connection at once (a reset rather than a polite close is fine).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(50), self.stream.shutdown()).await;
    }
}

/// Moves the complete compressed packets of `wire` into `plain`, without
/// checking their sequence ids (fuzzed commands shift them).
fn inflate_available(wire: &mut Vec<u8>, plain: &mut Vec<u8>, inflater: &mut Inflater) -> Result<(), Gone> {
    let mut used = 0;
    while let Some(header) = wire.get(used..).and_then(CompressedHeader::parse) {
        if header.plain_len() > MAX_ANSWER_PACKET {
            return Err(Gone::Garbled);
        }
        let start = used + COMPRESSED_HEADER_LEN;
        let Some(payload) = wire.get(start..start + header.payload_len) else { break };
        inflate_payload(header, payload, plain, inflater).map_err(|_| Gone::Garbled)?;
        used = start + header.payload_len;
    }
    wire.drain(..used);
    Ok(())
}

//! What sits between the socket and the MySQL packet stream: nothing (the
//! usual case), zlib compression (`--mysql-compression=on`, CLIENT_COMPRESS,
//! once logged in), TLS (`--mysql-ssl`, from the login's SSLRequest on), or
//! TLS carrying compression.
//!
//! The async client and both engine backends move bytes through the same
//! [`Transport`]: what the socket delivered goes through [`Transport::decode`]
//! into the packet stream the protocol decoders walk, and the commands they
//! encode go through [`Transport::encode`] on their way to the socket. A
//! plain transport is never asked: callers check [`Transport::is_plain`] and
//! keep their one-buffer path, so plaintext runs pay nothing for it.
//!
//! Layer: just above the protocol crate, which is all it may import; owns
//! the TLS options ([`tls::TlsOptions`]).
//!
//! Files:
//! - `compress.rs`: the compressed protocol as a transport layer.
//! - `tls/`: TLS with rustls: the stream, and the client configuration
//!   from `--mysql-ssl*`.

mod compress;
pub(crate) mod tls;

pub(crate) use compress::with_thread_codec;
pub use tls::{client_tls, SslMode, TlsOptions};

use std::fmt;

use wirebench_protocol::ProtocolError;

use tls::{TlsError, TlsLayer};

/// A connection's layers below the packet stream, with their state.
pub struct Transport {
    /// The compressed protocol's codec, when CLIENT_COMPRESS was negotiated.
    zlib: Option<Box<compress::Zlib>>,
    /// TLS, from the login's SSLRequest on: the outermost layer.
    tls: Option<Box<TlsLayer>>,
    /// With TLS under compression: decrypted bytes the compression layer
    /// has not consumed yet (a partial compressed packet).
    decrypted: Vec<u8>,
    /// With compression over TLS: compressed bytes on their way to TLS.
    compressed: Vec<u8>,
    /// Packet-stream bytes decoded before the connection changed hands and
    /// not yet consumed: the next [`decode`](Self::decode) hands them out first.
    carried: Vec<u8>,
}

/// Why bytes could not pass through the transport.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The server's compressed packets broke the compressed protocol (bad
    /// header, sequence, length, or zlib data). The connection cannot be
    /// resynchronised: it must be closed.
    #[error("compressed protocol: {0}; the connection cannot continue (run without --mysql-compression to rule the compression out)")]
    Compression(#[from] ProtocolError),
    /// The TLS session failed: an alert from the server, a record that does
    /// not decrypt. The connection cannot continue.
    #[error("{0}; the connection cannot continue")]
    Tls(#[from] TlsError),
}

impl Transport {
    /// No layer: packet-stream bytes are the wire bytes.
    pub fn plain() -> Self {
        Transport { zlib: None, tls: None, decrypted: Vec::new(), compressed: Vec::new(), carried: Vec::new() }
    }

    /// The compressed protocol alone (CLIENT_COMPRESS was negotiated).
    pub fn compressed() -> Self {
        let mut transport = Transport::plain();
        transport.start_compression(&[]);
        transport
    }

    /// Adds the compressed protocol over what is there (nothing, or TLS)
    /// once the login is done. `decrypted`: bytes TLS already decrypted
    /// past the login's OK, the server's first compressed packets.
    pub fn start_compression(&mut self, decrypted: &[u8]) {
        self.zlib = Some(Box::new(compress::Zlib::new()));
        self.decrypted.extend_from_slice(decrypted);
    }

    /// Where the server's answer to the last command sent starts its
    /// sequence ids, when the transport decides it rather than the
    /// command's own packets: with compression the server numbers its
    /// answer after the compressed packets it read (1, unless the command
    /// was 16 MiB or more).
    pub fn answer_seq(&self) -> Option<u8> {
        self.zlib.as_ref().map(|zlib| zlib.answer_seq())
    }

    /// Compressed packets whose sequence id the server numbered its own way
    /// since the last call (tolerated, as libmariadb does).
    pub fn take_seq_jumps(&mut self) -> u32 {
        self.zlib.as_mut().map_or(0, |zlib| zlib.take_seq_jumps())
    }

    /// True when nothing sits between the socket and the packet stream: the
    /// caller passes its bytes through untouched and needs no second buffer.
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.zlib.is_none() && self.tls.is_none()
    }

    /// Puts TLS under everything else, once its handshake is done: every
    /// byte from now on, both ways, is a TLS record on the socket.
    pub fn start_tls(&mut self, layer: TlsLayer) {
        self.tls = Some(Box::new(layer));
    }

    /// The TLS session, when there is one (for its cipher and version).
    pub fn tls(&self) -> Option<&TlsLayer> {
        self.tls.as_deref()
    }

    /// Bytes read from the socket: appends the packet-stream bytes they
    /// carry to `plain`, and returns how many bytes of `wire` were consumed.
    /// The rest (a partial compressed packet) must be passed again, with
    /// what the socket delivers next.
    pub fn decode(&mut self, wire: &[u8], plain: &mut Vec<u8>) -> Result<usize, TransportError> {
        if !self.carried.is_empty() {
            plain.append(&mut self.carried);
        }
        match (&mut self.tls, &mut self.zlib) {
            (None, None) => {
                plain.extend_from_slice(wire);
                Ok(wire.len())
            }
            (None, Some(zlib)) => zlib.decode(wire, plain),
            (Some(tls), None) => Ok(tls.decode(wire, plain)?),
            (Some(tls), Some(zlib)) => {
                let used = tls.decode(wire, &mut self.decrypted)?;
                let inflated = zlib.decode(&self.decrypted, plain)?;
                self.decrypted.drain(..inflated);
                Ok(used)
            }
        }
    }

    /// Keeps packet-stream bytes that were decoded but not consumed when the
    /// connection is handed to another owner (the client to an event loop):
    /// the next [`decode`](Self::decode) appends them before anything else.
    /// Only for a transport that is not plain: a plain one's caller never
    /// decodes, and hands such bytes on itself.
    pub fn carry(&mut self, decoded: &[u8]) {
        self.carried.extend_from_slice(decoded);
    }

    /// Packet-stream bytes to send (whole packets: one or more commands):
    /// appends their wire form to `wire`.
    pub fn encode(&mut self, plain: &[u8], wire: &mut Vec<u8>) -> Result<(), TransportError> {
        match (&mut self.tls, &mut self.zlib) {
            (None, None) => {
                wire.extend_from_slice(plain);
                Ok(())
            }
            (None, Some(zlib)) => zlib.encode(plain, wire),
            (Some(tls), None) => Ok(tls.encode(plain, wire)?),
            (Some(tls), Some(zlib)) => {
                self.compressed.clear();
                zlib.encode(plain, &mut self.compressed)?;
                Ok(tls.encode(&self.compressed, wire)?)
            }
        }
    }
}

impl Default for Transport {
    fn default() -> Self {
        Transport::plain()
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").field("zlib", &self.zlib.is_some()).field("tls", &self.tls).finish()
    }
}

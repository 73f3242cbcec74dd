//! The copy of one direction of a pair that the tap reads. The proxy
//! forwards the packet stream as it came (compressed packets included);
//! once the login turned compression on, the tap reads what those
//! packets inflate to, and the copy inflates them, a whole compressed
//! packet at a time, with the thread's inflater.

use wirebench_protocol::compress::CompressedStream;
use wirebench_protocol::ProtocolError;

use crate::transport::with_thread_codec;

#[derive(Debug, Default)]
pub(super) struct TapCopy {
    stream: CompressedStream,
    /// A compressed packet's first bytes, until the rest comes.
    partial: Vec<u8>,
    inflated: Vec<u8>,
    /// Its compressed packets could not be read: the tap gets no more.
    broken: bool,
}

impl TapCopy {
    /// The packet-stream bytes `forwarded` carries for the tap: the bytes
    /// themselves, or, with `compressed`, what its whole compressed
    /// packets (with any held from before) inflate to. Once they fail to
    /// inflate (said once), nothing: the stream cannot be followed.
    pub(super) fn packets<'a>(&'a mut self, compressed: bool, forwarded: &'a [u8]) -> Result<&'a [u8], ProtocolError> {
        if self.broken {
            return Ok(&[]);
        }
        if !compressed {
            return Ok(forwarded);
        }
        self.partial.extend_from_slice(forwarded);
        self.inflated.clear();
        let (stream, partial, inflated) = (&mut self.stream, &self.partial, &mut self.inflated);
        let used = with_thread_codec(|inflater, _| stream.decode(partial, inflated, inflater));
        let used = used.inspect_err(|_| self.broken = true)?;
        self.partial.drain(..used);
        Ok(&self.inflated)
    }
}

#[cfg(test)]
mod tests {
    use wirebench_protocol::compress::Deflater;

    use super::*;

    /// Compressed packets split anywhere come out whole, once.
    #[test]
    fn compressed_packets_in_pieces_inflate_once() {
        let stream: Vec<u8> = [b"\x40\x01\0\0\x03".as_slice(), &[b'x'; 0x140 - 1]].concat();
        let mut wire = Vec::new();
        CompressedStream::new().encode(&stream, &mut wire, &mut Deflater::new());
        let mut copy = TapCopy::default();
        let mut out = Vec::new();
        for piece in wire.chunks(5) {
            out.extend_from_slice(copy.packets(true, piece).unwrap());
        }
        assert_eq!(out, stream);
        assert_eq!(copy.packets(false, b"as is").unwrap(), b"as is");
    }
}

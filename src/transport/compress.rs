//! The compressed protocol (CLIENT_COMPRESS) as a transport layer: the
//! protocol crate's [`CompressedStream`] keeps each connection's sequence
//! ids; the zlib state is the thread's.

use std::cell::Cell;

use wirebench_protocol::compress::{CompressedStream, Deflater, Inflater};

use super::TransportError;

/// The zlib codec of one connection.
#[derive(Debug, Default)]
pub struct Zlib {
    stream: CompressedStream,
}

/// One inflater and one deflater per thread, made on first use. Each
/// compressed packet is a zlib stream of its own, so nothing carries over
/// from one packet to the next, and a deflater is about 300 KB: too much to
/// give each of 10,000 connections.
#[derive(Default)]
struct Codec {
    inflater: Option<Inflater>,
    deflater: Option<Deflater>,
}

thread_local! {
    static CODEC: Cell<Codec> = Cell::new(Codec::default());
}

/// Runs `f` with the thread's codec, moved out for the call (two pointers)
/// and put back after; a fresh one if the thread's is out of reach (the
/// thread is exiting).
fn with_codec<T>(f: impl FnOnce(&mut Codec) -> T) -> T {
    let mut codec = CODEC.try_with(Cell::take).unwrap_or_default();
    let result = f(&mut codec);
    let _ = CODEC.try_with(|shared| shared.set(codec));
    result
}

/// Runs `f` with the thread's inflater and deflater (the null server's
/// compressed connections share them the same way).
pub(crate) fn with_thread_codec<T>(f: impl FnOnce(&mut Inflater, &mut Deflater) -> T) -> T {
    with_codec(|codec| {
        let inflater = codec.inflater.get_or_insert_with(Inflater::new);
        let deflater = codec.deflater.get_or_insert_with(Deflater::new);
        f(inflater, deflater)
    })
}

impl Zlib {
    pub fn new() -> Self {
        Zlib { stream: CompressedStream::new() }
    }

    /// Where the server's answer to the last command sent starts.
    pub fn answer_seq(&self) -> u8 {
        self.stream.answer_seq()
    }

    /// See [`CompressedStream::take_seq_jumps`].
    pub fn take_seq_jumps(&mut self) -> u32 {
        self.stream.take_seq_jumps()
    }

    pub fn decode(&mut self, wire: &[u8], plain: &mut Vec<u8>) -> Result<usize, TransportError> {
        let stream = &mut self.stream;
        with_codec(|codec| {
            let inflater = codec.inflater.get_or_insert_with(Inflater::new);
            stream.decode(wire, plain, inflater).map_err(TransportError::Compression)
        })
    }

    pub fn encode(&mut self, plain: &[u8], wire: &mut Vec<u8>) -> Result<(), TransportError> {
        let stream = &mut self.stream;
        with_codec(|codec| {
            let deflater = codec.deflater.get_or_insert_with(Deflater::new);
            stream.encode(plain, wire, deflater);
        });
        Ok(())
    }
}

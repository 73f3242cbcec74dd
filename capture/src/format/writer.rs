//! [`CaptureWriter`]: a capture onto any `Write`, block by block.

use std::io::Write;

use super::block::{BlockBuilder, BlockSettings, OutOfOrder};
use super::record::Record;
use super::{encode_header, CaptureHeader, Totals};

/// Why a capture could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    #[error(transparent)]
    OutOfOrder(#[from] OutOfOrder),
    #[error("could not write the capture: {0} (check the disk's space and the file's permissions)")]
    Io(#[from] std::io::Error),
}

/// Writes the header at once, then a block each time one fills; `flush`
/// seals a partial block (call it every second or so: a crash loses at
/// most what was not flushed); `finish` writes the end block, which tells
/// a reader the file is whole.
#[derive(Debug)]
pub struct CaptureWriter<W: Write> {
    out: W,
    blocks: BlockBuilder,
    sealed: Vec<u8>,
}

impl<W: Write> CaptureWriter<W> {
    pub fn create(mut out: W, header: &CaptureHeader, settings: BlockSettings) -> Result<Self, WriteError> {
        out.write_all(&encode_header(header))?;
        Ok(CaptureWriter { out, blocks: BlockBuilder::new(settings), sealed: Vec::new() })
    }

    /// Appends a record; it must not be earlier than the one before.
    pub fn append(&mut self, record: &Record<'_>) -> Result<(), WriteError> {
        self.blocks.push(record)?;
        if self.blocks.is_full() {
            self.write_block()?;
        }
        Ok(())
    }

    /// Seals the open block, writes it and flushes the output.
    pub fn flush(&mut self) -> Result<(), WriteError> {
        self.write_block()?;
        self.out.flush()?;
        Ok(())
    }

    fn write_block(&mut self) -> Result<(), WriteError> {
        self.sealed.clear();
        self.blocks.seal(&mut self.sealed);
        self.out.write_all(&self.sealed)?;
        Ok(())
    }

    pub fn totals(&self) -> Totals {
        self.blocks.totals()
    }

    /// Writes the last block and the end block; returns the output.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.sealed.clear();
        self.blocks.seal_end(&mut self.sealed);
        self.out.write_all(&self.sealed)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

//! The response to COM_STMT_PREPARE: COM_STMT_PREPARE_OK, then the
//! parameter definitions and the column definitions (each block followed by
//! an EOF unless DEPRECATE_EOF), or an ERR.

use crate::buf::{Reader, WriteExt};
use crate::constants::{Capabilities, StatusFlags};
use crate::error::{CodecError, ProtocolError, Result, UsageError};
use crate::framing::{finish_packet, start_packet};
use crate::response::column::{Column, ColumnDefinition};
use crate::response::err::{ErrPacket, ServerError, ERR_HEADER};
use crate::response::ok::{expect_eof, EofPacket, OK_HEADER};

/// The first packet of a successful prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PrepareOk {
    pub statement_id: u32,
    pub num_columns: u16,
    pub num_params: u16,
    pub warnings: u16,
}

impl PrepareOk {
    /// Parses the payload. The warning count is there when the packet is
    /// longer than 9 bytes (always, since MySQL 4.1); a MySQL 8 metadata
    /// flag after it (OPTIONAL_RESULTSET_METADATA, which we never ask for)
    /// is ignored.
    pub fn parse(payload: &[u8]) -> Result<Self> {
        let mut r = Reader::new(payload);
        let header = r.u8("PREPARE_OK header")?;
        if header != OK_HEADER {
            return Err(ProtocolError::BadHeader { context: "COM_STMT_PREPARE_OK", byte: header });
        }
        let statement_id = r.u32("PREPARE_OK statement id")?;
        let num_columns = r.u16("PREPARE_OK column count")?;
        let num_params = r.u16("PREPARE_OK parameter count")?;
        r.skip(1, "PREPARE_OK filler")?;
        let warnings = if r.remaining() >= 2 { r.u16("PREPARE_OK warnings")? } else { 0 };
        Ok(PrepareOk { statement_id, num_columns, num_params, warnings })
    }

    /// Appends the whole packet with sequence id `seq`; returns the next id.
    pub fn encode(&self, seq: u8, out: &mut Vec<u8>) -> u8 {
        let start = start_packet(out);
        out.put_u8(OK_HEADER);
        out.put_u32(self.statement_id);
        out.put_u16(self.num_columns);
        out.put_u16(self.num_params);
        out.put_u8(0);
        out.put_u16(self.warnings);
        finish_packet(out, start, seq)
    }
}

/// A prepared statement as the server described it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreparedStatement {
    pub ok: PrepareOk,
    pub params: Vec<Column>,
    pub columns: Vec<Column>,
}

impl PreparedStatement {
    pub fn statement_id(&self) -> u32 {
        self.ok.statement_id
    }

    /// Appends the whole response as a server sends it, starting at sequence
    /// id 1. The counts come from `ok`; `params` and `columns` should match them.
    pub fn encode_response(&self, caps: Capabilities, out: &mut Vec<u8>) -> u8 {
        let mut seq = self.ok.encode(1, out);
        for block in [&self.params, &self.columns] {
            if block.is_empty() {
                continue;
            }
            for col in block {
                seq = col.encode(caps, seq, out);
            }
            if !caps.contains(Capabilities::DEPRECATE_EOF) {
                seq = EofPacket { warnings: 0, status: StatusFlags::AUTOCOMMIT }.encode(caps, seq, out);
            }
        }
        seq
    }
}

/// How a prepare ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrepareOutcome {
    Prepared(PreparedStatement),
    Error(ServerError),
}

/// Where the walk through a prepare response stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PrepareState {
    Start,
    Params { left: u16 },
    ParamsEof,
    Columns { left: u16 },
    ColumnsEof,
    Done,
}

/// Vector capacity taken up front; the counts are the peer's.
const PREALLOCATE: usize = 64;

/// Packet-level reader of a COM_STMT_PREPARE response: feed it each logical
/// packet payload (framing and sequence ids are the caller's).
#[derive(Debug, Clone)]
pub struct PrepareResponse {
    caps: Capabilities,
    state: PrepareState,
    stmt: PreparedStatement,
}

impl PrepareResponse {
    pub fn new(caps: Capabilities) -> Self {
        PrepareResponse { caps, state: PrepareState::Start, stmt: PreparedStatement::default() }
    }

    /// Takes the next packet payload; returns the outcome once complete.
    /// A reader reads one response: use a new one for the next.
    pub fn feed(&mut self, payload: &[u8]) -> Result<Option<PrepareOutcome>, CodecError> {
        match self.state {
            PrepareState::Start => {
                if payload.first() == Some(&ERR_HEADER) {
                    self.state = PrepareState::Done;
                    return Ok(Some(PrepareOutcome::Error(ErrPacket::parse(payload)?.to_owned())));
                }
                let ok = PrepareOk::parse(payload)?;
                self.stmt.ok = ok;
                self.stmt.params = Vec::with_capacity(usize::from(ok.num_params).min(PREALLOCATE));
                self.stmt.columns = Vec::with_capacity(usize::from(ok.num_columns).min(PREALLOCATE));
                Ok(self.enter_params())
            }
            PrepareState::Params { left } => {
                self.stmt.params.push(ColumnDefinition::parse(payload, self.caps)?.into_owned());
                if left > 1 {
                    self.state = PrepareState::Params { left: left - 1 };
                    Ok(None)
                } else if self.caps.contains(Capabilities::DEPRECATE_EOF) {
                    Ok(self.enter_columns())
                } else {
                    self.state = PrepareState::ParamsEof;
                    Ok(None)
                }
            }
            PrepareState::ParamsEof => {
                expect_eof(payload, self.caps, "EOF after parameter definitions")?;
                Ok(self.enter_columns())
            }
            PrepareState::Columns { left } => {
                self.stmt.columns.push(ColumnDefinition::parse(payload, self.caps)?.into_owned());
                if left > 1 {
                    self.state = PrepareState::Columns { left: left - 1 };
                    Ok(None)
                } else if self.caps.contains(Capabilities::DEPRECATE_EOF) {
                    Ok(self.finish())
                } else {
                    self.state = PrepareState::ColumnsEof;
                    Ok(None)
                }
            }
            PrepareState::ColumnsEof => {
                expect_eof(payload, self.caps, "EOF after column definitions")?;
                Ok(self.finish())
            }
            PrepareState::Done => Err(UsageError::OutOfOrder {
                call: "PrepareResponse::feed",
                state: "the prepare response was complete",
                remedy: "read the next one with a new PrepareResponse",
            }
            .into()),
        }
    }

    fn enter_params(&mut self) -> Option<PrepareOutcome> {
        match self.stmt.ok.num_params {
            0 => self.enter_columns(),
            left => {
                self.state = PrepareState::Params { left };
                None
            }
        }
    }

    fn enter_columns(&mut self) -> Option<PrepareOutcome> {
        match self.stmt.ok.num_columns {
            0 => self.finish(),
            left => {
                self.state = PrepareState::Columns { left };
                None
            }
        }
    }

    fn finish(&mut self) -> Option<PrepareOutcome> {
        self.state = PrepareState::Done;
        Some(PrepareOutcome::Prepared(std::mem::take(&mut self.stmt)))
    }
}

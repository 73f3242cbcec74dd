//! What the capture's reader hands a loop: its connections' records, in
//! capture order, as items packed into batches of bytes. A batch goes from
//! the reader to the loop and back empty, so nothing is allocated per
//! record once the batches have grown; the queue between them holds a
//! few batches, so a loop that falls behind holds the reader back (and so
//! the whole replay: records are in time order) instead of the reader
//! filling the memory.
//!
//! An item (all integers little-endian):
//!
//! ```text
//! OPEN     1  conn u64  offset_ns u64  login u32  flags u8  charset u8  capabilities u64  db_len u16  db
//! COMMAND  2  conn u64  offset_ns u64  statement u32  flags u8  len u32  payload
//! ANSWER   3  conn u64  kind u8  present u8  error u16  affected u64  rows u64  checksum u64  prepared u32
//! CLOSE    4  conn u64  offset_ns u64
//! ```
//!
//! `conn` is the replayed connection's id (a capture's connection, or one
//! of its `--multiply` copies); `offset_ns` is the record's time since the
//! capture's first record; `statement` indexes the replay's statement
//! table. A connection's items after its OPEN are copied as they are into
//! its own queue ([`ReplayedConn`](super::replayed_conn::ReplayedConn)).

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wirebench_capture::format::{answer_kind_code, answer_kind_of};
use wirebench_protocol::response::AnswerKind;

/// The replayed connection's id.
pub type ReplayConnId = u64;

const OPEN: u8 = 1;
const COMMAND: u8 = 2;
const ANSWER: u8 = 3;
const CLOSE: u8 = 4;

/// The capture's connection was open before the capture began.
pub const OPEN_ALREADY: u8 = 1;

/// The capture has this command's answer: an ANSWER item follows it.
pub const COMMAND_ANSWER_CAPTURED: u8 = 1;

/// What the capture says of a command's answer; a field the source does
/// not have (a log) is `None`, never zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CapturedAnswer {
    pub kind: Option<AnswerKind>,
    /// The error's code, when the answer was an error.
    pub error: Option<u16>,
    pub affected_rows: Option<u64>,
    pub rows: Option<u64>,
    pub row_checksum: Option<u64>,
    /// A prepare's statement id in the capture.
    pub prepared: Option<u32>,
}

const HAS_ERROR: u8 = 1;
const HAS_AFFECTED: u8 = 2;
const HAS_ROWS: u8 = 4;
const HAS_CHECKSUM: u8 = 8;
const HAS_PREPARED: u8 = 16;

/// One item, borrowed from a batch or a connection's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedItem<'a> {
    Open(OpenItem<'a>),
    Command(CommandItem<'a>),
    Answer { conn: ReplayConnId, answer: CapturedAnswer },
    Close { conn: ReplayConnId, offset_ns: u64 },
}

/// A connection to open: when, as whom (an index into the replay's
/// logins), into which database, with which session settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenItem<'a> {
    pub conn: ReplayConnId,
    pub offset_ns: u64,
    pub login: u32,
    pub flags: u8,
    /// The captured login's collation id; 0 when the capture does not say.
    pub charset: u8,
    /// The captured client's capabilities; 0 when the capture does not say.
    pub capabilities: u64,
    /// The captured login's database; empty for none.
    pub database: &'a [u8],
}

/// A command to send at its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandItem<'a> {
    pub conn: ReplayConnId,
    pub offset_ns: u64,
    pub statement: u32,
    pub flags: u8,
    /// The command packet's payload, its command byte first.
    pub payload: &'a [u8],
}

impl FeedItem<'_> {
    pub fn conn(&self) -> ReplayConnId {
        match self {
            FeedItem::Open(open) => open.conn,
            FeedItem::Command(command) => command.conn,
            FeedItem::Answer { conn, .. } | FeedItem::Close { conn, .. } => *conn,
        }
    }

    /// Appends the item's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            FeedItem::Open(open) => {
                out.push(OPEN);
                out.extend_from_slice(&open.conn.to_le_bytes());
                out.extend_from_slice(&open.offset_ns.to_le_bytes());
                out.extend_from_slice(&open.login.to_le_bytes());
                out.push(open.flags);
                out.push(open.charset);
                out.extend_from_slice(&open.capabilities.to_le_bytes());
                let database = open.database.get(..usize::from(u16::MAX)).unwrap_or(open.database);
                out.extend_from_slice(&(database.len() as u16).to_le_bytes());
                out.extend_from_slice(database);
            }
            FeedItem::Command(command) => {
                out.push(COMMAND);
                out.extend_from_slice(&command.conn.to_le_bytes());
                out.extend_from_slice(&command.offset_ns.to_le_bytes());
                out.extend_from_slice(&command.statement.to_le_bytes());
                out.push(command.flags);
                out.extend_from_slice(&(command.payload.len() as u32).to_le_bytes());
                out.extend_from_slice(command.payload);
            }
            FeedItem::Answer { conn, answer } => {
                out.push(ANSWER);
                out.extend_from_slice(&conn.to_le_bytes());
                out.push(answer_kind_code(answer.kind));
                let present = bit(answer.error.is_some(), HAS_ERROR)
                    | bit(answer.affected_rows.is_some(), HAS_AFFECTED)
                    | bit(answer.rows.is_some(), HAS_ROWS)
                    | bit(answer.row_checksum.is_some(), HAS_CHECKSUM)
                    | bit(answer.prepared.is_some(), HAS_PREPARED);
                out.push(present);
                out.extend_from_slice(&answer.error.unwrap_or(0).to_le_bytes());
                out.extend_from_slice(&answer.affected_rows.unwrap_or(0).to_le_bytes());
                out.extend_from_slice(&answer.rows.unwrap_or(0).to_le_bytes());
                out.extend_from_slice(&answer.row_checksum.unwrap_or(0).to_le_bytes());
                out.extend_from_slice(&answer.prepared.unwrap_or(0).to_le_bytes());
            }
            FeedItem::Close { conn, offset_ns } => {
                out.push(CLOSE);
                out.extend_from_slice(&conn.to_le_bytes());
                out.extend_from_slice(&offset_ns.to_le_bytes());
            }
        }
    }

    /// The item at the start of `bytes` and its length; `None` for bytes
    /// that are no whole item (the feed writes only whole ones).
    pub fn parse(bytes: &[u8]) -> Option<(FeedItem<'_>, usize)> {
        let mut r = Reader { bytes, at: 0 };
        let item = match r.u8()? {
            OPEN => {
                let (conn, offset_ns, login) = (r.u64()?, r.u64()?, r.u32()?);
                let (flags, charset, capabilities) = (r.u8()?, r.u8()?, r.u64()?);
                let len = usize::from(r.u16()?);
                FeedItem::Open(OpenItem {
                    conn,
                    offset_ns,
                    login,
                    flags,
                    charset,
                    capabilities,
                    database: r.take(len)?,
                })
            }
            COMMAND => {
                let (conn, offset_ns, statement, flags) = (r.u64()?, r.u64()?, r.u32()?, r.u8()?);
                let len = r.u32()? as usize;
                FeedItem::Command(CommandItem { conn, offset_ns, statement, flags, payload: r.take(len)? })
            }
            ANSWER => {
                let (conn, kind, present, error) = (r.u64()?, r.u8()?, r.u8()?, r.u16()?);
                let (affected, rows, checksum, prepared) = (r.u64()?, r.u64()?, r.u64()?, r.u32()?);
                let has = |flag: u8| present & flag != 0;
                let answer = CapturedAnswer {
                    kind: answer_kind_of(kind),
                    error: has(HAS_ERROR).then_some(error),
                    affected_rows: has(HAS_AFFECTED).then_some(affected),
                    rows: has(HAS_ROWS).then_some(rows),
                    row_checksum: has(HAS_CHECKSUM).then_some(checksum),
                    prepared: has(HAS_PREPARED).then_some(prepared),
                };
                FeedItem::Answer { conn, answer }
            }
            CLOSE => FeedItem::Close { conn: r.u64()?, offset_ns: r.u64()? },
            _ => return None,
        };
        Some((item, r.at))
    }
}

fn bit(present: bool, flag: u8) -> u8 {
    if present {
        flag
    } else {
        0
    }
}

/// Bounds-checked little-endian reads.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// How full a batch gets before it is handed over.
pub const BATCH_BYTES: usize = 64 << 10;

/// The queue of batches between the reader and one loop.
#[derive(Debug)]
struct Shelf {
    full: VecDeque<Vec<u8>>,
    empty: Vec<Vec<u8>>,
    /// The reader is done: no more batches come.
    ended: bool,
    /// The loop is gone: nothing it is handed is read.
    closed: bool,
}

/// The reader's end and the loop's end of one loop's feed share this.
#[derive(Debug)]
struct FeedQueue {
    shelf: Mutex<Shelf>,
    room: Condvar,
    /// At most this many full batches wait for the loop.
    depth: usize,
}

impl FeedQueue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shelf> {
        self.shelf.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The reader's end of a loop's feed.
#[derive(Debug, Clone)]
pub struct FeedSender(Arc<FeedQueue>);

/// The loop's end of its feed.
#[derive(Debug)]
pub struct FeedReceiver(Arc<FeedQueue>);

/// A feed that holds at most `depth` full batches.
pub fn feed_channel(depth: usize) -> (FeedSender, FeedReceiver) {
    let shelf = Shelf { full: VecDeque::new(), empty: Vec::new(), ended: false, closed: false };
    let queue = Arc::new(FeedQueue { shelf: Mutex::new(shelf), room: Condvar::new(), depth: depth.max(1) });
    (FeedSender(queue.clone()), FeedReceiver(queue))
}

/// Why a batch was not handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendRefused {
    /// The loop is gone.
    Closed,
    /// The queue stayed full until the deadline.
    Full,
}

impl FeedSender {
    /// Hands `batch` over, waiting for room until `deadline`; an empty
    /// batch to fill next comes back (a recycled one when the loop has
    /// returned some).
    pub fn send(&self, batch: Vec<u8>, deadline: Instant) -> Result<Vec<u8>, (Vec<u8>, SendRefused)> {
        let mut shelf = self.0.lock();
        loop {
            if shelf.closed {
                return Err((batch, SendRefused::Closed));
            }
            if shelf.full.len() < self.0.depth {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err((batch, SendRefused::Full));
            }
            shelf = self.0.room.wait_timeout(shelf, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        shelf.full.push_back(batch);
        Ok(shelf.empty.pop().unwrap_or_else(|| Vec::with_capacity(BATCH_BYTES + 1024)))
    }

    /// No more batches come.
    pub fn end(&self) {
        self.0.lock().ended = true;
    }

    /// Whether the loop is gone.
    pub fn is_closed(&self) -> bool {
        self.0.lock().closed
    }
}

impl FeedReceiver {
    /// Moves the batches that wait into `into` (oldest first); whether the
    /// feed has ended (then nothing more comes after these).
    pub fn take(&self, into: &mut Vec<Vec<u8>>) -> bool {
        let mut shelf = self.0.lock();
        let taken = !shelf.full.is_empty();
        into.extend(shelf.full.drain(..));
        let ended = shelf.ended;
        drop(shelf);
        if taken {
            self.0.room.notify_all();
        }
        ended
    }

    /// Gives read batches back, emptied, for the reader to fill again.
    pub fn recycle(&self, batches: &mut Vec<Vec<u8>>) {
        let mut shelf = self.0.lock();
        for mut batch in batches.drain(..) {
            batch.clear();
            if shelf.empty.len() < self.0.depth + 2 {
                shelf.empty.push(batch);
            }
        }
    }
}

impl Drop for FeedReceiver {
    /// The loop is gone: the reader stops waiting for room in its queue.
    fn drop(&mut self) {
        let mut shelf = self.0.lock();
        shelf.closed = true;
        shelf.full.clear();
        drop(shelf);
        self.0.room.notify_all();
    }
}

/// How long the reader waits for a full queue before it looks at the run
/// again (a stop, the end of `--time`).
pub const SEND_PATIENCE: Duration = Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<FeedItem<'static>> {
        vec![
            FeedItem::Open(OpenItem {
                conn: 7,
                offset_ns: 10,
                login: 1,
                flags: OPEN_ALREADY,
                charset: 45,
                capabilities: 0x1_0000_0200,
                database: b"sbtest",
            }),
            FeedItem::Command(CommandItem {
                conn: 7,
                offset_ns: 20,
                statement: 3,
                flags: COMMAND_ANSWER_CAPTURED,
                payload: b"\x03SELECT 1",
            }),
            FeedItem::Answer {
                conn: 7,
                answer: CapturedAnswer {
                    kind: Some(AnswerKind::ResultSet),
                    rows: Some(1),
                    row_checksum: Some(u64::MAX),
                    ..CapturedAnswer::default()
                },
            },
            FeedItem::Answer {
                conn: 7,
                answer: CapturedAnswer { kind: None, error: Some(1062), affected_rows: Some(0), ..Default::default() },
            },
            FeedItem::Close { conn: 7, offset_ns: 30 },
        ]
    }

    #[test]
    fn items_round_trip_and_cut_ones_are_refused() {
        let mut bytes = Vec::new();
        for item in samples() {
            item.encode(&mut bytes);
        }
        let mut at = 0;
        for item in samples() {
            let (read, len) = FeedItem::parse(&bytes[at..]).unwrap();
            assert_eq!(read, item);
            for cut in 0..len {
                assert_eq!(FeedItem::parse(&bytes[at..at + cut]), None, "cut at {cut}");
            }
            at += len;
        }
        assert_eq!(at, bytes.len());
        assert_eq!(FeedItem::parse(&[9, 0, 0]), None);
    }

    #[test]
    fn a_full_feed_holds_the_reader_until_the_loop_takes_or_goes() {
        let (sender, receiver) = feed_channel(1);
        let soon = Instant::now() + Duration::from_millis(5);
        let batch = sender.send(vec![1], soon).unwrap();
        let (refused, why) = sender.send(vec![2], soon).unwrap_err();
        assert_eq!((refused, why), (vec![2], SendRefused::Full));
        let mut taken = Vec::new();
        assert!(!receiver.take(&mut taken));
        assert_eq!(taken, [vec![1]]);
        receiver.recycle(&mut taken);
        let recycled = sender.send(vec![3], soon).unwrap();
        assert!(recycled.is_empty() && batch.is_empty());
        sender.end();
        assert!(receiver.take(&mut taken));
        drop(receiver);
        assert_eq!(sender.send(vec![4], soon).unwrap_err().1, SendRefused::Closed);
        assert!(sender.is_closed());
    }
}

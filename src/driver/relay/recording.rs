//! The recording thread: the loops' batches of records in, merged in time
//! order ([`RecordMerge`]), out through one [`CaptureWriter`] into the
//! file. It seals a block at least every `flush_every` (a crash loses at
//! most that much), asks for the recording to stop once the file reaches
//! `max_bytes`, and finishes the file (its end block) once every loop has
//! sent its last batch. It counts what it writes ([`TrafficCount`]) and
//! hands the counts to `progress` at each block it seals and at the end.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::rc::Rc;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use wirebench_capture::format::{BlockSettings, CaptureHeader, CaptureWriter, Record, RecordMerge, Totals, WriteError};
use wirebench_capture::import::ImportReport;

use super::traffic_count::TrafficCount;
use crate::stats::RelayCounts;

/// Batches in flight per loop before a loop waits for the file: a disk
/// slower than the traffic slows the proxy rather than losing records.
const SHIPMENTS_PER_LOOP: usize = 64;

/// A loop's records since its last batch.
#[derive(Debug)]
pub struct Shipment {
    /// The loop's index.
    pub source: usize,
    /// In the loop's time order.
    pub records: Vec<Record<'static>>,
    /// No record the loop sends later is earlier than this.
    pub through_ns: u64,
    /// With its last batch: what the loop's taps counted.
    pub last: Option<ImportReport>,
    /// Applications the loop answered ERR 2003 since its last batch.
    pub upstream_failures: u64,
}

/// How the file is written.
#[derive(Debug, Clone)]
pub struct RecordingSettings {
    pub header: CaptureHeader,
    pub blocks: BlockSettings,
    /// Ask for the stop once the file has this many bytes (`--max-size`).
    pub max_bytes: Option<u64>,
    /// Seal a block at least this often.
    pub flush_every: Duration,
}

/// Takes the proxy's counts as the recording goes (the watch's feed).
pub type RecordingProgress = Box<dyn FnMut(&RelayCounts) + Send>;

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct RecordingSummary {
    pub totals: Totals,
    /// The taps' counts, every loop's summed.
    pub counts: ImportReport,
    pub bytes: u64,
    /// The file reached `max_bytes`.
    pub full: bool,
    /// What went through the proxy.
    pub traffic: RelayCounts,
}

/// Why the file could not be written; it holds what was written before,
/// readable to its last whole block.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("the recording thread failed: {0}")]
    Thread(String),
}

/// The recording thread, started: where the loops send, and its end.
pub struct RecordingThread {
    pub inlet: SyncSender<Shipment>,
    pub thread: JoinHandle<Result<RecordingSummary, RecordingError>>,
}

/// Starts the thread writing `file` with the records of `loops` loops;
/// `stop` is called when the file is full or cannot be written.
pub fn start_recording(
    file: File,
    settings: RecordingSettings,
    loops: usize,
    stop: impl Fn() + Send + 'static,
    progress: RecordingProgress,
) -> io::Result<RecordingThread> {
    let (inlet, shipments) = sync_channel(SHIPMENTS_PER_LOOP * loops.max(1));
    let thread = std::thread::Builder::new()
        .name("wirebench-recording".into())
        .spawn(move || write_shipments(file, &settings, loops, (&shipments, progress), &stop))?;
    Ok(RecordingThread { inlet, thread })
}

/// The file's bytes as they are written.
struct Counted {
    out: BufWriter<File>,
    written: Rc<Cell<u64>>,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.written.set(self.written.get() + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn write_shipments(
    file: File,
    settings: &RecordingSettings,
    loops: usize,
    (shipments, mut progress): (&Receiver<Shipment>, RecordingProgress),
    stop: &dyn Fn(),
) -> Result<RecordingSummary, RecordingError> {
    let written = Rc::new(Cell::new(0));
    let out = Counted { out: BufWriter::with_capacity(1 << 20, file), written: written.clone() };
    let writer = CaptureWriter::create(out, &settings.header, settings.blocks)?;
    let mut file = MergedFile { writer, last_ns: 0, traffic: TrafficCount::default() };
    let mut merge = RecordMerge::new(loops);
    let mut summary = RecordingSummary::default();
    let mut failed: Option<WriteError> = None;
    let mut next_flush = Instant::now() + settings.flush_every;
    while !merge.is_done() {
        match shipments.recv_timeout(next_flush.saturating_duration_since(Instant::now())) {
            Ok(shipment) => take_shipment(&mut merge, shipment, &mut summary.counts, &mut file.traffic),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if failed.is_some() {
            // The loops must not wait on a file that takes nothing more.
            while merge.pop_ready().is_some() {}
        } else {
            match file.write_ready(&mut merge, &mut next_flush, settings.flush_every) {
                Ok(true) => progress(file.traffic.now(written.get())),
                Ok(false) => {}
                Err(e) => {
                    failed = Some(e);
                    stop();
                }
            }
        }
        let full = settings.max_bytes.is_some_and(|max| written.get() >= max);
        if full && !summary.full && failed.is_none() {
            summary.full = true;
            stop();
        }
    }
    // A loop gone without its last batch (its thread failed) promises no more.
    (0..loops).for_each(|source| merge.end(source));
    if let Some(e) = failed {
        return Err(e.into());
    }
    file.write_ready(&mut merge, &mut next_flush, settings.flush_every)?;
    summary.totals = file.writer.totals();
    let out = file.writer.finish()?;
    out.out.into_inner().map_err(|e| WriteError::Io(e.into_error()))?.sync_data().map_err(WriteError::Io)?;
    summary.bytes = written.get();
    summary.traffic = file.traffic.now(summary.bytes).clone();
    progress(&summary.traffic);
    Ok(summary)
}

fn take_shipment(merge: &mut RecordMerge, shipment: Shipment, counts: &mut ImportReport, traffic: &mut TrafficCount) {
    let Shipment { source, records, through_ns, last, upstream_failures } = shipment;
    merge.add(source, records, through_ns);
    traffic.add_upstream_failures(upstream_failures);
    if let Some(loop_counts) = last {
        merge.end(source);
        counts.merge(loop_counts);
    }
}

/// The capture writer, the time of the last record it took, and the
/// count of what it took.
struct MergedFile {
    writer: CaptureWriter<Counted>,
    last_ns: u64,
    traffic: TrafficCount,
}

impl MergedFile {
    /// Writes the records every loop has promised past, and seals a block
    /// when one is due: whether it sealed one.
    fn write_ready(
        &mut self,
        merge: &mut RecordMerge,
        next_flush: &mut Instant,
        every: Duration,
    ) -> Result<bool, WriteError> {
        while let Some(mut record) = merge.pop_ready() {
            // A loop's records are dated from one monotonic clock as they
            // are made; this only guards the file's order.
            if record.at_ns() < self.last_ns {
                record.set_at_ns(self.last_ns);
            }
            self.last_ns = record.at_ns();
            self.traffic.count(&record);
            self.writer.append(&record)?;
        }
        if Instant::now() < *next_flush {
            return Ok(false);
        }
        self.writer.flush()?;
        *next_flush = Instant::now() + every;
        Ok(true)
    }
}

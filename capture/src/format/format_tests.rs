//! The file as a whole: round trips, and every way a file can be cut or damaged.

use std::borrow::Cow;

use super::*;

fn command(at_ns: u64, conn: ConnId, sql: &str) -> Record<'static> {
    let mut payload = vec![3u8];
    payload.extend_from_slice(sql.as_bytes());
    Record::Command(Command { at_ns, conn, answer_follows: true, payload: Cow::Owned(payload), ..Command::default() })
}

/// A capture of `n` commands on three connections, in blocks of about `target` bytes.
fn capture(n: u64, settings: BlockSettings) -> (Vec<u8>, Vec<Record<'static>>) {
    let mut records = Vec::new();
    for conn in 0..3 {
        records.push(Record::Open(ConnectionOpen {
            at_ns: 1_700_000_000_000_000_000,
            conn,
            user: Some(Cow::Borrowed(b"app")),
            ..ConnectionOpen::default()
        }));
    }
    for i in 0..n {
        let at = 1_700_000_000_000_000_000 + i * 1_000;
        records.push(command(at, i % 3, &format!("SELECT c FROM sbtest1 WHERE id={}", i * 7919 % 100_000)));
        records.push(Record::Answer(Answer {
            at_ns: at + 400,
            conn: i % 3,
            kind: Some(wirebench_protocol::response::AnswerKind::ResultSet),
            rows: Some(1),
            row_checksum: Some(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            ..Answer::default()
        }));
    }
    let mut header = CaptureHeader::new(Source::Pcap, "test.pcap");
    header.writer = "wirebench test".into();
    header.time_resolution_ns = 1000;
    let mut writer = CaptureWriter::create(Vec::new(), &header, settings).unwrap();
    for record in &records {
        writer.append(record).unwrap();
    }
    (writer.finish().unwrap(), records)
}

fn small_blocks() -> BlockSettings {
    BlockSettings { target_bytes: 2_000, level: 1 }
}

/// Everything a reader gets from `bytes`: the records, then how it ended.
fn read_all(bytes: &[u8]) -> Result<(Vec<Record<'static>>, Ending), ReadError> {
    let mut reader = CaptureReader::open(bytes)?;
    let mut records = Vec::new();
    while let Some(record) = reader.next_record()? {
        records.push(record.into_owned());
    }
    Ok((records, reader.ending().cloned().unwrap()))
}

#[test]
fn records_come_back_in_order_with_the_totals() {
    for settings in [small_blocks(), BlockSettings { target_bytes: 2_000, level: 0 }, BlockSettings::default()] {
        let (bytes, records) = capture(500, settings);
        let reader = CaptureReader::open(bytes.as_slice()).unwrap();
        assert_eq!(reader.header().source, Source::Pcap);
        assert_eq!(reader.header().source_name, "test.pcap");
        assert_eq!(reader.header().time_resolution_ns, 1000);
        assert_eq!(reader.header().version, (FORMAT_MAJOR, FORMAT_MINOR));
        let (read, ending) = read_all(&bytes).unwrap();
        assert_eq!(read, records);
        let Ending::Clean(totals) = ending else { panic!("{ending:?}") };
        assert_eq!((totals.records, totals.connections, totals.commands, totals.answers), (1003, 3, 500, 500));
    }
}

#[test]
fn compression_shrinks_a_capture() {
    let (deflated, _) = capture(2000, BlockSettings::default());
    let (stored, _) = capture(2000, BlockSettings { level: 0, ..BlockSettings::default() });
    assert!(deflated.len() * 3 < stored.len(), "{} vs {}", deflated.len(), stored.len());
}

#[test]
fn a_file_cut_anywhere_reads_to_its_last_whole_block() {
    let (bytes, records) = capture(60, small_blocks());
    let header_len = CaptureReader::open(bytes.as_slice()).unwrap().offset() as usize;
    let mut last_count = 0;
    for cut in 0..bytes.len() {
        let result = read_all(&bytes[..cut]);
        if cut < header_len {
            assert!(matches!(result, Err(ReadError::NotACapture(_))), "cut at {cut}: {result:?}");
            continue;
        }
        let (read, ending) = result.unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(matches!(ending, Ending::Truncated { .. }), "cut at {cut}: {ending:?}");
        assert_eq!(read[..], records[..read.len()], "cut at {cut}: a prefix of the records");
        assert!(read.len() >= last_count, "a longer file never reads fewer records");
        last_count = read.len();
    }
    assert!(last_count > records.len() / 2);
}

#[test]
fn a_writer_that_never_finished_leaves_a_readable_file() {
    let (_, records) = capture(60, small_blocks());
    let header = CaptureHeader::new(Source::Record, "proxy");
    let mut crashed = Vec::new();
    let mut writer = CaptureWriter::create(&mut crashed, &header, small_blocks()).unwrap();
    for record in &records {
        writer.append(record).unwrap();
    }
    writer.flush().unwrap();
    drop(writer);
    let (read, ending) = read_all(&crashed).unwrap();
    assert_eq!(read, records, "everything flushed is read");
    let Ending::Truncated { reason, .. } = ending else { panic!("{ending:?}") };
    assert!(reason.contains("did not finish"), "{reason}");
    // The zeros a crash can leave after the last write are no damage either.
    crashed.extend(std::iter::repeat(0).take(10_000));
    let (read, ending) = read_all(&crashed).unwrap();
    assert_eq!(read, records);
    let Ending::Truncated { reason, .. } = ending else { panic!("{ending:?}") };
    assert!(reason.contains("zero"), "{reason}");
}

#[test]
fn a_damaged_byte_is_refused_with_its_blocks_offset() {
    let (bytes, _) = capture(60, small_blocks());
    let header_len = CaptureReader::open(bytes.as_slice()).unwrap().offset() as usize;
    // Every byte of the blocks, flipped in turn, is found (or, in a record
    // the reader had no reason to doubt, still never passes unnoticed).
    for at in (header_len..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5A;
        match read_all(&damaged) {
            Err(ReadError::Damaged { offset, what }) => {
                assert!(offset as usize <= at, "byte {at} reported at {offset}: {what}");
            }
            other => panic!("byte {at} flipped: {other:?}"),
        }
    }
}

#[test]
fn the_header_is_checked() {
    let (bytes, _) = capture(3, small_blocks());
    let mut damaged = bytes.clone();
    damaged[20] ^= 1;
    assert!(matches!(read_all(&damaged), Err(ReadError::Damaged { offset: 0, .. })));
    let mut newer = bytes.clone();
    newer[8] = 2;
    let message = read_all(&newer).unwrap_err().to_string();
    assert!(message.contains("newer wirebench"), "{message}");
    // The header's checksum covers its version.
    let mut minor = bytes.clone();
    minor[10] = 9;
    assert!(matches!(read_all(&minor), Err(ReadError::Damaged { .. })));
}

#[test]
fn other_files_are_named_for_what_they_are() {
    let pcap = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0];
    let message = read_all(&pcap).unwrap_err().to_string();
    assert!(message.contains("--from=pcap"), "{message}");
    let log = b"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n";
    let message = read_all(log).unwrap_err().to_string();
    assert!(message.contains("--from=general-log"), "{message}");
    assert!(read_all(b"").unwrap_err().to_string().contains("empty"));
    assert!(matches!(read_all(&MAGIC[..6]), Err(ReadError::NotACapture(_))));
}

#[test]
fn bytes_after_the_end_block_are_damage() {
    let (mut bytes, _) = capture(3, small_blocks());
    bytes.push(0);
    assert!(matches!(read_all(&bytes), Err(ReadError::Damaged { .. })));
}

#[test]
fn records_out_of_time_order_are_refused_by_the_writer() {
    let header = CaptureHeader::new(Source::Record, "proxy");
    let mut writer = CaptureWriter::create(Vec::new(), &header, small_blocks()).unwrap();
    writer.append(&command(2_000, 1, "SELECT 1")).unwrap();
    let error = writer.append(&command(1_000, 2, "SELECT 2")).unwrap_err();
    assert!(error.to_string().contains("time order"), "{error}");
    // Equal times are in order.
    writer.append(&command(2_000, 3, "SELECT 3")).unwrap();
}

#[test]
fn a_claimed_block_size_is_bounded_before_allocation() {
    let (bytes, _) = capture(30, small_blocks());
    let limits = ReadLimits { max_block: 100 };
    let mut reader = CaptureReader::with_limits(bytes.as_slice(), limits).unwrap();
    let error = reader.next_record().unwrap_err().to_string();
    assert!(error.contains("more than the 100"), "{error}");
}

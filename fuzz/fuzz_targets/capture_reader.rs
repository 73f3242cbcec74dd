//! CaptureReader over arbitrary bytes: never a panic, records in time
//! order; a file read to its end block writes back to the same records.
//!
//! Input: the file's bytes (seeds are real captures, so mutations reach
//! the blocks and records).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_capture::format::{BlockSettings, CaptureReader, CaptureWriter, Ending, ReadLimits, Record};

fuzz_target!(|data: &[u8]| {
    let limits = ReadLimits { max_block: 4 << 20 };
    let Ok(mut reader) = CaptureReader::with_limits(data, limits) else { return };
    let header = reader.header().clone();
    let mut records: Vec<Record<'static>> = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                if let Some(last) = records.last() {
                    assert!(record.at_ns() >= last.at_ns(), "records out of time order");
                }
                records.push(record.into_owned());
            }
            Ok(None) => break,
            Err(_) => return,
        }
    }
    assert!(reader.offset() <= data.len() as u64);
    if !matches!(reader.ending(), Some(Ending::Clean(_))) {
        return;
    }
    let mut writer = CaptureWriter::create(Vec::new(), &header, BlockSettings { target_bytes: 1000, level: 1 }).unwrap();
    for record in &records {
        writer.append(record).unwrap();
    }
    let bytes = writer.finish().unwrap();
    let mut again = CaptureReader::open(bytes.as_slice()).unwrap();
    for record in &records {
        assert_eq!(again.next_record().unwrap().map(Record::into_owned).as_ref(), Some(record));
    }
    assert!(again.next_record().unwrap().is_none());
});

//! The general and slow log imports over arbitrary text: entries, both
//! timestamp styles, continuation lines, banners. Never a panic; what they
//! write reads back whole, in time order.
//!
//! Input: a parameter byte (bit 0: the slow log), then the log's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_capture::format::{BlockSettings, CaptureReader, Ending};
use wirebench_capture::import::general_log::import_general_log;
use wirebench_capture::import::slow_log::import_slow_log;
use wirebench_capture::import::ImportSettings;
use wirebench_protocol_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let slow = input.u8() & 1 == 1;
    let settings = ImportSettings {
        source_name: "fuzz.log".into(),
        created_ns: 0,
        writer: "fuzz".into(),
        blocks: BlockSettings { target_bytes: 4096, level: 1 },
    };
    let imported = if slow {
        import_slow_log(input.rest(), &settings, Vec::new())
    } else {
        import_general_log(input.rest(), &settings, Vec::new())
    };
    let Ok((bytes, report)) = imported else { return };
    let mut reader = CaptureReader::open(bytes.as_slice()).expect("an import's own header");
    let mut records = 0u64;
    let mut last = 0u64;
    while let Some(record) = reader.next_record().expect("an import's own records") {
        assert!(record.at_ns() >= last);
        last = record.at_ns();
        records += 1;
    }
    assert!(matches!(reader.ending(), Some(Ending::Clean(_))));
    assert_eq!(records, report.totals.records);
});

//! The pcap import over arbitrary bytes: the pcap and pcapng containers,
//! link layers, IP, TCP reassembly and the MySQL connection tracker
//! (logins, answers read under every capability hypothesis, connections
//! joined midway). Never a panic; what it writes reads back whole.
//!
//! Input: a parameter byte (the server's port: 3306, or the pcap's first
//! TCP port when bit 0 is set), then the file's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_capture::format::{BlockSettings, CaptureReader, Ending};
use wirebench_capture::import::pcap::import_pcap;
use wirebench_capture::import::ImportSettings;
use wirebench_protocol_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let port = if input.u8() & 1 == 0 { 3306 } else { 3450 };
    let settings = ImportSettings {
        source_name: "fuzz.pcap".into(),
        created_ns: 0,
        writer: "fuzz".into(),
        blocks: BlockSettings { target_bytes: 4096, level: 1 },
    };
    let Ok((bytes, report)) = import_pcap(input.rest(), port, &settings, Vec::new()) else { return };
    let mut reader = CaptureReader::open(bytes.as_slice()).expect("an import's own header");
    let mut records = 0u64;
    while reader.next_record().expect("an import's own records").is_some() {
        records += 1;
    }
    assert!(matches!(reader.ending(), Some(Ending::Clean(_))));
    assert_eq!(records, report.totals.records);
});

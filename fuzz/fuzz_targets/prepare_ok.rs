//! COM_STMT_PREPARE responses. Input: a capability byte, then raw server
//! bytes (packet headers included, sequence ids from 1).
//!
//! PrepareOk::parse round-trips on the first packet; the PrepareResponse
//! state machine takes the packets one by one; a statement it accepts must
//! match its counts and come back the same from encode_response.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::{PrepareOk, PrepareOutcome, PrepareResponse};
use wirebench_protocol::{Capabilities, CodecError, UsageError};
use wirebench_protocol_fuzz::{caps_from_bits, split_packets, Input};

/// Feeds the packets until the machine finishes or fails.
fn run(caps: Capabilities, packets: &[Vec<u8>]) -> Option<(usize, PrepareOutcome)> {
    let mut response = PrepareResponse::new(caps);
    for (i, payload) in packets.iter().enumerate() {
        match response.feed(payload) {
            Ok(None) => {}
            Ok(Some(outcome)) => {
                // Complete: anything more is refused.
                assert!(
                    matches!(response.feed(payload), Err(CodecError::Usage(UsageError::OutOfOrder { .. }))),
                    "a finished prepare response took another packet"
                );
                return Some((i + 1, outcome));
            }
            Err(_) => return None,
        }
    }
    None
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let caps = caps_from_bits(input.u8());
    let bytes = input.rest();
    let (packets, _) = split_packets(bytes, 1);

    for payload in packets.first().map(Vec::as_slice).into_iter().chain([bytes]) {
        if let Ok(ok) = PrepareOk::parse(payload) {
            let mut again = Vec::new();
            ok.encode(1, &mut again);
            assert_eq!(PrepareOk::parse(&again[4..]), Ok(ok), "PREPARE_OK round trip");
        }
    }

    let Some((used, PrepareOutcome::Prepared(stmt))) = run(caps, &packets) else { return };
    assert_eq!(stmt.params.len(), usize::from(stmt.ok.num_params));
    assert_eq!(stmt.columns.len(), usize::from(stmt.ok.num_columns));
    assert!(used >= 1 + stmt.params.len() + stmt.columns.len());
    let mut encoded = Vec::new();
    stmt.encode_response(caps, &mut encoded);
    let (again, ends) = split_packets(&encoded, 1);
    assert_eq!(ends.last().copied(), Some(encoded.len()), "encode_response wrote whole packets");
    match run(caps, &again) {
        Some((n, PrepareOutcome::Prepared(back))) => {
            assert_eq!(n, again.len());
            assert_eq!(back, stmt, "prepared statement round trip");
        }
        other => panic!("re-encoded prepare response did not decode: {other:?}"),
    }
});

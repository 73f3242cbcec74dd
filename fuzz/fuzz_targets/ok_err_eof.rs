//! OK, EOF and ERR payloads under capabilities from the first input byte,
//! each checked decode -> encode -> decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::ok::is_result_terminator;
use wirebench_protocol::response::{EofPacket, ErrPacket, OkPacket};
use wirebench_protocol_fuzz::{caps_from_bits, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let caps = caps_from_bits(input.u8());
    let payload = input.rest();

    if let Ok(ok) = OkPacket::parse(payload, caps) {
        let mut again = Vec::new();
        ok.encode_payload(payload[0], caps, &mut again);
        assert_eq!(OkPacket::parse(&again, caps), Ok(ok), "OK round trip, re-encoded as {again:02x?}");
    }
    if let Ok(eof) = EofPacket::parse(payload, caps) {
        let mut again = Vec::new();
        eof.encode(caps, 0, &mut again);
        assert_eq!(EofPacket::parse(&again[4..], caps), Ok(eof), "EOF round trip");
    }
    if let Ok(err) = ErrPacket::parse(payload) {
        let mut again = Vec::new();
        err.encode(0, &mut again);
        assert_eq!(ErrPacket::parse(&again[4..]), Ok(err), "ERR round trip");
        assert_eq!(err.to_owned().message.is_empty(), err.message.is_empty());
    }
    let _ = is_result_terminator(payload);
});

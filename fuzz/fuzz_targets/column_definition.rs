//! ColumnDefinition41 under capabilities from the first input byte:
//! decode -> encode -> decode, and into_owned keeps every field.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::ColumnDefinition;
use wirebench_protocol_fuzz::{caps_from_bits, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let caps = caps_from_bits(input.u8());
    let payload = input.rest();
    let Ok(col) = ColumnDefinition::parse(payload, caps) else { return };
    let mut again = Vec::new();
    col.encode_payload(caps, &mut again);
    assert!(again.len() <= payload.len(), "re-encoding grew: trailing bytes are the only thing dropped");
    assert_eq!(ColumnDefinition::parse(&again, caps).as_ref(), Ok(&col), "column definition round trip");
    let _ = col.is_unsigned();
    assert_eq!(col.clone().into_owned(), col);
});

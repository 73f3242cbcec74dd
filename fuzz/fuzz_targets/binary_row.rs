//! Binary rows against column definitions taken from the input's first
//! bytes (count, then type, flags, decimals and length per column).
//!
//! A decoded row must re-encode (the encoder takes every value the decoder
//! yields), the re-encoding is a fixed point, and the text form of every
//! value survives the round trip. Values are compared by text form because
//! a DATE column's DATETIME value with a zero time re-encodes as a DATE.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::binary_row::encode_binary_row_payload;
use wirebench_protocol::response::{BinaryRow, ColumnDefinition, Value};
use wirebench_protocol_fuzz::{column_from, Input};

fn texts(values: &[Value<'_>], columns: &[ColumnDefinition<'_>]) -> Vec<Option<Vec<u8>>> {
    values.iter().zip(columns).map(|(v, c)| v.to_text(c)).collect()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let count = usize::from(input.u8() % 32);
    let columns: Vec<ColumnDefinition<'static>> = (0..count).map(|_| column_from(&mut input)).collect();
    let payload = input.rest();

    // The lazy walk, as the hot path would use it, must agree with decode.
    let walked: Option<Vec<Value<'_>>> = BinaryRow::new(payload, count).ok().and_then(|row| {
        (0..count).for_each(|i| {
            let _ = row.is_null(i);
        });
        row.values(&columns).collect::<Result<Vec<_>, _>>().ok()
    });
    let Ok(values) = BinaryRow::decode(payload, &columns) else { return };
    assert_eq!(values.len(), count);
    let walked = walked.expect("the walk succeeds where decode does");
    assert_eq!(format!("{walked:?}"), format!("{values:?}"));

    let mut encoded = Vec::new();
    encode_binary_row_payload(&values, &columns, &mut encoded).expect("decoded values re-encode");
    let again = BinaryRow::decode(&encoded, &columns).expect("a re-encoded row decodes");
    assert_eq!(texts(&again, &columns), texts(&values, &columns), "text forms survive the round trip");
    let mut encoded_again = Vec::new();
    encode_binary_row_payload(&again, &columns, &mut encoded_again).expect("re-decoded values re-encode");
    assert_eq!(encoded_again, encoded, "encoding is a fixed point after one round");
});

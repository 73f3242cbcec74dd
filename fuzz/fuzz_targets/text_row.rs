//! Text rows with a column count from the first input byte: the values
//! walk yields exactly that many, and re-encoding them parses back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::response::text_row::encode_text_row_payload;
use wirebench_protocol::response::TextRow;
use wirebench_protocol_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let columns = usize::from(input.u8());
    let payload = input.rest();
    let Ok(row) = TextRow::parse(payload, columns) else { return };
    assert_eq!(row.len(), columns);
    let values: Vec<Option<&[u8]>> = row.values().collect();
    assert_eq!(values.len(), columns, "values() yields one value per column");
    let mut again = Vec::new();
    encode_text_row_payload(values.iter().copied(), &mut again);
    assert!(again.len() <= payload.len());
    let reparsed = TextRow::parse(&again, columns).expect("a re-encoded row parses");
    assert!(reparsed.values().eq(values.iter().copied()), "text row round trip");
});

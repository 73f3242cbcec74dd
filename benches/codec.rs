//! Micro-benchmarks of the codec's hot path: building COM_STMT_EXECUTE
//! packets and walking binary result sets.
//!
//! - `execute/*`: `encode_execute` from scratch against an `ExecuteTemplate`
//!   patched in place, for sysbench's point select (one integer) and for a
//!   read_write-style INSERT (two BIGINTs and the 119- and 59-byte `c` and
//!   `pad` strings).
//! - `response/*`: the captured MariaDB 10.11 point-select response (one row,
//!   DEPRECATE_EOF) and a 100-row `SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?`
//!   response built with the protocol's encoders, walked by `ResponseReader`
//!   (the hot path: reset + advance) and, for contrast, decoded packet by
//!   packet by `ResultSetDecoder`.
//!
//! Run: `cargo bench --bench codec -- --warm-up-time 1 --measurement-time 3`.

use std::borrow::Cow;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use wirebench_protocol::command::{encode_execute, ExecuteTemplate, Param, ParamSlot};
use wirebench_protocol::framing::decode_packet;
use wirebench_protocol::response::binary_row::encode_binary_row;
use wirebench_protocol::response::resultset::{encode_metadata, encode_result_end};
use wirebench_protocol::response::testdata::CAPTURE_CAPABILITIES;
use wirebench_protocol::response::{ColumnDefinition, ResponseReader, ResultSetDecoder, RowFormat, Value};
use wirebench_protocol::{Capabilities, ColumnFlags, ColumnType, StatusFlags};

/// What the captures negotiated with MariaDB 10.11 (see
/// protocol/src/response/testdata/capture.py), with DEPRECATE_EOF.
const CAPS: Capabilities = CAPTURE_CAPABILITIES.union(Capabilities::DEPRECATE_EOF);

/// The response to sysbench's point select, as MariaDB 10.11 sent it: one
/// column definition, one binary row, a 0xFE-headed OK.
const POINT_SELECT: &[u8] = include_bytes!("../protocol/src/response/testdata/exec_point_select_deof.bin");

/// A sysbench-style `c` value: eleven-digit groups joined by dashes.
fn sysbench_string(seed: u64, groups: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let parts: Vec<String> = (0..groups)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{:011}", x % 100_000_000_000)
        })
        .collect();
    parts.join("-").into_bytes()
}

/// Point select: `WHERE id = ?` with one integer, i32 and i64, by the
/// general encoder and by a patched template.
fn execute_point_select(c: &mut Criterion) {
    let mut g = c.benchmark_group("execute");
    g.throughput(Throughput::Elements(1));
    let mut out = Vec::with_capacity(256);
    let mut id = 0i32;
    g.bench_function("point_select_i32/encode_execute", |b| {
        b.iter(|| {
            id = id.wrapping_add(1);
            out.clear();
            encode_execute(&mut out, black_box(1), &[Param::I32(id)]);
            black_box(out.as_slice());
        })
    });
    let mut t32 = ExecuteTemplate::new(1, &[ParamSlot::Int32]).unwrap();
    g.bench_function("point_select_i32/template", |b| {
        b.iter(|| {
            id = id.wrapping_add(1);
            t32.set_i32(0, id).unwrap();
            black_box(t32.packet());
        })
    });
    let mut id64 = 0i64;
    g.bench_function("point_select_i64/encode_execute", |b| {
        b.iter(|| {
            id64 = id64.wrapping_add(1);
            out.clear();
            encode_execute(&mut out, black_box(1), &[Param::I64(id64)]);
            black_box(out.as_slice());
        })
    });
    let mut t64 = ExecuteTemplate::new(1, &[ParamSlot::Int64]).unwrap();
    g.bench_function("point_select_i64/template", |b| {
        b.iter(|| {
            id64 = id64.wrapping_add(1);
            t64.set_i64(0, id64).unwrap();
            black_box(t64.packet());
        })
    });
    g.finish();
}

/// oltp_read_write's `INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)`.
fn execute_insert(c: &mut Criterion) {
    let mut g = c.benchmark_group("execute");
    g.throughput(Throughput::Elements(1));
    let mut out = Vec::with_capacity(256);
    let c_values: Vec<Vec<u8>> = (0..64).map(|i| sysbench_string(i, 10)).collect();
    let pad_values: Vec<Vec<u8>> = (0..64).map(|i| sysbench_string(i + 1000, 5)).collect();
    assert_eq!((c_values[0].len(), pad_values[0].len()), (119, 59));
    let mut n = 0usize;
    g.bench_function("insert_4_params/encode_execute", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            let (c, pad) = (&c_values[n % 64], &pad_values[n % 64]);
            out.clear();
            encode_execute(
                &mut out,
                black_box(2),
                &[Param::I64(n as i64), Param::I64(n as i64 >> 3), Param::Bytes(c), Param::Bytes(pad)],
            );
            black_box(out.as_slice());
        })
    });
    let slots = [ParamSlot::Int64, ParamSlot::Int64, ParamSlot::Bytes { len: 119 }, ParamSlot::Bytes { len: 59 }];
    let mut t4 = ExecuteTemplate::new(2, &slots).unwrap();
    g.bench_function("insert_4_params/template", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            t4.set_i64(0, n as i64).unwrap();
            t4.set_i64(1, n as i64 >> 3).unwrap();
            t4.set_bytes(2, &c_values[n % 64]).unwrap();
            t4.set_bytes(3, &pad_values[n % 64]).unwrap();
            black_box(t4.packet());
        })
    });
    // Both encoders write the same bytes.
    out.clear();
    encode_execute(
        &mut out,
        2,
        &[Param::I64(5), Param::I64(6), Param::Bytes(&c_values[1]), Param::Bytes(&pad_values[1])],
    );
    t4.set_i64(0, 5).unwrap();
    t4.set_i64(1, 6).unwrap();
    t4.set_bytes(2, &c_values[1]).unwrap();
    t4.set_bytes(3, &pad_values[1]).unwrap();
    assert_eq!(out, t4.packet());
    g.finish();
}

/// The response to `SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?` over
/// `rows` rows, as MariaDB sends it under DEPRECATE_EOF.
fn range_select_response(rows: u64) -> Vec<u8> {
    let mut col = ColumnDefinition::new(b"c", ColumnType::String);
    col.schema = Cow::Borrowed(b"sbtest");
    col.table = Cow::Borrowed(b"sbtest1");
    col.org_table = Cow::Borrowed(b"sbtest1");
    col.charset = 45; // utf8mb4_general_ci
    col.column_length = 480; // CHAR(120), 4 bytes a character
    col.flags = ColumnFlags::NOT_NULL;
    let columns = [col];
    let mut out = Vec::new();
    let mut seq = encode_metadata(&columns, true, StatusFlags::AUTOCOMMIT, CAPS, 1, &mut out);
    for i in 0..rows {
        let c = sysbench_string(i, 10);
        seq = encode_binary_row(&[Value::Bytes(&c)], &columns, seq, &mut out).unwrap();
    }
    encode_result_end(StatusFlags::AUTOCOMMIT, 0, CAPS, seq, &mut out);
    out
}

/// Decodes a whole response with framing + ResultSetDecoder; returns the row count.
fn decode_response(bytes: &[u8]) -> usize {
    let mut decoder = ResultSetDecoder::new(CAPS, RowFormat::Binary);
    let (mut pos, mut seq) = (0usize, 1u8);
    loop {
        let frame = decode_packet(&bytes[pos..], seq, 1 << 24).unwrap().unwrap();
        pos += frame.consumed;
        seq = frame.next_seq;
        if let Some(response) = decoder.feed(&frame.payload).unwrap() {
            return response.result_sets().map(|rs| rs.rows.len()).sum();
        }
    }
}

fn response(c: &mut Criterion) {
    let mut g = c.benchmark_group("response");
    let range = range_select_response(100);
    for (name, bytes, rows) in [("point_select_1_row", POINT_SELECT, 1u64), ("range_select_100_rows", &range[..], 100)]
    {
        let mut reader = ResponseReader::new(CAPS, RowFormat::Binary);
        let outcome = reader.advance(bytes).unwrap().done.expect("a complete response");
        assert_eq!((outcome.rows, outcome.error), (rows, None));
        assert_eq!(decode_response(bytes), rows as usize);

        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(format!("{name}/response_reader"), |b| {
            b.iter(|| {
                reader.reset();
                let progress = reader.advance(black_box(bytes)).unwrap();
                black_box(progress.done.map(|o| o.rows))
            })
        });
        g.bench_function(format!("{name}/result_set_decoder"), |b| b.iter(|| decode_response(black_box(bytes))));
    }
    g.finish();
}

criterion_group!(benches, execute_point_select, execute_insert, response);
criterion_main!(benches);

//! The pcap import on hand-made conversations: logins, commands and their
//! answers, TCP put back in order, connections joined midway, TLS, and the
//! files it refuses.

use std::borrow::Cow;

use wirebench_protocol::constants::command as com;
use wirebench_protocol::framing::encode_packet;
use wirebench_protocol::handshake::HandshakeResponse41;
use wirebench_protocol::response::AnswerKind;
use wirebench_protocol::Capabilities;

use super::*;
use crate::format::{BlockSettings, CaptureReader, CloseReason, Ending, Record};
use crate::import::frame::tests::{ethernet_bytes, ipv4_bytes, tcp_bytes};
use crate::import::pcap_file::tests::{pcap, pcapng};

const T0: u64 = 1_700_000_000_000_000_000;
const CLIENT: [u8; 4] = [10, 0, 0, 1];
const SERVER: [u8; 4] = [10, 0, 0, 2];

/// MariaDB-like: bit 0 clear, DEPRECATE_EOF, CACHE_METADATA in the extended bits.
const SERVER_CAPS: Capabilities = Capabilities(0x81ff_f7fe | (0x1d << 32));

/// A TCP conversation between one client port and the server, as frames.
struct Conversation {
    port: u16,
    client_seq: u32,
    server_seq: u32,
    at: u64,
    frames: Vec<(u64, Vec<u8>)>,
}

impl Conversation {
    fn new(port: u16) -> Self {
        Conversation { port, client_seq: 1000, server_seq: 5000, at: T0, frames: Vec::new() }
    }

    fn frame(&mut self, from_client: bool, seq: u32, flags: u8, payload: &[u8]) {
        self.at += 10_000;
        let (src, dst, sport, dport, ack) = if from_client {
            (CLIENT, SERVER, self.port, 3306, self.server_seq)
        } else {
            (SERVER, CLIENT, 3306, self.port, self.client_seq)
        };
        let tcp = tcp_bytes(sport, dport, seq, ack, flags, payload);
        self.frames.push((self.at, ethernet_bytes(&ipv4_bytes(src, dst, &tcp), 0x0800)));
    }

    fn handshake(&mut self) {
        self.frame(true, self.client_seq, TCP_SYN, b"");
        self.client_seq += 1;
        self.frame(false, self.server_seq, TCP_SYN | TCP_ACK, b"");
        self.server_seq += 1;
    }

    /// Bytes from one side, in one segment.
    fn send(&mut self, from_client: bool, bytes: &[u8]) {
        let seq = if from_client { self.client_seq } else { self.server_seq };
        self.frame(from_client, seq, TCP_ACK, bytes);
        if from_client {
            self.client_seq += bytes.len() as u32;
        } else {
            self.server_seq += bytes.len() as u32;
        }
    }

    fn fin(&mut self, from_client: bool) {
        let seq = if from_client { self.client_seq } else { self.server_seq };
        self.frame(from_client, seq, TCP_FIN | TCP_ACK, b"");
    }
}

fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_packet(&mut out, seq, payload);
    out
}

fn greeting() -> Vec<u8> {
    let mut p = vec![10];
    p.extend_from_slice(b"5.5.5-10.11.19-MariaDB\0");
    p.extend_from_slice(&42u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(SERVER_CAPS.low() as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((SERVER_CAPS.low() >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 6]);
    p.extend_from_slice(&SERVER_CAPS.mariadb_ext().to_le_bytes());
    p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    packet(0, &p)
}

fn login(caps: Capabilities) -> Vec<u8> {
    let mut out = Vec::new();
    HandshakeResponse41 {
        capabilities: caps,
        max_packet_size: 1 << 24,
        charset: 45,
        user: b"sbtest",
        auth_response: b"secretscramble012345",
        database: Some(b"sbtest"),
        auth_plugin_name: b"mysql_native_password",
        connect_attrs: &[],
    }
    .encode(&mut out, 1)
    .unwrap();
    out
}

const OK: &[u8] = &[0, 0, 0, 2, 0, 0, 0];
const COLUMN: &[u8] = b"\x03def\0\0\0\x01c\0\x0c\x21\0\0\0\0\0\xfd\0\0\0\0\0";

/// A one-column, one-row text result set under DEPRECATE_EOF (and CACHE_METADATA when `cache`).
fn one_row(value: &[u8], cache: bool) -> Vec<u8> {
    let mut out = packet(1, if cache { &[1, 1] } else { &[1] });
    out.extend(packet(2, COLUMN));
    let mut row = vec![value.len() as u8];
    row.extend_from_slice(value);
    out.extend(packet(3, &row));
    out.extend(packet(4, &[0xFE, 0, 0, 2, 0, 0, 0]));
    out
}

fn query(sql: &str) -> Vec<u8> {
    let mut payload = vec![com::COM_QUERY];
    payload.extend_from_slice(sql.as_bytes());
    packet(0, &payload)
}

/// Client caps of a MariaDB client (bit 0 clear) with DEPRECATE_EOF and CACHE_METADATA.
fn client_caps() -> Capabilities {
    (crate::import::guess::CLIENT_BASE
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | Capabilities::CONNECT_WITH_DB
        | Capabilities::DEPRECATE_EOF
        | Capabilities::MARIADB_CLIENT_CACHE_METADATA)
        & !Capabilities::LONG_PASSWORD
}

fn settings() -> ImportSettings {
    ImportSettings {
        source_name: "test.pcap".into(),
        created_ns: T0,
        writer: "test".into(),
        blocks: BlockSettings::default(),
    }
}

fn import(file: &[u8]) -> Result<(Vec<Record<'static>>, ImportReport), ImportError> {
    let (bytes, report) = import_pcap(file, 3306, &settings(), Vec::new())?;
    let mut reader = CaptureReader::open(bytes.as_slice()).unwrap();
    let mut records = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        records.push(record.into_owned());
    }
    assert!(matches!(reader.ending(), Some(Ending::Clean(_))));
    Ok((records, report))
}

fn frames(conversation: &Conversation) -> Vec<(u64, &[u8])> {
    conversation.frames.iter().map(|(at, f)| (*at, f.as_slice())).collect()
}

/// A whole session: login, a query, a prepare and its execute, quit.
fn session(port: u16) -> Conversation {
    let mut c = Conversation::new(port);
    c.handshake();
    c.send(false, &greeting());
    c.send(true, &login(client_caps()));
    c.send(false, &packet(2, OK));
    c.send(true, &query("SELECT c FROM sbtest1 WHERE id=1"));
    c.send(false, &one_row(b"abc", true));
    let mut prepare = vec![com::COM_STMT_PREPARE];
    prepare.extend_from_slice(b"SELECT c FROM sbtest1 WHERE id=?");
    c.send(true, &packet(0, &prepare));
    // PREPARE_OK: statement 7, one column, one parameter; then their definitions.
    let mut answer = packet(1, &[0, 7, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0]);
    answer.extend(packet(2, b"\x03def\0\0\0\x01?\0\x0c\x3f\0\0\0\0\0\x08\x80\0\0\0\0"));
    answer.extend(packet(3, COLUMN));
    c.send(false, &answer);
    let execute = b"\x17\x07\0\0\0\0\x01\0\0\0\0\x01\x08\0\x05\0\0\0\0\0\0\0";
    c.send(true, &packet(0, execute));
    // CACHE_METADATA: the column count says the definitions are skipped.
    let mut result = packet(1, &[1, 0]);
    result.extend(packet(2, b"\0\0\x03abc"));
    result.extend(packet(3, &[0xFE, 0, 0, 2, 0, 0, 0]));
    c.send(false, &result);
    c.send(true, &packet(0, &[com::COM_QUIT]));
    c.fin(true);
    c.fin(false);
    c
}

#[test]
fn a_whole_session_becomes_its_records() {
    let c = session(40000);
    let (records, report) = import(&pcap(1, &frames(&c))).unwrap();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| match r {
            Record::Open(_) => "open",
            Record::Command(_) => "command",
            Record::Answer(_) => "answer",
            Record::Close(_) => "close",
            Record::Gap(_) => "gap",
        })
        .collect();
    assert_eq!(kinds, ["open", "command", "answer", "command", "answer", "command", "answer", "command", "close"]);
    let Record::Open(open) = &records[0] else { panic!() };
    assert_eq!(open.user.as_deref(), Some(&b"sbtest"[..]));
    assert_eq!(open.database.as_deref(), Some(&b"sbtest"[..]));
    assert_eq!((open.charset, open.server_thread_id, open.already_open), (Some(45), Some(42), false));
    assert_eq!(open.client_addr.as_deref(), Some(&b"10.0.0.1:40000"[..]));
    let Record::Answer(first) = &records[2] else { panic!() };
    assert_eq!((first.kind, first.rows, first.columns), (Some(AnswerKind::ResultSet), Some(1), Some(1)));
    let Record::Answer(prepared) = &records[4] else { panic!() };
    assert_eq!(prepared.prepared.map(|p| (p.statement_id, p.params, p.columns)), Some((7, 1, 1)));
    let Record::Answer(executed) = &records[6] else { panic!() };
    // The execute's rows were read with the prepare's columns: same checksum as the text query.
    assert_eq!(executed.row_checksum, first.row_checksum);
    let Record::Close(close) = &records[8] else { panic!() };
    assert_eq!(close.reason, CloseReason::Quit);
    assert_eq!((report.connections, report.commands, report.answers, report.gaps), (1, 4, 3, 0));
    // The password's scramble is nowhere in the capture.
    let (bytes, _) = import_pcap(pcap(1, &frames(&c)).as_slice(), 3306, &settings(), Vec::new()).unwrap();
    let mut plain = Vec::new();
    let mut reader = CaptureReader::open(bytes.as_slice()).unwrap();
    while let Some(record) = reader.next_record().unwrap() {
        plain.extend(format!("{record:?}").into_bytes());
    }
    assert!(!plain.windows(6).any(|w| w == b"secret"));
}

#[test]
fn the_same_from_pcapng_and_with_every_segment_retransmitted() {
    let c = session(40001);
    let (expected, _) = import(&pcap(1, &frames(&c))).unwrap();
    let (from_ng, _) = import(&pcapng(1, &frames(&c), true)).unwrap();
    assert_eq!(from_ng, expected);
    // Every frame captured twice, as a retransmission is.
    let doubled: Vec<(u64, &[u8])> = c
        .frames
        .iter()
        .enumerate()
        .flat_map(|(i, (_, f))| {
            [(T0 + 2 * i as u64 * 1000, f.as_slice()), (T0 + (2 * i as u64 + 1) * 1000, f.as_slice())]
        })
        .collect();
    let (records, report) = import(&pcap(1, &doubled)).unwrap();
    let kinds = |r: &[Record<'static>]| r.iter().map(std::mem::discriminant).collect::<Vec<_>>();
    assert_eq!(kinds(&records), kinds(&expected));
    assert_eq!((report.gaps, report.commands), (0, 4));
}

#[test]
fn segments_out_of_order_are_put_back() {
    let mut c = Conversation::new(40002);
    c.handshake();
    c.send(false, &greeting());
    c.send(true, &login(client_caps()));
    c.send(false, &packet(2, OK));
    // A query in two segments, the second captured first.
    let q = query("SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100");
    let (a, b) = q.split_at(10);
    let seq = c.client_seq;
    c.frame(true, seq + a.len() as u32, TCP_ACK, b);
    c.frame(true, seq, TCP_ACK, a);
    c.client_seq += q.len() as u32;
    c.send(false, &one_row(b"x", true));
    let (records, report) = import(&pcap(1, &frames(&c))).unwrap();
    let commands: Vec<&[u8]> =
        records.iter().filter_map(|r| if let Record::Command(c) = r { Some(&c.payload[..]) } else { None }).collect();
    assert_eq!(commands, [&q[4..]]);
    assert_eq!((report.answers, report.gaps), (1, 0));
}

#[test]
fn a_connection_open_before_the_capture_is_joined_at_its_first_whole_command() {
    let mut c = Conversation::new(40003);
    // The tail of a query whose start the capture missed, its answer, then whole commands.
    c.send(true, b"RE id=5");
    c.send(false, &one_row(b"zz", true));
    c.send(true, &query("SELECT 1"));
    c.send(false, &one_row(b"1", true));
    c.send(true, &query("UPDATE t SET a=1"));
    c.send(false, &packet(1, &[0, 3, 0, 2, 0, 0, 0]));
    c.send(true, &packet(0, b"\x17\x09\0\0\0\0\x01\0\0\0"));
    c.send(false, &packet(1, b"\xff\x13\x05#HY000Unknown prepared statement handler"));
    let (records, report) = import(&pcap(1, &frames(&c))).unwrap();
    let Record::Open(open) = &records[0] else { panic!("{records:?}") };
    assert!(open.already_open);
    assert_eq!(open.user, None);
    let answers: Vec<&crate::format::Answer<'_>> =
        records.iter().filter_map(|r| if let Record::Answer(a) = r { Some(a) } else { None }).collect();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0].rows, Some(1));
    assert_eq!(answers[1].affected_rows, Some(3));
    assert_eq!(answers[2].error.as_ref().map(|e| e.code), Some(1299));
    assert_eq!((report.already_open, report.unknown_statement_commands, report.unknown_statement_ids), (1, 1, 1));
    let Record::Command(execute) = &records[5] else { panic!() };
    assert!(execute.unknown_statement);
}

#[test]
fn tls_connections_are_named_not_read() {
    let mut c = Conversation::new(40004);
    c.handshake();
    c.send(false, &greeting());
    let mut ssl = Vec::new();
    wirebench_protocol::handshake::SslRequest {
        capabilities: client_caps() | Capabilities::SSL,
        max_packet_size: 1 << 24,
        charset: 45,
    }
    .encode(&mut ssl, 1);
    c.send(true, &ssl);
    c.send(true, b"\x16\x03\x01\x02\x00 a TLS client hello");
    let (records, report) = import(&pcap(1, &frames(&c))).unwrap();
    let Record::Open(open) = &records[0] else { panic!() };
    assert!(open.tls);
    assert_eq!(report.not_importable.len(), 1);
    assert!(report.not_importable[0].contains("TLS"), "{:?}", report.not_importable);
    assert_eq!(report.commands, 0);
}

#[test]
fn no_mysql_on_the_port_names_the_busy_ones() {
    let mut c = Conversation::new(40005);
    c.frames.clear();
    let tcp = tcp_bytes(40005, 8080, 1, 1, TCP_ACK, b"GET / HTTP/1.1\r\n");
    c.frames.push((T0, ethernet_bytes(&ipv4_bytes(CLIENT, SERVER, &tcp), 0x0800)));
    let message = import(&pcap(1, &frames(&c))).unwrap_err().to_string();
    assert!(message.contains("no MySQL traffic on port 3306"), "{message}");
    assert!(message.contains("8080"), "{message}");
    assert!(message.contains("--port"), "{message}");
    let message = import(&pcap(147, &frames(&c))).unwrap_err().to_string();
    assert!(message.contains("link type 147"), "{message}");
}

#[test]
fn a_lost_segment_leaves_a_gap_and_reading_resumes() {
    let mut c = Conversation::new(40006);
    c.handshake();
    c.send(false, &greeting());
    c.send(true, &login(client_caps()));
    c.send(false, &packet(2, OK));
    c.send(true, &query("SELECT 1"));
    // The answer's segment is lost by the capture; the client acknowledges it.
    let lost = one_row(b"1", true);
    c.server_seq += lost.len() as u32;
    c.send(true, &query("SELECT 2"));
    c.send(false, &one_row(b"2", true));
    c.send(true, &query("SELECT 3"));
    c.send(false, &one_row(b"3", true));
    let (records, report) = import(&pcap(1, &frames(&c))).unwrap();
    assert!(report.gaps >= 1, "{report:?}");
    assert!(records.iter().any(|r| matches!(r, Record::Gap(_))));
    let last =
        records.iter().rev().find_map(|r| if let Record::Command(c) = r { Some(c.payload.clone()) } else { None });
    assert_eq!(last, Some(Cow::Owned(b"\x03SELECT 3".to_vec())));
    assert!(records.iter().rev().any(|r| matches!(r, Record::Answer(a) if a.rows == Some(1))));
}

#[test]
fn a_joined_connection_with_no_readable_command_is_named() {
    // TLS records from a connection whose start the capture missed.
    let mut c = Conversation::new(40007);
    for i in 0..80u32 {
        let mut record = vec![0x17, 0x03, 0x03, 0x04, 0x00];
        record.extend((0..1024u32).map(|j| (i.wrapping_mul(31) ^ j.wrapping_mul(7)) as u8));
        c.send(true, &record);
        c.send(false, &record[..200]);
    }
    // Another connection, readable, so that the import has something to write.
    let s = session(40008);
    c.frames.extend(s.frames);
    let (_, report) = import(&pcap(1, &frames(&c))).unwrap();
    assert!(
        report.not_importable.iter().any(|n| n.contains("40007") && n.contains("no command could be read")),
        "{:?}",
        report.not_importable
    );
}

//! `capture import --from=pcap`: the MySQL connections of a pcap or
//! pcapng file, reassembled, read and written as a capture.
//!
//! A TCP segment to the server's port is the client's, one from it the
//! server's. Each connection (client address and port, server address and
//! port) is put back in order per direction ([`tcp`](super::tcp)) and read
//! by a [`MysqlConn`]; records go out in time order through the emitter.
//! Packet times that go backwards (several interfaces, a clock step) are
//! taken as the time before them, and counted.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::SocketAddr;

use super::emit::Emitter;
use super::frame::{decode_frame, Decoded, TcpSegment, TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN};
use super::mysql_conn::{Closer, MysqlConn, Outbox, ServerInfo};
use super::pcap_file::PcapReader;
use super::tcp::{Piece, TcpDirection};
use super::{ImportError, ImportReport, ImportSettings};
use crate::format::{AnswerCoverage, CaptureHeader, CaptureWriter, ConnId, Source};

/// The MySQL and MariaDB default port.
pub const DEFAULT_PORT: u16 = 3306;

type FlowKey = (SocketAddr, SocketAddr);

struct Flow {
    conn: MysqlConn,
    to_server: TcpDirection,
    to_client: TcpDirection,
    /// Who sent the first FIN or RST, and whether the other side did too.
    first_closer: Option<Closer>,
    finished: bool,
}

/// The import in progress.
struct PcapImport<W: Write> {
    port: u16,
    flows: HashMap<FlowKey, Flow>,
    /// Flows whose connection holds records back, until an answer is settled.
    holding: HashSet<FlowKey>,
    servers: HashMap<SocketAddr, ServerInfo>,
    next_id: ConnId,
    /// Made with the first frame, whose time resolution goes in the header.
    emitter: Option<Emitter<W>>,
    out: Option<W>,
    header: CaptureHeader,
    settings: ImportSettings,
    outbox: Outbox,
    report: ImportReport,
    last_ns: u64,
    /// TCP packets per port pair seen, for the error when none is on `port`.
    other_ports: HashMap<u16, u64>,
    frames: u64,
    unsupported_link: Option<u32>,
}

/// Imports a pcap or pcapng file; `port` is the server's.
pub fn import_pcap<R: Read, W: Write>(
    input: R,
    port: u16,
    settings: &ImportSettings,
    out: W,
) -> Result<(W, ImportReport), ImportError> {
    let mut reader = PcapReader::open(input)?;
    let mut header = CaptureHeader::new(Source::Pcap, settings.source_name.clone());
    header.created_ns = settings.created_ns;
    header.writer = settings.writer.clone();
    header.answers = AnswerCoverage::Whole;
    let mut import = PcapImport {
        port,
        flows: HashMap::new(),
        holding: HashSet::new(),
        servers: HashMap::new(),
        next_id: 1,
        emitter: None,
        out: Some(out),
        header,
        settings: settings.clone(),
        outbox: Vec::new(),
        report: ImportReport::default(),
        last_ns: 0,
        other_ports: HashMap::new(),
        frames: 0,
        unsupported_link: None,
    };
    while let Some(frame) = reader.next_frame()? {
        import.frames += 1;
        import.start(frame.resolution_ns)?;
        let at_ns = import.clock(frame.at_ns);
        match decode_frame(frame.link_type, frame.data) {
            Decoded::Tcp(segment) => import.segment(at_ns, &segment, frame.cut)?,
            Decoded::Other => import.report.skip("packets not TCP"),
            Decoded::Fragment => import.report.skip("IP fragments"),
            Decoded::Malformed(what) => import.report.skip(what),
            Decoded::UnsupportedLink(link) => {
                import.unsupported_link = Some(link);
                import.report.skip("packets of an unsupported link type");
            }
        }
    }
    import.report.cut_at = reader.cut_at();
    import.finish()
}

impl<W: Write> PcapImport<W> {
    /// Writes the header, with the first frame's time resolution.
    fn start(&mut self, resolution_ns: u64) -> Result<(), ImportError> {
        if let Some(out) = self.out.take() {
            self.header.time_resolution_ns = resolution_ns;
            self.emitter = Some(Emitter::new(CaptureWriter::create(out, &self.header, self.settings.blocks)?));
        }
        Ok(())
    }

    /// The packet's time, never before the one before it.
    fn clock(&mut self, at_ns: u64) -> u64 {
        if at_ns < self.last_ns {
            self.report.times_stepped_back += 1;
            return self.last_ns;
        }
        self.last_ns = at_ns;
        at_ns
    }

    fn segment(&mut self, at_ns: u64, segment: &TcpSegment<'_>, cut: usize) -> Result<(), ImportError> {
        let to_server = segment.dst.port() == self.port;
        if !to_server && segment.src.port() != self.port {
            for port in [segment.src.port(), segment.dst.port()] {
                *self.other_ports.entry(port).or_default() += 1;
            }
            return Ok(());
        }
        let key = if to_server { (segment.src, segment.dst) } else { (segment.dst, segment.src) };
        if !self.ensure_flow(key, segment, to_server) {
            return Ok(());
        }
        let Some(flow) = self.flows.get_mut(&key) else { return Ok(()) };
        let (outbox, report) = (&mut self.outbox, &mut self.report);
        let Flow { conn, to_server: up, to_client: down, .. } = flow;
        if segment.has(TCP_SYN) {
            if to_server {
                up.syn(segment.seq)
            } else {
                down.syn(segment.seq)
            }
        }
        if segment.has(TCP_ACK) {
            if to_server {
                down.peer_ack(segment.ack)
            } else {
                up.peer_ack(segment.ack)
            }
        }
        let direction = if to_server { up } else { down };
        direction
            .segment(segment.seq, segment.payload, &mut |piece| deliver(conn, to_server, at_ns, piece, outbox, report));
        if cut > 0 {
            // The capture kept only the start of this packet.
            direction.skip_gap(&mut |piece| deliver(conn, to_server, at_ns, piece, outbox, report));
            conn.gap(at_ns, outbox, report);
        }
        if segment.has(TCP_FIN) || segment.has(TCP_RST) {
            self.closing(key, at_ns, to_server, segment.has(TCP_RST));
        }
        self.after(key, at_ns)
    }

    /// The flow a segment belongs to, made when it starts one: a SYN, or
    /// bytes of a connection open before the capture began.
    fn ensure_flow(&mut self, key: FlowKey, segment: &TcpSegment<'_>, to_server: bool) -> bool {
        let opens = to_server && segment.has(TCP_SYN) && !segment.has(TCP_ACK);
        let stale = self.flows.get(&key).is_some_and(|f| f.finished || (opens && f.conn.is_closed()));
        if stale || (opens && self.flows.contains_key(&key)) {
            self.drop_flow(key, self.last_ns);
        }
        if !self.flows.contains_key(&key) {
            if !opens && segment.payload.is_empty() {
                return false;
            }
            let id = self.next_id;
            self.next_id += 1;
            let (client, server) = (key.0.to_string(), key.1.to_string());
            let conn = if opens {
                MysqlConn::from_start(id, client, server)
            } else {
                MysqlConn::joined(id, client, server, self.servers.get(&key.1).cloned().unwrap_or_default())
            };
            let flow = Flow {
                conn,
                to_server: TcpDirection::default(),
                to_client: TcpDirection::default(),
                first_closer: None,
                finished: false,
            };
            self.flows.insert(key, flow);
        }
        true
    }

    /// A FIN or RST: the connection ends with the first; the flow is gone
    /// once both sides closed (or either reset).
    fn closing(&mut self, key: FlowKey, at_ns: u64, from_client: bool, reset: bool) {
        let Some(flow) = self.flows.get_mut(&key) else { return };
        let closer = if from_client { Closer::Client } else { Closer::Server };
        let both = flow.first_closer.is_some_and(|first| first != closer);
        if flow.first_closer.is_none() {
            flow.first_closer = Some(closer);
            let Flow { conn, to_server, to_client, .. } = flow;
            for (direction, upward) in [(to_server, true), (to_client, false)] {
                direction
                    .skip_gap(&mut |piece| deliver(conn, upward, at_ns, piece, &mut self.outbox, &mut self.report));
            }
            conn.close(at_ns, closer, &mut self.outbox, &mut self.report);
        }
        flow.finished = both || reset;
    }

    fn drop_flow(&mut self, key: FlowKey, at_ns: u64) {
        if let Some(mut flow) = self.flows.remove(&key) {
            flow.conn.close(at_ns, Closer::CaptureEnd, &mut self.outbox, &mut self.report);
        }
        self.holding.remove(&key);
    }

    /// After a segment: what the greeting taught of the server, the
    /// records made, and those now safe to write.
    fn after(&mut self, key: FlowKey, at_ns: u64) -> Result<(), ImportError> {
        if let Some(flow) = self.flows.get(&key) {
            let info = flow.conn.server_info();
            if info.capabilities.is_some() && !self.servers.contains_key(&key.1) {
                self.servers.insert(key.1, info.clone());
            }
            if flow.conn.hold_from().is_some() {
                self.holding.insert(key);
            } else {
                self.holding.remove(&key);
            }
            if flow.finished {
                self.flows.remove(&key);
                self.holding.remove(&key);
            }
        }
        let Some(emitter) = self.emitter.as_mut() else { return Ok(()) };
        for record in self.outbox.drain(..) {
            emitter.push(record);
        }
        let held_from = self.holding.iter().filter_map(|k| self.flows.get(k)).filter_map(|f| f.conn.hold_from()).min();
        let watermark = held_from.map_or(at_ns, |held| held.min(at_ns).saturating_sub(1));
        emitter.release(watermark)?;
        Ok(())
    }

    fn finish(mut self) -> Result<(W, ImportReport), ImportError> {
        let at_ns = self.last_ns;
        let keys: Vec<FlowKey> = self.flows.keys().copied().collect();
        for key in keys {
            if let Some(Flow { conn, to_server, to_client, .. }) = self.flows.get_mut(&key) {
                for (direction, upward) in [(to_server, true), (to_client, false)] {
                    direction
                        .skip_gap(&mut |piece| deliver(conn, upward, at_ns, piece, &mut self.outbox, &mut self.report));
                }
                conn.close(at_ns, Closer::CaptureEnd, &mut self.outbox, &mut self.report);
            }
        }
        let emitter = match self.emitter.take() {
            Some(emitter) if self.report.connections > 0 => emitter,
            _ => return Err(self.no_traffic()),
        };
        let mut emitter = emitter;
        for record in self.outbox.drain(..) {
            emitter.push(record);
        }
        let (out, totals, late) = emitter.finish()?;
        self.report.totals = totals;
        self.report.late = late;
        Ok((out, self.report))
    }

    /// Why nothing was imported: no frame could be read, or no MySQL
    /// traffic was on the port (naming the ports that had traffic).
    fn no_traffic(&self) -> ImportError {
        if let (Some(link), true) = (self.unsupported_link, self.report.skipped.len() == 1) {
            return ImportError::UnsupportedLink(link);
        }
        let mut ports: Vec<(u16, u64)> = self.other_ports.iter().map(|(p, n)| (*p, *n)).collect();
        ports.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let busiest: Vec<String> = ports.iter().take(5).map(|(p, n)| format!("{p} ({n} packets)")).collect();
        let mut message = format!("no MySQL traffic on port {} in {} packets", self.port, self.frames);
        if !self.report.not_importable.is_empty() {
            message.push_str(&format!(": {}", self.report.not_importable.join("; ")));
        } else if busiest.is_empty() {
            message.push_str(": the capture holds no TCP traffic at all");
        } else {
            message.push_str(&format!(
                "; the busiest TCP ports are {}: give the server's port with --port=N",
                busiest.join(", ")
            ));
        }
        ImportError::NoMysqlTraffic(message)
    }
}

/// Hands a piece of one direction to the connection.
fn deliver(
    conn: &mut MysqlConn,
    to_server: bool,
    at_ns: u64,
    piece: Piece<'_>,
    out: &mut Outbox,
    report: &mut ImportReport,
) {
    match piece {
        Piece::Bytes { bytes, segment_start } if to_server => {
            conn.client_bytes(at_ns, bytes, segment_start, out, report)
        }
        Piece::Bytes { bytes, .. } => conn.server_bytes(at_ns, bytes, out, report),
        Piece::Gap { .. } => conn.gap(at_ns, out, report),
    }
}

#[cfg(test)]
mod pcap_tests;

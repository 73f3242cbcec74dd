//! One direction of a TCP connection put back in order: retransmitted
//! bytes dropped, segments that came early held until the bytes before
//! them arrive, and a gap declared where the capture lost bytes.
//!
//! A gap is declared when the peer has acknowledged bytes the capture
//! never saw (they reached the peer, not the capture), when more than
//! [`MAX_HELD`] bytes wait behind a hole, and at the end of the capture.
//! Sequence numbers wrap at 2^32; they are compared as differences.

/// Bytes held behind a hole before the hole is taken as lost.
pub const MAX_HELD: usize = 8 << 20;

/// What [`TcpDirection::segment`] hands on, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// In-order bytes; `segment_start` when they begin where a segment began.
    Bytes { bytes: &'a [u8], segment_start: bool },
    /// Bytes the capture does not have.
    Gap { bytes: u64 },
}

#[derive(Debug, Default)]
pub struct TcpDirection {
    /// The sequence number of the next byte expected.
    next: Option<u32>,
    /// Early segments: their sequence number and bytes.
    held: Vec<(u32, Vec<u8>)>,
    held_bytes: usize,
    /// The highest sequence number the peer acknowledged.
    peer_acked: Option<u32>,
}

/// `a - b` as a signed distance in sequence space.
fn distance(a: u32, b: u32) -> i64 {
    i64::from(a.wrapping_sub(b) as i32)
}

impl TcpDirection {
    /// A SYN (or SYN-ACK) with sequence number `seq`: data starts after it.
    pub fn syn(&mut self, seq: u32) {
        self.next = Some(seq.wrapping_add(1));
        self.held.clear();
        self.held_bytes = 0;
    }

    /// The peer acknowledged everything before `ack`.
    pub fn peer_ack(&mut self, ack: u32) {
        self.peer_acked = match self.peer_acked {
            Some(old) if distance(ack, old) <= 0 => Some(old),
            _ => Some(ack),
        };
    }

    /// Takes a segment's bytes; hands on what is now in order.
    pub fn segment(&mut self, seq: u32, payload: &[u8], deliver: &mut dyn FnMut(Piece<'_>)) {
        if payload.is_empty() {
            return;
        }
        let next = *self.next.get_or_insert(seq);
        let ahead = distance(seq, next);
        if ahead > 0 {
            let acked_past = self.peer_acked.is_some_and(|acked| distance(acked, seq) >= 0);
            if acked_past || self.held_bytes + payload.len() > MAX_HELD {
                // The peer has the bytes before this segment and the capture
                // does not, or they have been missing too long.
                self.hold(seq, payload);
                self.skip_gap(deliver);
                return;
            }
            self.hold(seq, payload);
            return;
        }
        self.deliver_from(seq, payload, deliver);
        self.drain(deliver);
    }

    /// Declares the first hole lost and hands on what was held behind it.
    pub fn skip_gap(&mut self, deliver: &mut dyn FnMut(Piece<'_>)) {
        let Some(next) = self.next else { return };
        let Some(&(first, _)) = self.held.iter().min_by_key(|(seq, _)| distance(*seq, next)) else { return };
        let gap = distance(first, next);
        if gap > 0 {
            deliver(Piece::Gap { bytes: gap as u64 });
            self.next = Some(first);
        }
        self.drain(deliver);
    }

    /// Whether bytes wait behind a hole.
    pub fn has_held(&self) -> bool {
        !self.held.is_empty()
    }

    fn hold(&mut self, seq: u32, payload: &[u8]) {
        if let Some(slot) = self.held.iter_mut().find(|(s, _)| *s == seq) {
            if slot.1.len() < payload.len() {
                self.held_bytes += payload.len() - slot.1.len();
                slot.1 = payload.to_vec();
            }
            return;
        }
        self.held_bytes += payload.len();
        self.held.push((seq, payload.to_vec()));
    }

    /// Hands on the part of a segment at or before `next` that is new.
    fn deliver_from(&mut self, seq: u32, payload: &[u8], deliver: &mut dyn FnMut(Piece<'_>)) {
        let Some(next) = self.next else { return };
        let behind = (-distance(seq, next)).max(0) as u64;
        if behind >= payload.len() as u64 {
            return;
        }
        let fresh = payload.get(behind as usize..).unwrap_or_default();
        deliver(Piece::Bytes { bytes: fresh, segment_start: behind == 0 });
        self.next = Some(next.wrapping_add(fresh.len() as u32));
    }

    /// Hands on held segments that are now in order.
    fn drain(&mut self, deliver: &mut dyn FnMut(Piece<'_>)) {
        while let Some(next) = self.next {
            let Some(index) = self.held.iter().position(|(seq, _)| distance(*seq, next) <= 0) else { return };
            let (seq, bytes) = self.held.swap_remove(index);
            self.held_bytes -= bytes.len();
            self.deliver_from(seq, &bytes, deliver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds segments; returns the bytes handed on, with `#n` for a gap of n.
    fn run(direction: &mut TcpDirection, segments: &[(u32, &[u8])]) -> String {
        let mut out = String::new();
        for (seq, payload) in segments {
            direction.segment(*seq, payload, &mut |piece| match piece {
                Piece::Bytes { bytes, .. } => out.push_str(std::str::from_utf8(bytes).unwrap()),
                Piece::Gap { bytes } => out.push_str(&format!("#{bytes}")),
            });
        }
        out
    }

    #[test]
    fn in_order_retransmitted_and_overlapping() {
        let mut d = TcpDirection::default();
        d.syn(99);
        assert_eq!(
            run(&mut d, &[(100, b"abc"), (103, b"def"), (100, b"abc"), (101, b"bcdefg"), (107, b"h")]),
            "abcdefgh"
        );
    }

    #[test]
    fn early_segments_wait_for_the_bytes_before_them() {
        let mut d = TcpDirection::default();
        d.syn(0);
        assert_eq!(run(&mut d, &[(7, b"ghi"), (4, b"def"), (1, b"abc")]), "abcdefghi");
        assert!(!d.has_held());
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut d = TcpDirection::default();
        d.syn(u32::MAX - 3);
        assert_eq!(run(&mut d, &[(u32::MAX - 2, b"abc"), (1, b"efg"), (u32::MAX, b"cde")]), "abcdefg");
    }

    #[test]
    fn bytes_the_peer_acknowledged_but_the_capture_missed_are_a_gap() {
        let mut d = TcpDirection::default();
        d.syn(0);
        assert_eq!(run(&mut d, &[(1, b"abc")]), "abc");
        // "def" (4..7) was lost by the capture; the peer acknowledged it.
        d.peer_ack(7);
        assert_eq!(run(&mut d, &[(7, b"ghi")]), "#3ghi");
    }

    #[test]
    fn a_hole_that_stays_open_is_skipped_at_the_end() {
        let mut d = TcpDirection::default();
        d.syn(0);
        assert_eq!(run(&mut d, &[(1, b"abc"), (10, b"xyz")]), "abc");
        let mut out = String::new();
        d.skip_gap(&mut |piece| match piece {
            Piece::Bytes { bytes, .. } => out.push_str(std::str::from_utf8(bytes).unwrap()),
            Piece::Gap { bytes } => out.push_str(&format!("#{bytes}")),
        });
        assert_eq!(out, "#6xyz");
    }

    #[test]
    fn a_stream_joined_midway_starts_where_it_was_joined() {
        let mut d = TcpDirection::default();
        let mut starts = Vec::new();
        d.segment(5000, b"abc", &mut |piece| {
            if let Piece::Bytes { segment_start, .. } = piece {
                starts.push(segment_start);
            }
        });
        d.segment(5001, b"bcd", &mut |piece| {
            if let Piece::Bytes { segment_start, .. } = piece {
                starts.push(segment_start);
            }
        });
        assert_eq!(starts, [true, false]);
    }
}

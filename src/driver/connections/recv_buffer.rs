//! A connection's received bytes not yet consumed.

/// A receive buffer's starting size. Responses are walked as they arrive,
/// so it only grows when one packet does not fit.
pub(crate) const RECV_BUFFER: usize = 8 * 1024;
/// Below this much free room at its end, the receive buffer is compacted.
pub(crate) const MIN_RECV_ROOM: usize = 2 * 1024;

/// Received bytes not yet consumed, in a heap allocation that stays put
/// while a one-shot receive into it is in flight.
pub(crate) struct RecvBuffer {
    pub(crate) data: Box<[u8]>,
    /// Consumed up to here.
    pub(crate) start: usize,
    /// Received up to here.
    pub(crate) end: usize,
}

impl RecvBuffer {
    pub(crate) fn new(leftover: &[u8]) -> Self {
        let mut data = vec![0; RECV_BUFFER.max(leftover.len() + MIN_RECV_ROOM)].into_boxed_slice();
        data[..leftover.len()].copy_from_slice(leftover);
        RecvBuffer { data, start: 0, end: leftover.len() }
    }

    /// An idle connection's: a few bytes, which grow only as its login or
    /// a ping's answer needs.
    pub(crate) fn small() -> Self {
        Self::small_with(&[])
    }

    /// [`small`](Self::small), holding `leftover`.
    pub(crate) fn small_with(leftover: &[u8]) -> Self {
        let data = leftover.to_vec().into_boxed_slice();
        RecvBuffer { data, start: 0, end: leftover.len() }
    }

    pub(crate) fn unread(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    pub(crate) fn received(&mut self, n: usize) {
        self.end = (self.end + n).min(self.data.len());
    }

    /// Makes at least [`MIN_RECV_ROOM`] free at the end: moves the unread
    /// bytes to the front, and grows only if they fill the buffer. Call
    /// only with no receive in flight.
    pub(crate) fn make_room(&mut self) {
        if self.data.len() - self.end >= MIN_RECV_ROOM {
            return;
        }
        if self.start > 0 {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.data.len() - self.end < MIN_RECV_ROOM {
            let mut bigger = vec![0; (self.data.len() * 2).max(self.end + MIN_RECV_ROOM)].into_boxed_slice();
            bigger[..self.end].copy_from_slice(&self.data[..self.end]);
            self.data = bigger;
        }
    }

    /// Appends bytes a multishot receive left in a provided buffer,
    /// compacting or (for an answer larger than the buffer) growing first.
    pub(crate) fn append(&mut self, bytes: &[u8]) {
        if self.data.len() - self.end < bytes.len() {
            self.data.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.data.len() - self.end < bytes.len() {
            let mut bigger = vec![0; (self.end + bytes.len()).max(self.data.len() * 2)].into_boxed_slice();
            bigger[..self.end].copy_from_slice(&self.data[..self.end]);
            self.data = bigger;
        }
        self.data[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// The free room at the end, for the next receive.
    pub(crate) fn room(&mut self) -> (*mut u8, u32) {
        let room = &mut self.data[self.end..];
        (room.as_mut_ptr(), u32::try_from(room.len()).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recv_buffer_compacts_before_growing() {
        let mut b = RecvBuffer::new(b"abc");
        assert_eq!(b.unread(), b"abc");
        b.consume(1);
        assert_eq!(b.unread(), b"bc");
        // Fill up to leave less than MIN_RECV_ROOM free at the end.
        let filled = RECV_BUFFER - 3 - MIN_RECV_ROOM + 1;
        b.received(filled);
        b.make_room();
        assert_eq!(b.start, 0, "compacted");
        assert_eq!(b.data.len(), RECV_BUFFER, "not grown while compaction was enough");
        assert_eq!(&b.unread()[..2], b"bc");
        b.consume(b.unread().len());
        assert_eq!((b.start, b.end), (0, 0));
    }

    #[test]
    fn recv_buffer_grows_when_one_packet_fills_it() {
        let mut b = RecvBuffer::new(&[]);
        b.received(RECV_BUFFER - 10);
        b.data[RECV_BUFFER - 11] = 42;
        b.make_room();
        assert_eq!(b.data.len(), 2 * RECV_BUFFER);
        assert_eq!(b.unread().len(), RECV_BUFFER - 10);
        assert_eq!(b.unread()[RECV_BUFFER - 11], 42);
        let (_, room) = b.room();
        assert_eq!(room as usize, RECV_BUFFER + 10);
    }

    #[test]
    fn recv_buffer_keeps_a_large_leftover() {
        let leftover = vec![7u8; RECV_BUFFER];
        let mut b = RecvBuffer::new(&leftover);
        assert_eq!(b.unread(), &leftover[..]);
        assert!(b.room().1 as usize >= MIN_RECV_ROOM);
    }
}

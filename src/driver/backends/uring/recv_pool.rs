//! The loop's provided receive buffers (a buffer ring shared with the
//! kernel): the unsafe part of multishot receives, apart from the loop.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::{types, IoUring};

/// The loop's provided buffers for multishot receives (IORING_OP_RECV with
/// RECV_MULTISHOT and a buffer ring, Linux 6.0): each connection's receive
/// is armed once and stays armed, where a one-shot receive costs a
/// submission and a poll arming per answer. The kernel picks a buffer per
/// completion; the loop copies the bytes into the connection's
/// [`RecvBuffer`] (an answer may span buffers and completions) and gives
/// the buffer back at once, so a few per connection are plenty.
pub(super) struct RecvPool {
    /// The ring of buffer descriptors shared with the kernel: page-aligned
    /// `count` entries, whose first entry's reserved field is the tail.
    pub(super) ring: NonNull<types::BufRingEntry>,
    pub(super) ring_layout: Layout,
    pub(super) buffers: Box<[u8]>,
    pub(super) count: u16,
    /// Descriptors handed to the kernel so far (wrapping).
    pub(super) tail: u16,
}

/// The buffer group id of the pool; one pool per ring.
pub(super) const POOL_GROUP: u16 = 0;
/// One provided buffer's size: an answer larger than this spans several.
pub(super) const POOL_BUFFER: usize = 4 * 1024;

impl RecvPool {
    /// How many buffers `conns` connections get: two each, 64 to 4096 in
    /// all (16 MiB at most).
    pub(super) fn size_for(conns: usize) -> usize {
        (conns * 2).next_power_of_two().clamp(64, 4096)
    }

    /// `count` buffers (a power of two, 2 to 32768) registered with `ring`.
    pub(super) fn register(ring: &IoUring, count: usize) -> io::Result<RecvPool> {
        let entry = std::mem::size_of::<types::BufRingEntry>();
        let ring_layout = Layout::from_size_align(count * entry, page_size())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: the layout's size is not zero (count >= 2).
        let raw = unsafe { alloc_zeroed(ring_layout) }.cast::<types::BufRingEntry>();
        let ring_ptr = NonNull::new(raw).ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let count = u16::try_from(count).unwrap_or(u16::MAX);
        let mut pool = RecvPool {
            ring: ring_ptr,
            ring_layout,
            buffers: vec![0; usize::from(count) * POOL_BUFFER].into_boxed_slice(),
            count,
            tail: 0,
        };
        for bid in 0..count {
            pool.put(bid);
        }
        pool.publish();
        // SAFETY: the descriptors and buffers live as long as the pool,
        // which the driver drops after the ring (field order).
        unsafe { ring.submitter().register_buf_ring_with_flags(raw as u64, count, POOL_GROUP, 0) }?;
        Ok(pool)
    }

    /// The first `len` bytes the kernel wrote into buffer `bid`.
    pub(super) fn filled(&self, bid: u16, len: usize) -> &[u8] {
        let start = usize::from(bid) * POOL_BUFFER;
        self.buffers.get(start..start + len.min(POOL_BUFFER)).unwrap_or(&[])
    }

    /// Queues buffer `bid` for the kernel again (seen once [`Self::publish`]ed).
    pub(super) fn put(&mut self, bid: u16) {
        let slot = usize::from(self.tail & (self.count - 1));
        let addr = self.buffers.as_mut_ptr() as u64 + (usize::from(bid) * POOL_BUFFER) as u64;
        // SAFETY: `slot` < count, the descriptors the allocation holds; the
        // kernel reads only descriptors before the published tail.
        let entry = unsafe { &mut *self.ring.as_ptr().add(slot) };
        entry.set_addr(addr);
        entry.set_len(POOL_BUFFER as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Lets the kernel see the buffers put back.
    pub(super) fn publish(&self) {
        // SAFETY: the tail is a properly aligned u16 inside the first
        // descriptor, which the kernel reads with acquire ordering.
        let tail = unsafe { AtomicU16::from_ptr(types::BufRingEntry::tail(self.ring.as_ptr()).cast_mut()) };
        tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for RecvPool {
    fn drop(&mut self) {
        // SAFETY: allocated in `register` with this layout; the ring that
        // used it is gone (dropped before the pool).
        unsafe { dealloc(self.ring.as_ptr().cast(), self.ring_layout) };
    }
}

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(4096)
}

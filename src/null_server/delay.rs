//! `--delay-us`: each answer held back a fixed time, precisely. tokio's
//! timer counts whole milliseconds, so a 200 µs delay became 1-2 ms;
//! a timerfd per connection, with the thread's timer slack at its least,
//! fires within a wake-up of the time asked. A measure of what a client
//! adds to latency is this delay subtracted from what it measured.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use tokio::io::unix::AsyncFd;

/// A connection's timer.
pub struct AnswerDelay {
    timer: AsyncFd<OwnedFd>,
    delay: Duration,
}

impl AnswerDelay {
    pub fn new(delay: Duration) -> io::Result<Self> {
        // SAFETY: no pointer is passed; a descriptor or -1 comes back.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the `OwnedFd` is the only owner of the descriptor and is
        // neither replaced nor closed while the `AsyncFd` holds it.
        let timer = unsafe { AsyncFd::register(owned)? };
        Ok(AnswerDelay { timer, delay })
    }

    /// Waits the delay from now.
    pub async fn wait(&self) -> io::Result<()> {
        self.wait_for(self.delay).await
    }

    /// The delay each command takes.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Waits `delay` from now.
    pub async fn wait_for(&self, delay: Duration) -> io::Result<()> {
        self.arm(delay)?;
        let fd = self.timer.as_raw_fd();
        loop {
            let mut ready = self.timer.readable().await?;
            let mut expirations = [0u8; 8];
            // SAFETY: the buffer is valid for writes of its 8 bytes.
            let n = unsafe { libc::read(fd, expirations.as_mut_ptr().cast(), expirations.len()) };
            if n == 8 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::WouldBlock {
                return Err(error);
            }
            ready.clear_ready();
        }
    }

    /// Sets the timer to fire once, `delay` from now (at least a
    /// nanosecond: a zero would disarm it).
    fn arm(&self, delay: Duration) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: delay.as_secs() as libc::time_t,
                tv_nsec: libc::c_long::from(delay.subsec_nanos() as i32).max(1),
            },
        };
        let fd = self.timer.as_raw_fd();
        // SAFETY: `spec` is valid for reading; no old value is asked for.
        if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Lets this thread's timers fire on time: by default Linux may fire them
/// up to 50 µs late, to batch wake-ups.
pub fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer and touches no memory.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// 200 µs is 200 µs, not tokio's millisecond: the timer is armed to
    /// the microsecond (what is left of it, read back at once, is at most
    /// the delay, or it has already fired on a slow machine). How late it
    /// fires is the scheduler's, measured by benches/compare.sh's case l,
    /// not asserted here.
    #[tokio::test]
    async fn the_timer_is_armed_to_the_microsecond() {
        let delay = AnswerDelay::new(Duration::from_micros(200)).unwrap();
        delay.arm(delay.delay()).unwrap();
        // SAFETY: an all-zero itimerspec is a valid value to overwrite.
        let mut left: libc::itimerspec = unsafe { std::mem::zeroed() };
        // SAFETY: `left` is valid for writes.
        assert_eq!(unsafe { libc::timerfd_gettime(delay.timer.as_raw_fd(), &mut left) }, 0);
        let left = Duration::new(left.it_value.tv_sec as u64, left.it_value.tv_nsec as u32);
        assert!(left <= Duration::from_micros(200), "{left:?} left of a 200 µs delay");
    }

    /// An answer is never sent early.
    #[tokio::test]
    async fn the_delay_is_never_cut_short() {
        precise_timers();
        let delay = AnswerDelay::new(Duration::from_micros(200)).unwrap();
        for _ in 0..20 {
            let start = Instant::now();
            delay.wait().await.unwrap();
            let took = start.elapsed();
            assert!(took >= Duration::from_micros(200), "{took:?}");
        }
    }
}

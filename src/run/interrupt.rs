//! Ctrl-C (SIGINT) and SIGTERM. sysbench dies on them without a word; a
//! wirebench command stops: `run` sends no new event, lets the answers in
//! flight come back for a short while, closes its connections with
//! COM_QUIT and prints the report of what ran; `prepare` and `cleanup`
//! say what they had done. The exit status is the shell's for a process
//! the signal killed (130, 143). A second signal exits at once.
//!
//! The handlers are tokio's (signal-hook-registry: in signal context only
//! a flag and a write to a self-pipe); the set-up runtime's threads, idle
//! while the loops run, take the signal from there: it stops the loops
//! through `RunControl` and wakes the report thread through `Finished`.
//! They are handled even when wirebench started with them ignored (a job
//! started in the background of a script ignores SIGINT), as the null
//! server's Ctrl-C is: a `kill -INT` then stops the run as it would in a
//! terminal, instead of doing nothing.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use super::output::stderr_line;
use crate::driver::{Finished, RunControl};

/// The signal that stopped a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `kill`, a service manager, a container stopping.
    Terminate,
}

impl Signal {
    /// The status a shell reports for a process this signal killed
    /// (128 + its number), which scripts test for.
    pub fn exit_status(self) -> u8 {
        match self {
            Signal::Interrupt => 130,
            Signal::Terminate => 143,
        }
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        })
    }
}

/// SIGINT and SIGTERM as a command sees them, from when it starts.
pub(super) struct Interrupts {
    shared: Arc<InterruptShared>,
}

struct InterruptShared {
    /// The first signal, once one came.
    received: watch::Sender<Option<Signal>>,
    /// The running loops and the report thread, once they exist.
    run: Mutex<Option<(Arc<RunControl>, Finished)>>,
}

impl Interrupts {
    /// Installs the handlers; `runtime`'s threads then watch for the signals.
    pub(super) fn watch(runtime: &tokio::runtime::Runtime) -> io::Result<Interrupts> {
        let _context = runtime.enter();
        let streams = [
            (Signal::Interrupt, signal(SignalKind::interrupt())?),
            (Signal::Terminate, signal(SignalKind::terminate())?),
        ];
        let shared = Arc::new(InterruptShared { received: watch::Sender::new(None), run: Mutex::new(None) });
        for (which, mut stream) in streams {
            let shared = shared.clone();
            runtime.spawn(async move {
                while stream.recv().await.is_some() {
                    shared.on_signal(which);
                }
            });
        }
        Ok(Interrupts { shared })
    }

    /// The first signal, if one came.
    pub(super) fn first_signal(&self) -> Option<Signal> {
        *self.shared.received.borrow()
    }

    /// Runs `work` to its end, or until a signal comes (the signal then,
    /// and `work` is dropped where it stands).
    pub(super) async fn or_signal<T>(&self, work: impl Future<Output = T>) -> Result<T, Signal> {
        let mut received = self.shared.received.subscribe();
        tokio::select! {
            done = work => Ok(done),
            signal = received.wait_for(Option::is_some) => match signal {
                Ok(signal) => Err((*signal).unwrap_or(Signal::Interrupt)),
                // The sender lives as long as `self`: never.
                Err(_) => std::future::pending().await,
            },
        }
    }

    /// From now on a signal also stops `control`'s loops and wakes the
    /// report thread waiting on `finished`; at once if one came already.
    pub(super) fn attach(&self, control: &Arc<RunControl>, finished: &Finished) {
        let mut run = self.shared.run.lock().unwrap_or_else(PoisonError::into_inner);
        *run = Some((control.clone(), finished.clone()));
        if self.first_signal().is_some() {
            control.stop();
            finished.alert();
        }
    }
}

impl InterruptShared {
    fn on_signal(&self, signal: Signal) {
        if self.received.borrow().is_some() {
            stderr_line(format_args!("wirebench: {signal} again: exiting at once, without a report"));
            // The one exit outside main: the user asked for no report, and
            // the threads that would return one may be stuck on a server.
            std::process::exit(i32::from(signal.exit_status()));
        }
        stderr_line(format_args!("wirebench: {signal}: stopping (a second Ctrl-C or SIGTERM exits at once)"));
        self.received.send_replace(Some(signal));
        if let Some((control, finished)) = &*self.run.lock().unwrap_or_else(PoisonError::into_inner) {
            control.stop();
            finished.alert();
        }
    }
}

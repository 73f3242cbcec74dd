//! One loop of the proxy: a current-thread runtime on its pinned thread,
//! a task per proxied pair, and every [`SHIP_EVERY`] its records to the
//! recording thread, with its promise that none it sends later is earlier
//! (the records are dated from one clock, read as the bytes are handed to
//! the tap, with no wait in between). Once the run is stopped it closes
//! its pairs (each records its close) and sends its last batch.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::watch;
use tokio::task::JoinSet;
use wirebench_capture::import::ImportReport;

use super::listen::{accept_all, AcceptedSocket, RelayListeners};
use super::loop_shared::RelayShared;
use super::pair::serve_pair;
use super::recording::Shipment;
use super::RelayOptions;
use crate::driver::{Clock, DriverError, LoopContext, LoopOp};

/// How often a loop sends its records and looks at the run: the
/// recording's lag, and how long a stop waits for a loop to see it.
const SHIP_EVERY: Duration = Duration::from_millis(50);

/// What one loop starts with.
pub(super) struct RelayLoopPlan {
    options: Arc<RelayOptions>,
    incoming: UnboundedReceiver<AcceptedSocket>,
    /// Loop 0's: the listeners, and where each loop takes connections.
    acceptor: Option<(RelayListeners, Vec<UnboundedSender<AcceptedSocket>>)>,
    inlet: SyncSender<Shipment>,
    next_id: Arc<AtomicU64>,
    /// The Unix time at the run clock's start, ns.
    epoch_ns: u64,
}

/// A plan per loop (at least one), each with its core.
pub(super) fn plan_relay_loops(
    options: RelayOptions,
    cpus: Vec<Option<usize>>,
    listeners: RelayListeners,
    inlet: SyncSender<Shipment>,
    clock: Clock,
) -> Vec<(Option<usize>, RelayLoopPlan)> {
    let cpus = if cpus.is_empty() { vec![None] } else { cpus };
    let (senders, receivers): (Vec<_>, Vec<_>) = cpus.iter().map(|_| unbounded_channel()).unzip();
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let epoch_ns = now.saturating_sub(clock.now_ns());
    let options = Arc::new(options);
    let next_id = Arc::new(AtomicU64::new(1));
    let mut acceptor = Some((listeners, senders));
    cpus.into_iter()
        .zip(receivers)
        .map(|(cpu, incoming)| {
            let plan = RelayLoopPlan {
                options: options.clone(),
                incoming,
                acceptor: acceptor.take(),
                inlet: inlet.clone(),
                next_id: next_id.clone(),
                epoch_ns,
            };
            (cpu, plan)
        })
        .collect()
}

pub(super) fn run_relay_loop(index: usize, plan: RelayLoopPlan, context: &LoopContext) -> Result<(), DriverError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DriverError::Loop { index, op: LoopOp::StartRuntime, source })?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, serve_loop(index, plan, context.clone()));
    Ok(())
}

async fn serve_loop(index: usize, plan: RelayLoopPlan, context: LoopContext) {
    let RelayLoopPlan { options, mut incoming, acceptor, inlet, next_id, epoch_ns } = plan;
    let shared = Rc::new(RelayShared {
        index,
        options,
        clock: context.clock,
        epoch_ns,
        next_id,
        records: RefCell::new(Vec::new()),
        counts: RefCell::new(ImportReport::default()),
        upstream_failures: Default::default(),
    });
    if let Some((listeners, loops)) = acceptor {
        tokio::task::spawn_local(accept_all(listeners, loops));
    }
    let (stop, stopped) = watch::channel(false);
    let mut pairs = JoinSet::new();
    let mut tick = tokio::time::interval(SHIP_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut open = true;
    loop {
        tokio::select! {
            accepted = incoming.recv(), if open => match accepted {
                Some(accepted) => drop(pairs.spawn_local(serve_pair(accepted, shared.clone(), stopped.clone()))),
                None => open = false,
            },
            Some(_) = pairs.join_next(), if !pairs.is_empty() => {}
            _ = tick.tick() => {
                shared.ship(&inlet, false);
                if context.control.is_stopped() {
                    break;
                }
            }
        }
    }
    stop.send_replace(true);
    while pairs.join_next().await.is_some() {}
    shared.ship(&inlet, true);
}

//! `--mysql-dry-run`: no connection, no I/O. As in sysbench, where every
//! driver call "succeeds" at once, the run measures the client's own cost:
//! each session's commands are generated into a buffer and dropped, and
//! every command completes as soon as it is written (see
//! [`Session::answer_dry`]).

use std::thread::JoinHandle;

use super::{Budget, DriverError, LoopContext, Session};
use crate::client::Endpoint;

/// One would-be connection: where it would have gone (for error messages)
/// and its session.
pub struct DryConn {
    pub endpoint: Endpoint,
    pub session: Session,
}

/// The sessions one loop drives, and the core it is pinned to.
pub struct DryLoopPlan {
    pub cpu: Option<usize>,
    pub connections: Vec<DryConn>,
}

/// Starts one pinned thread per loop, as [`spawn_loops`](super::spawn_loops) does.
pub fn spawn_dry_loops(
    plans: Vec<DryLoopPlan>,
    context: &LoopContext,
) -> std::io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, plan.connections));
    super::spawn_pinned("wirebench-dry", plans, context, run_dry_loop)
}

/// Round-robin over the sessions, one command each per turn, until every
/// one is done.
pub fn run_dry_loop(index: usize, mut connections: Vec<DryConn>, context: &LoopContext) -> Result<(), DriverError> {
    let mut stats = context.board.loop_stats(index);
    let mut budget = Budget::new(context.control.clone(), context.deadline_ns);
    let mut out = Vec::with_capacity(64 * 1024);
    let mut result = Ok(());
    loop {
        let mut busy = false;
        for conn in connections.iter_mut().filter(|c| !c.session.is_done()) {
            let filled = conn.session.fill(&mut out, context.clock.now_ns(), &mut budget);
            if let Err(source) = filled {
                result = Err(DriverError::Session { endpoint: conn.endpoint.clone(), source });
                break;
            }
            out.clear();
            budget.sent(context.clock.now_ns(), &mut stats);
            conn.session.answer_dry(context.clock.now_ns(), &mut stats);
            busy |= !conn.session.is_done();
        }
        context.board.publish_if_requested(index, &mut stats);
        if !busy || result.is_err() {
            break;
        }
    }
    context.board.publish(index, &mut stats);
    result
}

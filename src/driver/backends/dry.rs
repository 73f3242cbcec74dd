//! `--mysql-dry-run`: no connection, no I/O. As in sysbench, where every
//! driver call "succeeds" at once, the run measures the client's own cost:
//! each pipeline's commands are generated into a buffer and dropped, and
//! every command completes as soon as it is written (see
//! [`EventPipeline::answer_dry`]).

use std::thread::JoinHandle;

use crate::client::Endpoint;
use crate::driver::{Budget, DriverError, EventPipeline, LoopContext};

/// One would-be connection: where it would have gone (for error messages)
/// and its pipeline of events.
pub struct DryConn {
    pub endpoint: Endpoint,
    pub pipeline: EventPipeline,
}

/// The pipelines one loop drives, and the core it is pinned to.
pub struct DryLoopPlan {
    pub cpu: Option<usize>,
    pub connections: Vec<DryConn>,
}

/// Starts one pinned thread per loop, as [`spawn_loops`](crate::driver::spawn_loops) does.
pub fn spawn_dry_loops(
    plans: Vec<DryLoopPlan>,
    context: &LoopContext,
) -> std::io::Result<Vec<JoinHandle<Result<(), DriverError>>>> {
    let plans = plans.into_iter().map(|plan| (plan.cpu, plan.connections));
    crate::driver::threads::spawn::spawn_pinned("wirebench-dry", plans, context, run_dry_loop)
}

/// Round-robin over the pipelines, one command each per turn, until every
/// one is done.
pub fn run_dry_loop(index: usize, mut connections: Vec<DryConn>, context: &LoopContext) -> Result<(), DriverError> {
    let mut stats = context.board.loop_stats(index);
    let mut budget = Budget::for_loop(context.control.clone(), context.deadline_ns, index);
    let mut out = Vec::with_capacity(64 * 1024);
    let mut result = Ok(());
    loop {
        let mut busy = false;
        for conn in connections.iter_mut().filter(|c| !c.pipeline.is_done()) {
            let filled = conn.pipeline.fill(&mut out, context.clock.now_ns(), &mut budget);
            if let Err(source) = filled {
                result = Err(DriverError::EventPipeline { endpoint: conn.endpoint.clone(), source });
                break;
            }
            out.clear();
            budget.sent(context.clock.now_ns(), &mut stats);
            conn.pipeline.answer_dry(context.clock.now_ns(), &mut stats);
            busy |= !conn.pipeline.is_done();
        }
        budget.hand_over(&context.board, &mut stats);
        if !busy || result.is_err() {
            break;
        }
    }
    context.board.publish(index, &mut stats);
    result
}

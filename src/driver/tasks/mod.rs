//! Tasks: code that makes one call at a time (a Lua script's states), run
//! on a loop as fibers (`fiber_task.rs`); the queue of a loop's tasks and
//! what each waits for (`task_queue.rs`); their calls on their
//! connections (`task_calls.rs`); where they wait for the run to start
//! (`start_gate.rs`).
//!
//! It may import `client`, `stats`, the driver's pacing and connections;
//! never a backend, which runs the tasks.

pub(crate) mod fiber_task;
pub(crate) mod start_gate;
pub(crate) mod task_calls;
pub(crate) mod task_queue;

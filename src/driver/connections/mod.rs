//! Connections and their work: what a connection does whatever the
//! backend. A built-in test's connection keeps its pipeline of events full
//! (`event_pipeline.rs`), a task's makes one call at a time
//! (`call_exchange.rs`);
//! `conn_io.rs` passes their bytes through the transport and opens a lost
//! connection again (`redial.rs`); `recv_buffer.rs` holds what was
//! received and not yet used; `waits.rs` how long each has waited, and its
//! timeouts; `idle.rs`: `--idle-connections`.
//!
//! It may import `client`, `transport`, `workload`, `stats`, `rand`, the
//! protocol crate and the driver's pacing; never a backend, which drives
//! these.

pub(crate) mod call_exchange;
pub(crate) mod conn_io;
pub(crate) mod event_pipeline;
pub(crate) mod idle;
pub(crate) mod recv_buffer;
pub(crate) mod redial;
pub(crate) mod waits;

//! The connection state machine: bytes in, bytes out, events.

//! The connection phase: how a client logs in (MySQL
//! `page_protocol_connection_phase`).
//!
//! - `packets.rs`, the login's messages, each with its parser or encoder:
//!   the server's greeting ([`Greeting`], [`InitialHandshake`]), the
//!   client's [`SslRequest`] and [`HandshakeResponse41`], the server's
//!   [`AuthSwitchRequest`] and [`AuthMoreData`], and capability
//!   negotiation ([`negotiate_capabilities`]).
//! - `client.rs`, the client's state machine that exchanges them in order:
//!   [`ClientHandshake`], given a [`HandshakeConfig`], tells the caller
//!   what to do next with a [`HandshakeStep`] and ends with a
//!   [`LoginInfo`], what the login established.
//!
//! - `login_request.rs`, the client's first packet read back on the
//!   server's side ([`ClientFirstPacket`]), for a server, a recording proxy
//!   and a capture import.
//!
//! What each authentication plugin computes lives in [`crate::auth`].

mod client;
mod login_request;
mod packets;

pub use client::{ClientHandshake, HandshakeConfig, HandshakeStep, LoginInfo, TlsMode, MAX_LOGIN_PACKET};
pub use login_request::{ClientFirstPacket, LoginRequest};
pub use packets::{
    client_capabilities, greeting_deviations, negotiate_capabilities, AuthMoreData, AuthSwitchRequest,
    CapabilityOptions, Greeting, HandshakeResponse41, InitialHandshake, SslRequest, AUTH_MORE_DATA_HEADER,
    AUTH_SWITCH_HEADER, PROTOCOL_VERSION,
};

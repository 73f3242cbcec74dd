//! The TLS part of the login, without I/O: after the SSLRequest has gone
//! out in clear, the TLS handshake runs on the bytes the socket delivers
//! ([`start`], then [`step`]); the login then continues inside TLS
//! (`ClientHandshake::tls_established`), through the connection's
//! transport (see [`Login`](super::Login)).

use wirebench_protocol::{CodecError, ProtocolError};

use super::{ClientError, Endpoint};
use crate::transport::tls::{ClientTls, TlsError, TlsLayer};

/// Where the TLS handshake stands after a step.
pub(super) enum TlsStart {
    Going,
    Done,
}

/// Starts the TLS handshake: its ClientHello is appended to `wire_out`.
pub(super) fn start(tls: &ClientTls, endpoint: &Endpoint, wire_out: &mut Vec<u8>) -> Result<TlsLayer, ClientError> {
    let mut layer = TlsLayer::new(tls, endpoint.tls_server_name())
        .map_err(|source| ClientError::TlsStart { endpoint: endpoint.clone(), source })?;
    layer.write_pending(wire_out).map_err(|e| failed(tls, endpoint, &e))?;
    Ok(layer)
}

/// Feeds the handshake what the socket delivered and appends its answer to
/// `wire_out`. Packet-stream bytes the server sent along with its last
/// flight (none from MySQL or MariaDB, but TLS 1.3 allows them) are
/// appended to `plain`.
pub(super) fn step(
    layer: &mut TlsLayer,
    tls: &ClientTls,
    endpoint: &Endpoint,
    wire_in: &[u8],
    plain: &mut Vec<u8>,
    wire_out: &mut Vec<u8>,
) -> Result<TlsStart, ClientError> {
    if let Err(e) = layer.decode(wire_in, plain) {
        // rustls queued an alert saying why: the server's log shows it.
        let _ = layer.write_pending(wire_out);
        return Err(failed(tls, endpoint, &e));
    }
    layer.write_pending(wire_out).map_err(|e| failed(tls, endpoint, &e))?;
    Ok(if layer.is_handshaking() { TlsStart::Going } else { TlsStart::Done })
}

fn failed(tls: &ClientTls, endpoint: &Endpoint, error: &TlsError) -> ClientError {
    ClientError::Tls { endpoint: endpoint.clone(), message: tls.explain(error) }
}

/// The login's error when TLS is required and the server's greeting does
/// not offer it, in place of the protocol crate's MissingCapability("SSL").
pub(super) fn not_offered(tls: &ClientTls, endpoint: &Endpoint, error: CodecError) -> ClientError {
    if error != CodecError::Protocol(ProtocolError::MissingCapability("SSL")) {
        return ClientError::from_codec(endpoint.clone(), error);
    }
    ClientError::Tls {
        endpoint: endpoint.clone(),
        message: format!(
            "--mysql-ssl={} requires TLS, and the server does not offer it: configure its ssl_cert and ssl_key \
             (MariaDB, MySQL 5.7) or check that TLS is not disabled; --mysql-ssl=PREFERRED falls back to plain text \
             (as sysbench 1.0.20 with libmariadb does silently), --mysql-ssl=off does without (see docs/tls.md)",
            tls.mode
        ),
    }
}

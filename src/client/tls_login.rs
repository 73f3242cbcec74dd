//! The TLS part of the login: after the SSLRequest has gone out in clear,
//! the TLS handshake runs over the stream; the login then continues inside
//! TLS (`ClientHandshake::tls_established`), through the connection's
//! transport.

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use wirebench_protocol::{CodecError, ProtocolError};

use super::{ClientError, Endpoint};
use crate::transport::tls::{ClientTls, TlsError, TlsLayer};

/// Runs the TLS handshake on `stream`. Packet-stream bytes the server sent
/// along with its last handshake flight (none from MySQL or MariaDB, but
/// TLS 1.3 allows them) are appended to `plain`.
pub(super) async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    tls: &ClientTls,
    endpoint: &Endpoint,
    plain: &mut Vec<u8>,
) -> Result<TlsLayer, ClientError> {
    let io = |source: std::io::Error| ClientError::Io { endpoint: endpoint.clone(), source };
    let mut layer = TlsLayer::new(tls, endpoint.tls_server_name())
        .map_err(|source| ClientError::TlsStart { endpoint: endpoint.clone(), source })?;
    let mut out = Vec::with_capacity(2048);
    let mut input = BytesMut::with_capacity(16 * 1024);
    loop {
        out.clear();
        layer.write_pending(&mut out).map_err(|e| failed(tls, endpoint, &e))?;
        if !out.is_empty() {
            stream.write_all(&out).await.map_err(io)?;
        }
        if !layer.is_handshaking() {
            return Ok(layer);
        }
        input.clear();
        if stream.read_buf(&mut input).await.map_err(io)? == 0 {
            return Err(ClientError::Tls {
                endpoint: endpoint.clone(),
                message: "the server closed the connection during the TLS handshake (see its error log)".into(),
            });
        }
        if let Err(e) = layer.decode(&input, plain) {
            // rustls queued an alert saying why: the server's log shows it.
            out.clear();
            if layer.write_pending(&mut out).is_ok() && !out.is_empty() {
                let _ = stream.write_all(&out).await;
            }
            return Err(failed(tls, endpoint, &e));
        }
    }
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

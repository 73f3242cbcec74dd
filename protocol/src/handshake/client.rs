//! The client side of the connection phase, sans-IO: bytes read from the
//! socket go in, bytes to write come out, and a [`HandshakeStep`] says what
//! the caller must do next. TLS itself is the caller's: the state machine
//! only says when to start it.
//!
//! The exchange (MySQL `page_protocol_connection_phase`): the server's
//! greeting (seq 0); optionally an SSLRequest (seq 1) and the TLS handshake;
//! the HandshakeResponse41 (seq 1, or 2 after TLS); then, until OK or ERR,
//! AuthSwitchRequest / AuthMoreData from the server, each answered by the
//! client with the next sequence id.

use std::fmt;

use super::packets::{
    greeting_deviations, negotiate_capabilities, AuthMoreData, AuthSwitchRequest, CapabilityOptions, Greeting,
    HandshakeResponse41, SslRequest, AUTH_MORE_DATA_HEADER, AUTH_SWITCH_HEADER,
};
use crate::auth::{caching_sha2, rsa_key, sha256_password, AuthPlugin, CryptoRngCore};
use crate::buf::WriteExt;
use crate::constants::{Capabilities, StatusFlags, CHARSET_UTF8MB4_GENERAL_CI, DEFAULT_MAX_PACKET_SIZE};
use crate::error::{CodecError, ProtocolError, Result, UsageError};
use crate::framing::{decode_answer_packet, finish_packet, start_packet};
use crate::response::err::{ErrPacket, ServerError, ERR_HEADER};
use crate::response::ok::{OkPacket, OK_HEADER};
use crate::server_text::ServerText;
use crate::tolerance::{Deviation, Deviations};

/// MariaDB may chain plugins (`IDENTIFIED VIA a OR b`), so more than one
/// switch is legitimate; a bound keeps a confused server from looping.
const MAX_AUTH_SWITCHES: u8 = 8;

/// The largest packet the login accepts, whatever `max_packet_size` says:
/// a login exchange is a few KiB (its largest legitimate piece, an RSA
/// public key or an auth switch with its data, is about 1 KiB), so a
/// server that sends more is refused before it can make the caller buffer
/// megabytes of it. `max_packet_size` still bounds it when smaller, and
/// governs the packets after the login.
pub const MAX_LOGIN_PACKET: usize = 64 * 1024;

/// Whether to use TLS. The TLS handshake itself is done by the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TlsMode {
    #[default]
    Disabled,
    /// Use TLS when the server offers it.
    Preferred,
    /// Fail with `MissingCapability("SSL")` when the server does not offer it.
    Required,
}

/// What the client logs in with and asks for.
#[derive(Clone, PartialEq, Eq)]
pub struct HandshakeConfig {
    pub user: String,
    pub password: Vec<u8>,
    pub database: Option<String>,
    /// The transport cannot be read by others (a unix socket): passwords may
    /// go in clear, as over TLS.
    pub secure_transport: bool,
    pub tls: TlsMode,
    /// The server's RSA public key (PEM), for caching_sha2_password and
    /// sha256_password over unencrypted TCP: the password goes encrypted to
    /// it, and the server's own key is not asked for.
    pub server_public_key: Option<Vec<u8>>,
    /// Over unencrypted TCP without [`server_public_key`](Self::server_public_key),
    /// ask the server for its RSA key and encrypt the password to whatever
    /// key comes back (libmysqlclient's `MYSQL_OPT_GET_SERVER_PUBLIC_KEY`).
    /// Off by default, as there: whoever answers in the server's place
    /// sends its own key and reads the password, so full authentication
    /// then fails with [`ProtocolError::PublicKeyRequired`] instead.
    pub get_server_public_key: bool,
    /// Ask for CLIENT_DEPRECATE_EOF (granted when the server offers it).
    pub deprecate_eof: bool,
    /// Connection attributes (`_client_name`, ...); CONNECT_ATTRS is asked for when non-empty.
    pub connect_attrs: Vec<(String, String)>,
    /// Announced to the server; the largest packet accepted during the
    /// handshake is this or [`MAX_LOGIN_PACKET`], whichever is smaller.
    pub max_packet_size: u32,
    /// The connection's collation id.
    pub charset: u8,
    /// Further capabilities to ask for, e.g. MariaDB extended ones.
    pub extra_capabilities: Capabilities,
}

impl HandshakeConfig {
    /// A configuration with the defaults: no database, plain TCP, no TLS,
    /// DEPRECATE_EOF on, utf8mb4_general_ci, 64 MiB packets.
    pub fn new(user: impl Into<String>, password: impl Into<Vec<u8>>) -> Self {
        HandshakeConfig {
            user: user.into(),
            password: password.into(),
            database: None,
            secure_transport: false,
            tls: TlsMode::Disabled,
            server_public_key: None,
            get_server_public_key: false,
            deprecate_eof: true,
            connect_attrs: Vec::new(),
            max_packet_size: DEFAULT_MAX_PACKET_SIZE,
            charset: CHARSET_UTF8MB4_GENERAL_CI,
            extra_capabilities: Capabilities::empty(),
        }
    }
}

impl fmt::Debug for HandshakeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandshakeConfig")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .field("database", &self.database)
            .field("secure_transport", &self.secure_transport)
            .field("tls", &self.tls)
            .field("server_public_key", &self.server_public_key.as_ref().map(|k| k.len()))
            .field("get_server_public_key", &self.get_server_public_key)
            .field("deprecate_eof", &self.deprecate_eof)
            .field("connect_attrs", &self.connect_attrs)
            .field("max_packet_size", &self.max_packet_size)
            .field("charset", &self.charset)
            .field("extra_capabilities", &self.extra_capabilities)
            .finish()
    }
}

/// What the login established: the capabilities every later decoder
/// needs, and what is known of the server and of the authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginInfo {
    /// The negotiated capabilities: pass them to every decoder.
    pub capabilities: Capabilities,
    /// What the server offered.
    pub server_capabilities: Capabilities,
    /// For display: MariaDB's `5.5.5-` prefix removed, made safe to
    /// print ([`ServerText`](crate::ServerText)).
    pub server_version: String,
    pub is_mariadb: bool,
    pub connection_id: u32,
    /// From the final OK packet.
    pub status: StatusFlags,
    /// The plugin that authenticated the connection.
    pub auth_plugin: AuthPlugin,
    /// The PEM key the server sent when asked for it, so that later
    /// connections can pass it in [`HandshakeConfig::server_public_key`].
    pub server_public_key: Option<Vec<u8>>,
    /// The server lacks CLIENT_CONNECT_WITH_DB, so the configured database
    /// was not sent with the login: select it with COM_INIT_DB before
    /// anything else, as libmariadb's `mysql_real_connect` does.
    pub select_database: bool,
    /// What the login tolerated of the server (see [`crate::tolerance`]).
    pub deviations: Deviations,
}

/// What the caller does next.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandshakeStep {
    /// Write `out` if it is not empty, then read more and call `advance` again.
    NeedMore,
    /// Write `out` (the SSLRequest), do the TLS handshake, then call
    /// [`ClientHandshake::tls_established`]; all later bytes go through TLS.
    StartTls,
    /// Logged in: the connection is ready for commands.
    Done(LoginInfo),
    /// The server refused the connection or the login. The handshake is over.
    ServerError(ServerError),
}

/// Where the login stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoginPhase {
    Greeting,
    Tls,
    Auth(AuthPhase),
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AuthPhase {
    /// A plugin's first answer is sent.
    Started,
    /// caching_sha2_password said fast_auth_success: OK must follow.
    FastAuthSucceeded,
    /// The client asked for the server's RSA key.
    AwaitingPublicKey,
    /// The password itself (clear or encrypted) is sent.
    PasswordSent,
}

impl LoginPhase {
    fn describe(self) -> &'static str {
        match self {
            LoginPhase::Greeting => "waiting for the server greeting",
            LoginPhase::Tls => "waiting for the TLS handshake",
            LoginPhase::Auth(AuthPhase::Started) => "authenticating",
            LoginPhase::Auth(AuthPhase::FastAuthSucceeded) => "waiting for OK after fast_auth_success",
            LoginPhase::Auth(AuthPhase::AwaitingPublicKey) => "waiting for the server's RSA public key",
            LoginPhase::Auth(AuthPhase::PasswordSent) => "waiting for the result of full authentication",
            LoginPhase::Finished => "the handshake was over",
        }
    }
}

/// What the greeting said about the server, kept for the [`LoginInfo`].
#[derive(Debug, Clone, Default)]
struct GreetedServer {
    version: String,
    is_mariadb: bool,
    connection_id: u32,
    capabilities: Capabilities,
}

/// The client handshake state machine. It owns the sequence ids: the
/// caller only moves bytes.
#[derive(Debug, Clone)]
pub struct ClientHandshake {
    config: HandshakeConfig,
    phase: LoginPhase,
    /// The sequence id the next packet, in either direction, carries.
    seq: u8,
    caps: Capabilities,
    server: GreetedServer,
    plugin: AuthPlugin,
    /// Always the latest: from the greeting, then from each AuthSwitchRequest.
    nonce: Vec<u8>,
    fetched_key: Option<Vec<u8>>,
    tls_active: bool,
    switches: u8,
    deviations: Deviations,
}

impl ClientHandshake {
    pub fn new(config: HandshakeConfig) -> Self {
        ClientHandshake {
            config,
            phase: LoginPhase::Greeting,
            seq: 0,
            caps: Capabilities::empty(),
            server: GreetedServer::default(),
            plugin: AuthPlugin::MysqlNativePassword,
            nonce: Vec::new(),
            fetched_key: None,
            tls_active: false,
            switches: 0,
            deviations: Deviations::default(),
        }
    }

    /// Feeds bytes read from the socket. Returns how many bytes were used
    /// (whole packets only: keep the rest and pass it again with more) and
    /// what to do next. Appends anything to send to `out`.
    ///
    /// After an error, `Done` or `ServerError`, the handshake is over and
    /// every further call fails with [`UsageError::OutOfOrder`], as does a
    /// call between [`HandshakeStep::StartTls`] and
    /// [`tls_established`](Self::tls_established).
    pub fn advance<R: CryptoRngCore>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        rng: &mut R,
    ) -> Result<(usize, HandshakeStep), CodecError> {
        let result = self.advance_packets(input, out, rng);
        if result.is_err() {
            self.phase = LoginPhase::Finished;
        }
        result
    }

    /// Call after the TLS handshake that [`HandshakeStep::StartTls`] asked
    /// for; appends the handshake response to `out`, to be sent over TLS.
    pub fn tls_established<R: CryptoRngCore>(&mut self, out: &mut Vec<u8>, rng: &mut R) -> Result<(), CodecError> {
        if self.phase != LoginPhase::Tls {
            return Err(self
                .out_of_order("ClientHandshake::tls_established", "call it once, after HandshakeStep::StartTls")
                .into());
        }
        self.tls_active = true;
        let result = self.send_handshake_response(out, rng);
        if result.is_err() {
            self.phase = LoginPhase::Finished;
        }
        result
    }

    fn advance_packets<R: CryptoRngCore>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        rng: &mut R,
    ) -> Result<(usize, HandshakeStep), CodecError> {
        let remedy = match self.phase {
            LoginPhase::Greeting | LoginPhase::Auth(_) => None,
            LoginPhase::Tls => Some("do the TLS handshake, then call tls_established"),
            LoginPhase::Finished => Some("a handshake takes no bytes after Done, ServerError or an error"),
        };
        if let Some(remedy) = remedy {
            return Err(self.out_of_order("ClientHandshake::advance", remedy).into());
        }
        let max = usize::try_from(self.config.max_packet_size).unwrap_or(usize::MAX).min(MAX_LOGIN_PACKET);
        let mut consumed = 0usize;
        loop {
            let rest = input.get(consumed..).unwrap_or_default();
            let Some(frame) = decode_answer_packet(rest, self.seq, max)? else {
                return Ok((consumed, HandshakeStep::NeedMore));
            };
            consumed += frame.consumed;
            self.deviations.add(Deviation::SequenceRenumbered, u64::from(frame.seq_jumps));
            self.seq = frame.next_seq;
            let step = match self.phase {
                LoginPhase::Greeting => self.on_greeting(&frame.payload, out, rng)?,
                LoginPhase::Auth(phase) => self.on_auth_packet(phase, &frame.payload, out, rng)?,
                LoginPhase::Tls | LoginPhase::Finished => {
                    // A packet after StartTls/Done/ServerError in the same input.
                    return Err(self.unexpected("another packet").into());
                }
            };
            if let Some(step) = step {
                return Ok((consumed, step));
            }
        }
    }

    fn on_greeting<R: CryptoRngCore>(
        &mut self,
        payload: &[u8],
        out: &mut Vec<u8>,
        rng: &mut R,
    ) -> Result<Option<HandshakeStep>, CodecError> {
        let hs = match Greeting::parse(payload)? {
            Greeting::Error(err) => return Ok(Some(self.server_error(err))),
            Greeting::Handshake(hs) => hs,
        };
        if !hs.has_41_scramble() {
            return Err(ProtocolError::Pre41Scramble.into());
        }
        let tls = match self.config.tls {
            TlsMode::Disabled => false,
            TlsMode::Preferred => hs.capabilities.contains(Capabilities::SSL),
            TlsMode::Required => true,
        };
        let options = CapabilityOptions {
            with_database: self.config.database.is_some(),
            tls,
            deprecate_eof: self.config.deprecate_eof,
            connect_attrs: !self.config.connect_attrs.is_empty(),
            extra: self.config.extra_capabilities,
        };
        self.caps = negotiate_capabilities(hs.capabilities, &options)?;
        self.deviations.merge(&greeting_deviations(hs.capabilities, &options));
        self.server = GreetedServer {
            version: ServerText(&String::from_utf8_lossy(hs.display_version())).to_string(),
            is_mariadb: hs.is_mariadb(),
            connection_id: hs.connection_id,
            capabilities: hs.capabilities,
        };
        // For an unknown (or absent) default plugin, answer as
        // mysql_native_password: the server switches if the account needs another.
        self.plugin = AuthPlugin::from_name(hs.auth_plugin_name).unwrap_or(AuthPlugin::MysqlNativePassword);
        self.nonce = hs.auth_plugin_data;
        if tls {
            let request = SslRequest {
                capabilities: self.caps,
                max_packet_size: self.config.max_packet_size,
                charset: self.config.charset,
            };
            self.seq = request.encode(out, self.seq);
            self.phase = LoginPhase::Tls;
            return Ok(Some(HandshakeStep::StartTls));
        }
        self.send_handshake_response(out, rng)?;
        Ok(None)
    }

    fn send_handshake_response<R: CryptoRngCore>(&mut self, out: &mut Vec<u8>, rng: &mut R) -> Result<(), CodecError> {
        // The greeting's plugin is the server's default, not necessarily this
        // account's: rather than refuse a clear-text default on an insecure
        // transport, answer as native and let the server switch (and refuse then).
        if (self.plugin == AuthPlugin::MysqlClearPassword && !self.is_secure()) || self.refuses_key_request() {
            self.plugin = AuthPlugin::MysqlNativePassword;
        }
        let mut auth = Vec::new();
        let next_phase = self.first_response(rng, &mut auth)?;
        let config = &self.config;
        let response = HandshakeResponse41 {
            capabilities: self.caps,
            max_packet_size: config.max_packet_size,
            charset: config.charset,
            user: config.user.as_bytes(),
            auth_response: &auth,
            database: config.database.as_deref().map(str::as_bytes),
            auth_plugin_name: self.plugin.name().as_bytes(),
            connect_attrs: &config.connect_attrs,
        };
        self.seq = response.encode(out, self.seq)?;
        self.phase = LoginPhase::Auth(next_phase);
        Ok(())
    }

    /// The current plugin's first answer to the current nonce, and the phase it leads to.
    fn first_response<R: CryptoRngCore>(&self, rng: &mut R, auth: &mut Vec<u8>) -> Result<AuthPhase> {
        if self.refuses_key_request() {
            return Err(ProtocolError::PublicKeyRequired(self.plugin.name()));
        }
        let secure = self.is_secure();
        let key = self.server_key();
        self.plugin.first_response(&self.config.password, &self.nonce, secure, key, rng, auth)?;
        let awaits_key = self.plugin == AuthPlugin::Sha256Password
            && sha256_password::requests_public_key(&self.config.password, secure, key);
        Ok(if awaits_key { AuthPhase::AwaitingPublicKey } else { AuthPhase::Started })
    }

    fn on_auth_packet<R: CryptoRngCore>(
        &mut self,
        phase: AuthPhase,
        payload: &[u8],
        out: &mut Vec<u8>,
        rng: &mut R,
    ) -> Result<Option<HandshakeStep>> {
        let header = *payload.first().ok_or(ProtocolError::UnexpectedEof("authentication reply header"))?;
        match header {
            OK_HEADER => {
                let ok = OkPacket::parse(payload, self.caps)?;
                self.phase = LoginPhase::Finished;
                Ok(Some(HandshakeStep::Done(self.login_info(ok.status))))
            }
            ERR_HEADER => Ok(Some(self.server_error(ErrPacket::parse(payload)?))),
            AUTH_SWITCH_HEADER => {
                if !matches!(phase, AuthPhase::Started | AuthPhase::PasswordSent) {
                    return Err(self.unexpected("AuthSwitchRequest"));
                }
                self.on_auth_switch(payload, out, rng)?;
                Ok(None)
            }
            AUTH_MORE_DATA_HEADER => {
                self.on_auth_more_data(phase, AuthMoreData::parse(payload)?.data, out, rng)?;
                Ok(None)
            }
            byte => Err(ProtocolError::BadHeader { context: "authentication reply", byte }),
        }
    }

    fn on_auth_switch<R: CryptoRngCore>(&mut self, payload: &[u8], out: &mut Vec<u8>, rng: &mut R) -> Result<()> {
        let switch = AuthSwitchRequest::parse(payload)?;
        self.switches += 1;
        if self.switches > MAX_AUTH_SWITCHES {
            return Err(self.unexpected("yet another AuthSwitchRequest"));
        }
        self.plugin = AuthPlugin::from_name(switch.plugin_name).ok_or_else(|| {
            ProtocolError::UnsupportedAuthPlugin(String::from_utf8_lossy(switch.plugin_name).into_owned())
        })?;
        self.nonce = switch.plugin_data.to_vec();
        let mut auth = Vec::new();
        let next_phase = self.first_response(rng, &mut auth)?;
        self.send_raw(out, &auth);
        self.phase = LoginPhase::Auth(next_phase);
        Ok(())
    }

    fn on_auth_more_data<R: CryptoRngCore>(
        &mut self,
        phase: AuthPhase,
        data: &[u8],
        out: &mut Vec<u8>,
        rng: &mut R,
    ) -> Result<()> {
        match (self.plugin, phase) {
            (AuthPlugin::CachingSha2Password, AuthPhase::Started) => match data {
                [caching_sha2::FAST_AUTH_SUCCESS] => {
                    self.phase = LoginPhase::Auth(AuthPhase::FastAuthSucceeded);
                    Ok(())
                }
                [caching_sha2::PERFORM_FULL_AUTHENTICATION] => {
                    let decision = caching_sha2::full_authentication(
                        &self.config.password,
                        &self.nonce,
                        self.is_secure(),
                        self.server_key(),
                        rng,
                    )?;
                    match decision {
                        caching_sha2::FullAuthentication::Send(bytes) => {
                            self.send_raw(out, &bytes);
                            self.phase = LoginPhase::Auth(AuthPhase::PasswordSent);
                        }
                        caching_sha2::FullAuthentication::RequestPublicKey if !self.config.get_server_public_key => {
                            return Err(ProtocolError::PublicKeyRequired(self.plugin.name()));
                        }
                        caching_sha2::FullAuthentication::RequestPublicKey => {
                            self.send_raw(out, &[caching_sha2::REQUEST_PUBLIC_KEY]);
                            self.phase = LoginPhase::Auth(AuthPhase::AwaitingPublicKey);
                        }
                    }
                    Ok(())
                }
                _ => Err(ProtocolError::Malformed("caching_sha2_password AuthMoreData (expected 03 or 04)")),
            },
            (AuthPlugin::CachingSha2Password | AuthPlugin::Sha256Password, AuthPhase::AwaitingPublicKey) => {
                let encrypted = rsa_key::encrypt_password(&self.config.password, &self.nonce, data, rng)?;
                self.fetched_key = Some(data.to_vec());
                self.send_raw(out, &encrypted);
                self.phase = LoginPhase::Auth(AuthPhase::PasswordSent);
                Ok(())
            }
            _ => Err(self.unexpected("AuthMoreData")),
        }
    }

    /// Appends one authentication-phase packet: the payload as is.
    fn send_raw(&mut self, out: &mut Vec<u8>, payload: &[u8]) {
        let start = start_packet(out);
        out.put_bytes(payload);
        self.seq = finish_packet(out, start, self.seq);
    }

    fn server_error(&mut self, err: ErrPacket<'_>) -> HandshakeStep {
        self.phase = LoginPhase::Finished;
        HandshakeStep::ServerError(err.to_owned())
    }

    /// The peer's error: a packet the current phase does not expect.
    fn unexpected(&self, got: &'static str) -> ProtocolError {
        ProtocolError::UnexpectedMessage { state: self.phase.describe(), got }
    }

    /// The caller's error: a call the current phase does not take.
    fn out_of_order(&self, call: &'static str, remedy: &'static str) -> UsageError {
        UsageError::OutOfOrder { call, state: self.phase.describe(), remedy }
    }

    fn is_secure(&self) -> bool {
        self.config.secure_transport || self.tls_active
    }

    /// sha256_password's first answer would ask for the server's key, which
    /// the configuration does not allow.
    fn refuses_key_request(&self) -> bool {
        self.plugin == AuthPlugin::Sha256Password
            && !self.config.get_server_public_key
            && sha256_password::requests_public_key(&self.config.password, self.is_secure(), self.server_key())
    }

    fn server_key(&self) -> Option<&[u8]> {
        self.config.server_public_key.as_deref().or(self.fetched_key.as_deref())
    }

    fn login_info(&self, status: StatusFlags) -> LoginInfo {
        LoginInfo {
            capabilities: self.caps,
            server_capabilities: self.server.capabilities,
            server_version: self.server.version.clone(),
            is_mariadb: self.server.is_mariadb,
            connection_id: self.server.connection_id,
            status,
            auth_plugin: self.plugin,
            server_public_key: self.fetched_key.clone(),
            select_database: self.config.database.is_some() && !self.caps.contains(Capabilities::CONNECT_WITH_DB),
            deviations: self.deviations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::packets::test_support::{
        from_hex, parse_response, ParsedResponse, MARIADB_GREETING, MSQL_SRV_GREETING, MYSQL8_GREETING,
    };
    use super::*;
    use crate::auth::rsa_key::tests::{server_decrypt, test_key, TestRng};
    use crate::auth::{caching_sha2, ed25519, native_password};
    use crate::framing::{decode_packet, encode_packet};
    use proptest::prelude::*;

    const PASSWORD: &[u8] = b"sbtest";
    const MARIADB_NONCE: &[u8] = b")t13MgBS[P\\`NCEp$a>N";

    fn mysql8_nonce() -> Vec<u8> {
        from_hex("7571731458073040 2841384f5745210e22157738")
    }

    fn pkt(seq: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_packet(&mut v, seq, payload);
        v
    }

    /// OK with status AUTOCOMMIT (0x0002).
    fn ok(seq: u8) -> Vec<u8> {
        pkt(seq, &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])
    }

    fn config() -> HandshakeConfig {
        let mut c = HandshakeConfig::new("sbtest", PASSWORD);
        c.database = Some("sbtest".into());
        c
    }

    type Outcome = Result<(HandshakeStep, Vec<u8>), CodecError>;

    /// Feeds `input` whole; it must all be used unless an error stops it.
    fn feed_whole(hs: &mut ClientHandshake, input: &[u8], rng: &mut TestRng) -> Outcome {
        let mut out = Vec::new();
        let (used, step) = hs.advance(input, &mut out, rng)?;
        assert_eq!(used, input.len(), "all input used");
        Ok((step, out))
    }

    /// Feeds `input` one byte at a time, as a driver reading tiny chunks
    /// would: every incomplete packet must be NeedMore with nothing used.
    fn feed_bytewise(hs: &mut ClientHandshake, input: &[u8], rng: &mut TestRng) -> Outcome {
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for (i, &b) in input.iter().enumerate() {
            buf.push(b);
            let (used, step) = hs.advance(&buf, &mut out, rng)?;
            buf.drain(..used);
            if step != HandshakeStep::NeedMore {
                assert_eq!(i, input.len() - 1, "finished before the input ended");
                return Ok((step, out));
            }
        }
        assert!(buf.is_empty(), "a whole packet was left unused");
        Ok((HandshakeStep::NeedMore, out))
    }

    /// A client talking to a scripted server.
    struct Client {
        hs: ClientHandshake,
        rng: TestRng,
    }

    impl Client {
        fn new(config: HandshakeConfig) -> Self {
            Client { hs: ClientHandshake::new(config), rng: TestRng(99) }
        }

        /// The server's bytes in, the client's out; fed whole and byte by
        /// byte from the same state, which must agree.
        fn exchange(&mut self, input: &[u8]) -> Outcome {
            let mut whole = self.hs.clone();
            let mut rng = self.rng.clone();
            let a = feed_whole(&mut whole, input, &mut rng);
            let b = feed_bytewise(&mut self.hs, input, &mut self.rng);
            assert_eq!(a, b, "whole and byte-by-byte feeding disagree");
            b
        }

        fn expect_more(&mut self, input: &[u8]) -> Vec<u8> {
            let (step, out) = self.exchange(input).unwrap();
            assert_eq!(step, HandshakeStep::NeedMore);
            out
        }

        fn expect_done(&mut self, input: &[u8]) -> LoginInfo {
            match self.exchange(input).unwrap() {
                (HandshakeStep::Done(login), out) => {
                    assert!(out.is_empty(), "nothing to send after OK");
                    login
                }
                other => panic!("expected Done, got {other:?}"),
            }
        }
    }

    /// The payload of the single packet in `out`, which must carry `seq`.
    fn client_packet(out: &[u8], seq: u8) -> Vec<u8> {
        let frame = decode_packet(out, seq, 1 << 20).unwrap().expect("a whole packet");
        assert_eq!(frame.consumed, out.len(), "exactly one packet");
        frame.payload.into_owned()
    }

    fn client_response(out: &[u8], seq: u8) -> ParsedResponse {
        parse_response(&client_packet(out, seq)).unwrap()
    }

    #[test]
    fn native_login_to_mariadb() {
        let mut cfg = config();
        cfg.connect_attrs = vec![("_client_name".into(), "wirebench".into())];
        let mut c = Client::new(cfg);
        let out = c.expect_more(&from_hex(MARIADB_GREETING));
        let resp = client_response(&out, 1);
        assert_eq!(resp.user, b"sbtest");
        assert_eq!(resp.auth_response, native_password::scramble(PASSWORD, MARIADB_NONCE));
        assert_eq!(resp.database.as_deref(), Some(&b"sbtest"[..]));
        assert_eq!(resp.auth_plugin_name.as_deref(), Some(&b"mysql_native_password"[..]));
        assert_eq!(resp.connect_attrs, vec![("_client_name".to_string(), "wirebench".to_string())]);
        assert_eq!(resp.charset, 45);
        assert_eq!(resp.max_packet_size, DEFAULT_MAX_PACKET_SIZE);
        assert!(!resp.capabilities.contains(Capabilities::LONG_PASSWORD), "bit 0 cleared for MariaDB");
        let login = c.expect_done(&ok(2));
        assert_eq!(login.capabilities, resp.capabilities);
        assert!(login.capabilities.contains(Capabilities::DEPRECATE_EOF | Capabilities::CONNECT_WITH_DB));
        assert_eq!(login.server_version, "10.11.19-MariaDB-0+deb12u1");
        assert!(login.is_mariadb);
        assert_eq!(login.connection_id, 4);
        assert_eq!(login.status, StatusFlags::AUTOCOMMIT);
        assert_eq!(login.auth_plugin, AuthPlugin::MysqlNativePassword);
        assert_eq!(login.server_public_key, None);
        // The handshake is over: more bytes are a misuse.
        let err = c.hs.advance(&ok(3), &mut Vec::new(), &mut TestRng(0)).unwrap_err();
        assert_eq!(
            err,
            CodecError::Usage(UsageError::OutOfOrder {
                call: "ClientHandshake::advance",
                state: "the handshake was over",
                remedy: "a handshake takes no bytes after Done, ServerError or an error",
            })
        );
    }

    #[test]
    fn empty_password_sends_an_empty_response() {
        let mut c = Client::new(HandshakeConfig::new("nopw", Vec::new()));
        let resp = client_response(&c.expect_more(&from_hex(MARIADB_GREETING)), 1);
        assert!(resp.auth_response.is_empty());
        assert_eq!(resp.database, None);
        assert!(!resp.capabilities.contains(Capabilities::CONNECT_WITH_DB | Capabilities::CONNECT_ATTRS));
    }

    #[test]
    fn mariadb_switch_to_ed25519_uses_the_new_nonce() {
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        let nonce: Vec<u8> = (100u8..132).collect();
        let mut switch = b"\xfeclient_ed25519\0".to_vec();
        switch.extend_from_slice(&nonce);
        let out = c.expect_more(&pkt(2, &switch));
        let signature = client_packet(&out, 3);
        assert_eq!(signature, ed25519::sign(PASSWORD, &nonce));
        assert_ne!(signature, ed25519::sign(PASSWORD, MARIADB_NONCE));
        let login = c.expect_done(&ok(4));
        assert_eq!(login.auth_plugin, AuthPlugin::ClientEd25519);
    }

    #[test]
    fn mysql_switch_to_native_with_trailing_nul() {
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let mut switch = b"\xfemysql_native_password\0".to_vec();
        switch.extend_from_slice(b"ABCDEFGHIJKLMNOPQRST\0");
        let out = c.expect_more(&pkt(2, &switch));
        assert_eq!(client_packet(&out, 3), native_password::scramble(PASSWORD, b"ABCDEFGHIJKLMNOPQRST"));
        assert_eq!(c.expect_done(&ok(4)).auth_plugin, AuthPlugin::MysqlNativePassword);
    }

    fn caching_sha2_fast_auth(deprecate_eof: bool) {
        let mut cfg = config();
        cfg.deprecate_eof = deprecate_eof;
        let mut c = Client::new(cfg);
        let resp = client_response(&c.expect_more(&from_hex(MYSQL8_GREETING)), 1);
        assert_eq!(resp.auth_plugin_name.as_deref(), Some(&b"caching_sha2_password"[..]));
        assert_eq!(resp.auth_response, caching_sha2::scramble(PASSWORD, &mysql8_nonce()));
        assert!(resp.capabilities.contains(Capabilities::LONG_PASSWORD));
        assert_eq!(resp.capabilities.contains(Capabilities::DEPRECATE_EOF), deprecate_eof);
        // fast_auth_success and the OK, in one read.
        let mut input = pkt(2, &[0x01, 0x03]);
        input.extend_from_slice(&ok(3));
        let login = c.expect_done(&input);
        assert_eq!(login.auth_plugin, AuthPlugin::CachingSha2Password);
        assert_eq!(login.capabilities.contains(Capabilities::DEPRECATE_EOF), deprecate_eof);
        assert_eq!(login.server_version, "8.0.32");
        assert!(!login.is_mariadb);
    }

    #[test]
    fn caching_sha2_fast_auth_with_deprecate_eof() {
        caching_sha2_fast_auth(true);
    }

    #[test]
    fn caching_sha2_fast_auth_without_deprecate_eof() {
        caching_sha2_fast_auth(false);
    }

    #[test]
    fn caching_sha2_full_auth_over_unix_socket_sends_clear_password() {
        let mut cfg = config();
        cfg.secure_transport = true;
        let mut c = Client::new(cfg);
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let out = c.expect_more(&pkt(2, &[0x01, 0x04]));
        assert_eq!(client_packet(&out, 3), b"sbtest\0");
        c.expect_done(&ok(4));
    }

    #[test]
    fn caching_sha2_full_auth_over_tcp_with_a_known_key() {
        let mut cfg = config();
        cfg.server_public_key = Some(test_key().1.clone().into_bytes());
        let mut c = Client::new(cfg);
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let out = c.expect_more(&pkt(2, &[0x01, 0x04]));
        assert_eq!(server_decrypt(&client_packet(&out, 3), &mysql8_nonce()), b"sbtest\0");
        let login = c.expect_done(&ok(4));
        assert_eq!(login.server_public_key, None, "only a fetched key is reported");
    }

    /// Asking the server for its key, and trusting what comes back, only
    /// when allowed.
    fn fetching_config() -> HandshakeConfig {
        let mut cfg = config();
        cfg.get_server_public_key = true;
        cfg
    }

    #[test]
    fn caching_sha2_full_auth_over_tcp_fetching_the_key() {
        let mut c = Client::new(fetching_config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let out = c.expect_more(&pkt(2, &[0x01, 0x04]));
        assert_eq!(client_packet(&out, 3), [caching_sha2::REQUEST_PUBLIC_KEY]);
        let pem = test_key().1.as_bytes();
        let mut key_packet = vec![0x01];
        key_packet.extend_from_slice(pem);
        let out = c.expect_more(&pkt(4, &key_packet));
        assert_eq!(server_decrypt(&client_packet(&out, 5), &mysql8_nonce()), b"sbtest\0");
        let login = c.expect_done(&ok(6));
        assert_eq!(login.server_public_key.as_deref(), Some(pem));
    }

    /// Without a key and without leave to fetch one, full authentication
    /// over TCP stops before anything is sent: a fake server would read the
    /// password from whatever key it sent.
    #[test]
    fn caching_sha2_full_auth_over_tcp_without_a_key_is_refused() {
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let mut out = Vec::new();
        let err = c.hs.advance(&pkt(2, &[0x01, 0x04]), &mut out, &mut TestRng(0)).unwrap_err();
        assert_eq!(err, CodecError::Protocol(ProtocolError::PublicKeyRequired("caching_sha2_password")));
        assert!(out.is_empty(), "no key request sent: {out:?}");
        assert!(err.to_string().contains("Authentication requires secure connection (error 2061)"), "{err}");
    }

    #[test]
    fn sha256_password_without_a_key_is_refused() {
        let mut switch = b"\xfesha256_password\0".to_vec();
        switch.extend_from_slice(b"01234567890123456789\0");
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, &switch)),
            Err(CodecError::Protocol(ProtocolError::PublicKeyRequired("sha256_password")))
        );
        // A greeting that names it as the default is answered as native:
        // the account may use another plugin, and the server switches if not.
        let mut g = from_hex(MYSQL8_GREETING);
        let name = b"caching_sha2_password";
        let at = g.len() - name.len() - 1;
        g.truncate(at);
        g.extend_from_slice(b"sha256_password\0");
        g[0] = (g.len() - 4) as u8;
        let resp = client_response(&Client::new(config()).expect_more(&g), 1);
        assert_eq!(resp.auth_plugin_name.as_deref(), Some(&b"mysql_native_password"[..]));
        // With leave to fetch the key, it asks for it.
        let resp = client_response(&Client::new(fetching_config()).expect_more(&g), 1);
        assert_eq!(resp.auth_plugin_name.as_deref(), Some(&b"sha256_password"[..]));
        assert_eq!(resp.auth_response, [sha256_password::REQUEST_PUBLIC_KEY]);
    }

    #[test]
    fn sha256_password_switch_fetches_the_key() {
        let mut c = Client::new(fetching_config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        let mut switch = b"\xfesha256_password\0".to_vec();
        switch.extend_from_slice(b"01234567890123456789\0");
        let out = c.expect_more(&pkt(2, &switch));
        assert_eq!(client_packet(&out, 3), [0x01]);
        let mut key_packet = vec![0x01];
        key_packet.extend_from_slice(test_key().1.as_bytes());
        let out = c.expect_more(&pkt(4, &key_packet));
        assert_eq!(server_decrypt(&client_packet(&out, 5), b"01234567890123456789"), b"sbtest\0");
        assert_eq!(c.expect_done(&ok(6)).auth_plugin, AuthPlugin::Sha256Password);
    }

    #[test]
    fn tls_shifts_the_sequence_by_one() {
        let mut cfg = config();
        cfg.tls = TlsMode::Required;
        let mut c = Client::new(cfg);
        let (step, out) = c.exchange(&from_hex(MYSQL8_GREETING)).unwrap();
        assert_eq!(step, HandshakeStep::StartTls);
        let ssl = client_packet(&out, 1);
        assert_eq!(ssl.len(), 32);
        let ssl = parse_response(&ssl).unwrap();
        assert!(ssl.capabilities.contains(Capabilities::SSL));
        // Bytes before the TLS handshake completes are a misuse.
        let mut early = c.hs.clone();
        assert!(matches!(
            early.advance(&[0x16, 0x03], &mut Vec::new(), &mut TestRng(0)),
            Err(CodecError::Usage(UsageError::OutOfOrder { state: "waiting for the TLS handshake", .. }))
        ));
        let mut out = Vec::new();
        c.hs.tls_established(&mut out, &mut c.rng).unwrap();
        let resp = client_response(&out, 2);
        assert_eq!(resp.capabilities, ssl.capabilities);
        assert_eq!(resp.auth_response, caching_sha2::scramble(PASSWORD, &mysql8_nonce()));
        // Over TLS, full authentication sends the password in clear.
        let out = c.expect_more(&pkt(3, &[0x01, 0x04]));
        assert_eq!(client_packet(&out, 4), b"sbtest\0");
        let login = c.expect_done(&ok(5));
        assert!(login.capabilities.contains(Capabilities::SSL));
        // A second tls_established is a misuse.
        assert!(matches!(
            c.hs.tls_established(&mut Vec::new(), &mut TestRng(0)),
            Err(CodecError::Usage(UsageError::OutOfOrder { call: "ClientHandshake::tls_established", .. }))
        ));
    }

    #[test]
    fn tls_modes_against_a_server_without_ssl() {
        let mut cfg = config();
        cfg.tls = TlsMode::Required;
        let mut c = Client::new(cfg.clone());
        assert_eq!(
            c.exchange(&from_hex(MARIADB_GREETING)),
            Err(CodecError::Protocol(ProtocolError::MissingCapability("SSL")))
        );
        cfg.tls = TlsMode::Preferred;
        let mut c = Client::new(cfg);
        let resp = client_response(&c.expect_more(&from_hex(MARIADB_GREETING)), 1);
        assert!(!resp.capabilities.contains(Capabilities::SSL));
        // Preferred against a server that offers it: TLS.
        let mut cfg = config();
        cfg.tls = TlsMode::Preferred;
        let mut c = Client::new(cfg);
        assert_eq!(c.exchange(&from_hex(MYSQL8_GREETING)).unwrap().0, HandshakeStep::StartTls);
    }

    #[test]
    fn clear_password_only_over_a_secure_transport() {
        let switch = pkt(2, b"\xfemysql_clear_password\0");
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&switch),
            Err(CodecError::Protocol(ProtocolError::InsecureTransport("mysql_clear_password")))
        );
        let mut cfg = config();
        cfg.secure_transport = true;
        let mut c = Client::new(cfg);
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(client_packet(&c.expect_more(&switch), 3), b"sbtest\0");
        assert_eq!(c.expect_done(&ok(4)).auth_plugin, AuthPlugin::MysqlClearPassword);
    }

    #[test]
    fn unknown_default_plugin_answers_as_native() {
        let mut g = from_hex(MARIADB_GREETING);
        let name = b"mysql_native_password";
        let at = g.len() - name.len() - 1;
        g.truncate(at);
        g.extend_from_slice(b"auth_gssapi_client\0");
        let len = (g.len() - 4) as u8;
        g[0] = len;
        let mut c = Client::new(config());
        let resp = client_response(&c.expect_more(&g), 1);
        assert_eq!(resp.auth_plugin_name.as_deref(), Some(&b"mysql_native_password"[..]));
        assert_eq!(resp.auth_response, native_password::scramble(PASSWORD, MARIADB_NONCE));
    }

    #[test]
    fn unsupported_plugins() {
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, b"\xfeauth_gssapi_client\0nonce")),
            Err(CodecError::Protocol(ProtocolError::UnsupportedAuthPlugin("auth_gssapi_client".into())))
        );
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, b"\xfe")),
            Err(CodecError::Protocol(ProtocolError::UnsupportedAuthPlugin("mysql_old_password".into())))
        );
    }

    #[test]
    fn server_errors() {
        // Access denied during authentication.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        let (step, out) = c
            .exchange(&pkt(2, b"\xff\x15\x04#28000Access denied for user 'sbtest'@'localhost' (using password: YES)"))
            .unwrap();
        assert!(out.is_empty());
        let HandshakeStep::ServerError(err) = step else { panic!("expected a server error, got {step:?}") };
        assert_eq!((err.code, err.sql_state_str()), (1045, Some("28000")));
        assert_eq!(err.message, "Access denied for user 'sbtest'@'localhost' (using password: YES)");
        // After fast_auth_success too.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        c.expect_more(&pkt(2, &[0x01, 0x03]));
        let (step, _) = c.exchange(&pkt(3, b"\xff\x15\x04#28000denied")).unwrap();
        assert!(matches!(step, HandshakeStep::ServerError(ServerError { code: 1045, .. })));
        // Instead of a greeting, without SQLSTATE.
        let mut c = Client::new(config());
        let (step, out) = c.exchange(&pkt(0, b"\xff\x10\x04Too many connections")).unwrap();
        assert!(out.is_empty());
        assert_eq!(
            step,
            HandshakeStep::ServerError(ServerError {
                code: 1040,
                sql_state: None,
                message: "Too many connections".into()
            })
        );
    }

    #[test]
    fn sequence_ids_that_do_not_follow_are_followed() {
        // A greeting numbered 3 (a server counting on from elsewhere): the
        // response follows it (4), and so does the OK (5).
        let mut c = Client::new(config());
        let mut greeting = from_hex(MARIADB_GREETING);
        greeting[3] = 3;
        let out = c.expect_more(&greeting);
        assert_eq!(client_response(&out, 4).user, b"sbtest");
        let login = c.expect_done(&ok(5));
        assert_eq!(login.deviations.iter().collect::<Vec<_>>(), [(Deviation::SequenceRenumbered, 1)]);
        // In step, then an OK that jumps back to 1: followed, counted.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        let login = c.expect_done(&ok(1));
        assert_eq!(login.deviations.get(Deviation::SequenceRenumbered), 1);
        assert!(!login.select_database);
        // In step: nothing tolerated.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert!(c.expect_done(&ok(2)).deviations.is_empty());
    }

    #[test]
    fn msql_srv_login_without_secure_connection_or_connect_with_db() {
        // msql-srv 0.11: no SECURE_CONNECTION, CONNECT_WITH_DB, TRANSACTIONS,
        // PLUGIN_AUTH or DEPRECATE_EOF, but the 4.1 scramble.
        let mut c = Client::new(config());
        let out = c.expect_more(&pkt(0, MSQL_SRV_GREETING));
        let resp = client_response(&out, 1);
        // Bit 0 (LONG_PASSWORD) is not offered either, so the intersection clears it.
        assert_eq!(resp.capabilities, Capabilities::PROTOCOL_41 | Capabilities::SECURE_CONNECTION);
        assert_eq!(resp.auth_response, native_password::scramble(PASSWORD, b";X,po_k}>o6^Wz!/kM}N"));
        assert_eq!((resp.database, resp.auth_plugin_name), (None, None), "neither offered");
        let login = c.expect_done(&ok(2));
        assert!(login.select_database, "the database goes by COM_INIT_DB");
        assert_eq!(
            login.deviations.iter().map(|(d, _)| d).collect::<Vec<_>>(),
            [
                Deviation::NoSecureConnection,
                Deviation::NoConnectWithDb,
                Deviation::NoTransactions,
                Deviation::NoPluginAuth,
                Deviation::NoDeprecateEof
            ]
        );
        // Without a database to select, CONNECT_WITH_DB's absence is no deviation.
        let mut cfg = config();
        cfg.database = None;
        let mut c = Client::new(cfg);
        c.expect_more(&pkt(0, MSQL_SRV_GREETING));
        let login = c.expect_done(&ok(2));
        assert!(!login.select_database);
        assert_eq!(login.deviations.get(Deviation::NoConnectWithDb), 0);
    }

    #[test]
    fn a_greeting_before_4_1_is_refused() {
        // The 8-byte scramble alone: mysql_old_password's.
        let cut = &MSQL_SRV_GREETING[..MSQL_SRV_GREETING.len() - 13];
        let mut c = Client::new(config());
        assert_eq!(c.exchange(&pkt(0, cut)), Err(CodecError::Protocol(ProtocolError::Pre41Scramble)));
        // A 3.23/4.0 greeting: flags without PROTOCOL_41, nothing after them.
        let mut old = vec![10];
        old.extend_from_slice(b"4.0.27\0\x01\x00\x00\x00ABCDEFGH\0\x2c\x00");
        let mut c = Client::new(config());
        let error = c.exchange(&pkt(0, &old)).unwrap_err();
        assert_eq!(error, CodecError::Protocol(ProtocolError::Pre41Scramble));
        assert!(error.to_string().contains("pre-4.1"), "{error}");
    }

    #[test]
    fn garbage_and_unexpected_packets() {
        let mut c = Client::new(config());
        assert_eq!(
            c.exchange(&pkt(0, b"\x09garbage")),
            Err(CodecError::Protocol(ProtocolError::UnsupportedProtocolVersion(9)))
        );
        let mut c = Client::new(config());
        assert_eq!(
            c.exchange(&pkt(0, b"")),
            Err(CodecError::Protocol(ProtocolError::UnexpectedEof("protocol version")))
        );
        // Unknown header during authentication.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, b"\x07abc")),
            Err(CodecError::Protocol(ProtocolError::BadHeader { context: "authentication reply", byte: 0x07 }))
        );
        // AuthMoreData means nothing to mysql_native_password.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, &[0x01, 0x03])),
            Err(CodecError::Protocol(ProtocolError::UnexpectedMessage {
                state: "authenticating",
                got: "AuthMoreData"
            }))
        );
        // After fast_auth_success only OK or ERR may come.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        c.expect_more(&pkt(2, &[0x01, 0x03]));
        assert_eq!(
            c.exchange(&pkt(3, b"\xfemysql_native_password\0ABCDEFGHIJKLMNOPQRST")),
            Err(CodecError::Protocol(ProtocolError::UnexpectedMessage {
                state: "waiting for OK after fast_auth_success",
                got: "AuthSwitchRequest"
            }))
        );
        // An unknown caching_sha2 status byte.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        assert!(matches!(c.exchange(&pkt(2, &[0x01, 0x09])), Err(CodecError::Protocol(ProtocolError::Malformed(_)))));
        // A key that is not a key.
        let mut c = Client::new(fetching_config());
        c.expect_more(&from_hex(MYSQL8_GREETING));
        c.expect_more(&pkt(2, &[0x01, 0x04]));
        assert!(matches!(c.exchange(&pkt(4, b"\x01not a pem key")), Err(CodecError::Protocol(ProtocolError::Auth(_)))));
        // An empty packet.
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        assert_eq!(
            c.exchange(&pkt(2, b"")),
            Err(CodecError::Protocol(ProtocolError::UnexpectedEof("authentication reply header")))
        );
    }

    #[test]
    fn switch_loops_are_bounded() {
        let mut c = Client::new(config());
        c.expect_more(&from_hex(MARIADB_GREETING));
        let mut seq = 2u8;
        for _ in 0..MAX_AUTH_SWITCHES {
            let out = c.expect_more(&pkt(seq, b"\xfemysql_native_password\0ABCDEFGHIJKLMNOPQRST"));
            client_packet(&out, seq + 1);
            seq += 2;
        }
        assert!(matches!(
            c.exchange(&pkt(seq, b"\xfemysql_native_password\0ABCDEFGHIJKLMNOPQRST")),
            Err(CodecError::Protocol(ProtocolError::UnexpectedMessage { .. }))
        ));
    }

    #[test]
    fn oversized_packets_are_refused() {
        let mut cfg = config();
        cfg.max_packet_size = 64;
        let mut c = Client::new(cfg);
        assert!(matches!(
            c.exchange(&from_hex(MARIADB_GREETING)),
            Err(CodecError::Protocol(ProtocolError::PacketTooLarge { .. }))
        ));
    }

    /// A login packet larger than [`MAX_LOGIN_PACKET`] is refused as soon as
    /// its header is in, with the default 64 MiB `max_packet_size`: the
    /// caller never buffers more than one such packet's worth.
    #[test]
    fn login_packets_are_capped_below_max_packet_size() {
        assert_eq!(config().max_packet_size, DEFAULT_MAX_PACKET_SIZE);
        let header = |len: usize, seq: u8| {
            let len = (len as u32).to_le_bytes();
            [len[0], len[1], len[2], seq]
        };
        let advance = |hs: &mut ClientHandshake, input: &[u8]| hs.advance(input, &mut Vec::new(), &mut TestRng(1));
        let mut hs = ClientHandshake::new(config());
        assert_eq!(advance(&mut hs, &header(MAX_LOGIN_PACKET, 0)).unwrap(), (0, HandshakeStep::NeedMore));
        let mut hs = ClientHandshake::new(config());
        assert_eq!(
            advance(&mut hs, &header(MAX_LOGIN_PACKET + 1, 0)).unwrap_err(),
            CodecError::Protocol(ProtocolError::PacketTooLarge { size: MAX_LOGIN_PACKET + 1, max: MAX_LOGIN_PACKET })
        );
        // After the greeting too: a flood in place of the server's reply.
        let mut hs = ClientHandshake::new(config());
        advance(&mut hs, &from_hex(MYSQL8_GREETING)).unwrap();
        assert!(matches!(
            advance(&mut hs, &header(0xFF_FFFF, 2)),
            Err(CodecError::Protocol(ProtocolError::PacketTooLarge { max: MAX_LOGIN_PACKET, .. }))
        ));
    }

    #[test]
    fn config_debug_hides_the_password() {
        let text = format!("{:?}", config());
        assert!(text.contains("<redacted>") && !text.contains("[115, 98"), "{text}");
    }

    proptest! {
        #[test]
        fn advance_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let mut hs = ClientHandshake::new(config());
            let _ = hs.advance(&bytes, &mut Vec::new(), &mut TestRng(1));
            // Also as the server's reply to the handshake response.
            let mut hs = ClientHandshake::new(config());
            let mut out = Vec::new();
            hs.advance(&from_hex(MYSQL8_GREETING), &mut out, &mut TestRng(1)).unwrap();
            let _ = hs.advance(&bytes, &mut out, &mut TestRng(1));
        }

        #[test]
        fn framed_replies_never_panic(
            payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 1..5),
            first in prop::sample::select(vec![0x00u8, 0x01, 0xFE, 0xFF]),
        ) {
            // Well-framed packets with likely headers reach deeper states.
            let mut hs = ClientHandshake::new(fetching_config());
            let mut out = Vec::new();
            hs.advance(&from_hex(MYSQL8_GREETING), &mut out, &mut TestRng(1)).unwrap();
            let mut seq = 2u8;
            for mut p in payloads {
                p.insert(0, first);
                match hs.advance(&pkt(seq, &p), &mut out, &mut TestRng(1)) {
                    Ok((_, HandshakeStep::NeedMore)) => seq = seq.wrapping_add(2),
                    _ => break,
                }
            }
        }
    }
}

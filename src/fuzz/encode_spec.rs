//! From a [`Spec`] to fields: the protocol crate encodes the valid message
//! on the live connection (its negotiated capabilities, nonce and statement
//! ids), then the payload is read back field by field with the codec's
//! bounds-checked [`Reader`], in the layout the protocol documents.

use wirebench_protocol::auth::AuthPlugin;
use wirebench_protocol::buf::Reader;
use wirebench_protocol::command::{
    encode_execute, encode_field_list, encode_init_db, encode_ping, encode_prepare, encode_query, encode_quit,
    encode_reset_connection, encode_send_long_data, encode_set_option, encode_statistics, encode_stmt_close,
    encode_stmt_fetch, encode_stmt_reset, ChangeUser, Param,
};
use wirebench_protocol::constants::command::{COM_CHANGE_USER, COM_FIELD_LIST};
use wirebench_protocol::constants::{Capabilities, CHARSET_UTF8MB4_GENERAL_CI, DEFAULT_MAX_PACKET_SIZE};
use wirebench_protocol::framing::HEADER_LEN;
use wirebench_protocol::handshake::{client_capabilities, CapabilityOptions, HandshakeResponse41, SslRequest};

use super::fields::{Field, FieldKind, Fields, LengthForm, LiveValue};
use super::spec::{LoginSpec, OwnedParam, Spec, StmtRef};

/// The plugin every generated login names; a server whose accounts use
/// another one switches the session to it (answered in `exec.rs`).
pub const LOGIN_PLUGIN: AuthPlugin = AuthPlugin::MysqlNativePassword;

/// What the live connection contributes to a packet.
#[derive(Debug, Clone)]
pub struct BuildCtx<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub database: &'a str,
    /// The greeting's capabilities.
    pub server_caps: Capabilities,
    /// The greeting's nonce.
    pub nonce: &'a [u8],
    /// A unix socket: passwords may go in clear.
    pub secure: bool,
    /// The capabilities the session's login sent, as the server took them.
    pub session_caps: Capabilities,
    /// The ids the server gave the session's prepares so far (`None`: ERR).
    pub prepared: &'a [Option<u32>],
    /// Ask for the compressed protocol in the login.
    pub compress: bool,
    /// What the client answers the server's pending auth request with,
    /// and the sequence id it goes with; `None` when none is pending.
    pub auth_reply: Option<(&'a [u8], u8)>,
    /// The sequence id a login or SSLRequest takes now, while the login
    /// has not been answered (1, or 2 after an SSLRequest); `None` after.
    pub handshake_seq: Option<u8>,
}

/// The bytes a live value takes on this connection.
pub fn live_value(live: &LiveValue, ctx: &BuildCtx<'_>) -> Vec<u8> {
    match live {
        LiveValue::Scramble { plugin } => {
            let plugin = AuthPlugin::from_name(plugin.as_bytes()).unwrap_or(LOGIN_PLUGIN);
            let mut out = Vec::new();
            let mut rng = wirebench_protocol::auth::rand_core::OsRng;
            // A plugin that cannot answer here (a clear password over TCP)
            // leaves the answer empty: the server refuses, as it should.
            let _ = plugin.first_response(ctx.password.as_bytes(), ctx.nonce, ctx.secure, None, &mut rng, &mut out);
            out
        }
        LiveValue::Statement { prepare } => {
            statement_id(StmtRef::Prepared(*prepare as u16), ctx).to_le_bytes().to_vec()
        }
        LiveValue::AuthReply => ctx.auth_reply.map_or_else(Vec::new, |(reply, _)| reply.to_vec()),
    }
}

/// The id a command sends for `stmt`.
pub fn statement_id(stmt: StmtRef, ctx: &BuildCtx<'_>) -> u32 {
    match stmt {
        StmtRef::Literal(id) => id,
        StmtRef::Prepared(n) => {
            ctx.prepared.get(usize::from(n)).copied().flatten().unwrap_or(u32::from(n).wrapping_add(1))
        }
    }
}

/// The fields of `spec`'s valid payload on this connection.
pub fn build_fields(spec: &Spec, ctx: &BuildCtx<'_>) -> Fields {
    let mut packet = Vec::new();
    let stmt = |s: StmtRef| statement_id(s, ctx);
    match spec {
        Spec::Login(login) => return login_fields(login, ctx),
        Spec::SslRequest => return ssl_request_fields(ctx),
        Spec::AuthReply => {
            let mut fields = Fields::default();
            let reply = live_value(&LiveValue::AuthReply, ctx);
            fields.push(Field { live: Some(LiveValue::AuthReply), ..Field::new(FieldKind::AuthData, &reply) });
            return fields;
        }
        Spec::ChangeUser { connect_attrs } => return change_user_fields(connect_attrs, ctx),
        Spec::Execute { stmt: s, flags, params } => return execute_fields(*s, *flags, params, ctx),
        Spec::Query(sql) => {
            encode_query(&mut packet, sql);
        }
        Spec::Prepare(sql) => {
            encode_prepare(&mut packet, sql);
        }
        Spec::SendLongData { stmt: s, param, data } => encode_send_long_data(&mut packet, stmt(*s), *param, data),
        Spec::Close(s) => encode_stmt_close(&mut packet, stmt(*s)),
        Spec::Reset(s) => encode_stmt_reset(&mut packet, stmt(*s)),
        Spec::Fetch { stmt: s, rows } => encode_stmt_fetch(&mut packet, stmt(*s), *rows),
        Spec::Ping => encode_ping(&mut packet),
        Spec::Statistics => encode_statistics(&mut packet),
        Spec::ResetConnection => encode_reset_connection(&mut packet),
        Spec::Quit => encode_quit(&mut packet),
        Spec::InitDb => {
            encode_init_db(&mut packet, ctx.database.as_bytes());
        }
        Spec::SetOption(option) => encode_set_option(&mut packet, *option),
        Spec::FieldList { table, wildcard } => {
            if encode_field_list(&mut packet, table, wildcard).is_err() {
                return raw_fields(COM_FIELD_LIST, table);
            }
        }
        Spec::Other { command, body } => return raw_fields(*command, body),
    }
    command_fields(spec, packet.get(HEADER_LEN..).unwrap_or_default())
}

/// A command byte and a body taken as data.
fn raw_fields(command: u8, body: &[u8]) -> Fields {
    let mut fields = Fields::default();
    fields.push(Field::new(FieldKind::Command, &[command]));
    fields.push(Field::new(FieldKind::Data, body));
    fields
}

/// Splits the payload of a command whose layout is fixed by its spec.
fn command_fields(spec: &Spec, payload: &[u8]) -> Fields {
    let mut s = Splitter::new(payload);
    s.fixed(FieldKind::Command, 1, None);
    let live = |stmt: &StmtRef| match stmt {
        StmtRef::Prepared(n) => Some(LiveValue::Statement { prepare: usize::from(*n) }),
        StmtRef::Literal(_) => None,
    };
    match spec {
        Spec::Query(_) | Spec::Prepare(_) => s.rest(FieldKind::Text),
        Spec::SendLongData { stmt, .. } => {
            s.fixed(FieldKind::StatementId, 4, live(stmt));
            s.fixed(FieldKind::ParamId, 2, None);
            s.rest(FieldKind::Data);
        }
        Spec::Close(stmt) | Spec::Reset(stmt) => s.fixed(FieldKind::StatementId, 4, live(stmt)),
        Spec::Fetch { stmt, .. } => {
            s.fixed(FieldKind::StatementId, 4, live(stmt));
            s.fixed(FieldKind::RowCount, 4, None);
        }
        Spec::InitDb => s.rest(FieldKind::DatabaseName),
        Spec::SetOption(_) => s.fixed(FieldKind::OptionCode, 2, None),
        Spec::FieldList { .. } => {
            s.nul_string(FieldKind::TableName);
            s.rest(FieldKind::Data);
        }
        _ => {}
    }
    s.finish()
}

fn execute_fields(stmt: StmtRef, flags: u8, params: &[OwnedParam], ctx: &BuildCtx<'_>) -> Fields {
    let borrowed: Vec<Param<'_>> = params.iter().map(OwnedParam::as_param).collect();
    let mut packet = Vec::new();
    encode_execute(&mut packet, statement_id(stmt, ctx), &borrowed);
    let payload = packet.get_mut(HEADER_LEN..).unwrap_or_default();
    if let Some(b) = payload.get_mut(5) {
        *b = flags;
    }
    let mut s = Splitter::new(payload);
    s.fixed(FieldKind::Command, 1, None);
    let live = match stmt {
        StmtRef::Prepared(n) => Some(LiveValue::Statement { prepare: usize::from(n) }),
        StmtRef::Literal(_) => None,
    };
    s.fixed(FieldKind::StatementId, 4, live);
    s.fixed(FieldKind::CursorFlags, 1, None);
    s.fixed(FieldKind::IterationCount, 4, None);
    if !params.is_empty() {
        s.fixed(FieldKind::NullBitmap, params.len().div_ceil(8), None);
        s.fixed(FieldKind::ParamsBound, 1, None);
        for _ in params {
            s.fixed(FieldKind::ParamType, 2, None);
        }
        for param in params {
            param_value_fields(&mut s, param);
        }
    }
    s.finish()
}

fn param_value_fields(s: &mut Splitter<'_>, param: &OwnedParam) {
    let width = match param {
        OwnedParam::Null => return,
        OwnedParam::I8(_) => 1,
        OwnedParam::I16(_) => 2,
        OwnedParam::I32(_) | OwnedParam::F32(_) => 4,
        OwnedParam::I64(_) | OwnedParam::U64(_) | OwnedParam::F64(_) => 8,
        OwnedParam::Bytes(_) | OwnedParam::VarString(_) | OwnedParam::Blob(_) => {
            return s.lenenc_string(FieldKind::ParamValue, None)
        }
        OwnedParam::Date(_) | OwnedParam::Time(_) | OwnedParam::DateTime(_) => {
            return s.one_byte_string(FieldKind::ParamValue, None)
        }
    };
    s.fixed(FieldKind::ParamValue, width, None);
}

/// The login's capabilities: what a client asks for, as far as the
/// greeting offers it (TLS never: the fuzzer speaks plain text).
fn login_capabilities(
    login_deprecate_eof: bool,
    with_db: bool,
    attrs: bool,
    compress: bool,
    ctx: &BuildCtx<'_>,
) -> Capabilities {
    let options = CapabilityOptions {
        with_database: with_db,
        tls: false,
        deprecate_eof: login_deprecate_eof,
        connect_attrs: attrs,
        extra: if compress || ctx.compress { Capabilities::COMPRESS } else { Capabilities::empty() },
    };
    // The login's auth data is 4.1's, length-prefixed: it says so with
    // SECURE_CONNECTION even to a server that does not offer it (msql-srv
    // sends a 4.1 scramble without the flag), as libmariadb's login does,
    // so that such a server reads the fields where they are.
    (client_capabilities(&options) & ctx.server_caps) | Capabilities::SECURE_CONNECTION
}

fn login_fields(login: &LoginSpec, ctx: &BuildCtx<'_>) -> Fields {
    let attrs = !login.connect_attrs.is_empty();
    let caps = login_capabilities(login.deprecate_eof, login.with_database, attrs, login.compress, ctx);
    let live_scramble = LiveValue::Scramble { plugin: login.plugin.clone() };
    let scramble = live_value(&live_scramble, ctx);
    let response = HandshakeResponse41 {
        capabilities: caps,
        max_packet_size: DEFAULT_MAX_PACKET_SIZE,
        charset: login.charset,
        user: ctx.user.as_bytes(),
        auth_response: &scramble,
        database: login.with_database.then_some(ctx.database.as_bytes()),
        auth_plugin_name: login.plugin.as_bytes(),
        connect_attrs: &login.connect_attrs,
    };
    let mut packet = Vec::new();
    if response.encode(&mut packet, 1).is_err() {
        return Fields(vec![Field::new(FieldKind::Data, b"")]);
    }
    let mut s = Splitter::new(packet.get(HEADER_LEN..).unwrap_or_default());
    client_prefix_fields(&mut s);
    s.nul_string(FieldKind::UserName);
    let scramble = Some(live_scramble);
    if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        s.lenenc_string(FieldKind::AuthData, scramble);
    } else {
        s.one_byte_string(FieldKind::AuthData, scramble);
    }
    if caps.contains(Capabilities::CONNECT_WITH_DB) {
        s.nul_string(FieldKind::DatabaseName);
    }
    if caps.contains(Capabilities::PLUGIN_AUTH) {
        s.nul_string(FieldKind::PluginName);
    }
    if caps.contains(Capabilities::CONNECT_ATTRS) {
        s.attributes(login.connect_attrs.len());
    }
    s.finish()
}

/// Capabilities, max packet size, charset and the filler (with MariaDB's
/// extended capabilities in its last 4 bytes): HandshakeResponse41 and
/// SSLRequest start alike.
fn client_prefix_fields(s: &mut Splitter<'_>) {
    s.fixed(FieldKind::Capabilities, 4, None);
    s.fixed(FieldKind::MaxPacket, 4, None);
    s.fixed(FieldKind::Charset, 1, None);
    s.fixed(FieldKind::Filler, 19, None);
    s.fixed(FieldKind::ExtCapabilities, 4, None);
}

fn ssl_request_fields(ctx: &BuildCtx<'_>) -> Fields {
    let caps = login_capabilities(true, true, true, false, ctx) | Capabilities::SSL;
    let request = SslRequest {
        capabilities: caps,
        max_packet_size: DEFAULT_MAX_PACKET_SIZE,
        charset: CHARSET_UTF8MB4_GENERAL_CI,
    };
    let mut packet = Vec::new();
    request.encode(&mut packet, 1);
    let mut s = Splitter::new(packet.get(HEADER_LEN..).unwrap_or_default());
    client_prefix_fields(&mut s);
    s.finish()
}

fn change_user_fields(attrs: &[(String, String)], ctx: &BuildCtx<'_>) -> Fields {
    let caps = ctx.session_caps;
    let scramble = live_value(&LiveValue::Scramble { plugin: LOGIN_PLUGIN.name().to_owned() }, ctx);
    let change = ChangeUser {
        capabilities: caps,
        user: ctx.user.as_bytes(),
        auth_response: &scramble,
        database: ctx.database.as_bytes(),
        charset: u16::from(CHARSET_UTF8MB4_GENERAL_CI),
        auth_plugin_name: LOGIN_PLUGIN.name().as_bytes(),
        connect_attrs: attrs,
    };
    let mut packet = Vec::new();
    if change.encode(&mut packet).is_err() {
        return raw_fields(COM_CHANGE_USER, b"");
    }
    let mut s = Splitter::new(packet.get(HEADER_LEN..).unwrap_or_default());
    s.fixed(FieldKind::Command, 1, None);
    s.nul_string(FieldKind::UserName);
    let scramble = Some(LiveValue::Scramble { plugin: LOGIN_PLUGIN.name().to_owned() });
    if caps.contains(Capabilities::SECURE_CONNECTION) {
        s.one_byte_string(FieldKind::AuthData, scramble);
    } else {
        s.nul_string(FieldKind::AuthData);
    }
    s.nul_string(FieldKind::DatabaseName);
    s.fixed(FieldKind::Charset, 2, None);
    if caps.contains(Capabilities::PLUGIN_AUTH) {
        s.nul_string(FieldKind::PluginName);
    }
    if caps.contains(Capabilities::CONNECT_ATTRS) {
        s.attributes(attrs.len());
    }
    s.finish()
}

/// Reads a payload back into fields. The payloads are the protocol crate's
/// own output, so a read never fails in practice; if one did, the rest of
/// the payload becomes one data field rather than being lost.
struct Splitter<'a> {
    r: Reader<'a>,
    fields: Fields,
    failed: bool,
}

impl<'a> Splitter<'a> {
    fn new(payload: &'a [u8]) -> Self {
        Splitter { r: Reader::new(payload), fields: Fields::default(), failed: false }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.failed {
            return None;
        }
        let taken = self.r.take(n, "fuzz field").ok();
        self.failed = taken.is_none();
        taken
    }

    fn fixed(&mut self, kind: FieldKind, n: usize, live: Option<LiveValue>) {
        if let Some(bytes) = self.take(n) {
            self.fields.push(Field { live, ..Field::new(kind, bytes) });
        }
    }

    fn nul_string(&mut self, kind: FieldKind) {
        let len = self.r.peek_rest().iter().position(|&b| b == 0);
        match len {
            Some(len) if !self.failed => {
                self.fixed(kind, len, None);
                self.fixed(FieldKind::Terminator, 1, None);
            }
            _ => self.failed = true,
        }
    }

    fn lenenc_string(&mut self, kind: FieldKind, live: Option<LiveValue>) {
        let mut probe = self.r.clone();
        let (Ok(len), false) = (probe.lenenc_int("fuzz length"), self.failed) else {
            self.failed = true;
            return;
        };
        let prefix_len = probe.position() - self.r.position();
        if let Some(prefix) = self.take(prefix_len) {
            self.fields.push(Field::length(LengthForm::Lenenc, prefix, 1));
            self.fixed(kind, usize::try_from(len).unwrap_or(usize::MAX), live);
        }
    }

    fn one_byte_string(&mut self, kind: FieldKind, live: Option<LiveValue>) {
        if let Some(&[len]) = self.take(1) {
            self.fields.push(Field::length(LengthForm::OneByte, &[len], 1));
            self.fixed(kind, usize::from(len), live);
        }
    }

    /// A connection-attribute block: its total length, then key/value pairs.
    fn attributes(&mut self, pairs: usize) {
        let mut probe = self.r.clone();
        if probe.lenenc_int("fuzz attrs length").is_err() {
            self.failed = true;
            return;
        }
        let prefix_len = probe.position() - self.r.position();
        if let Some(prefix) = self.take(prefix_len) {
            self.fields.push(Field::length(LengthForm::Lenenc, prefix, 4 * pairs));
            for _ in 0..pairs {
                self.lenenc_string(FieldKind::AttrKey, None);
                self.lenenc_string(FieldKind::AttrValue, None);
            }
        }
    }

    fn rest(&mut self, kind: FieldKind) {
        if !self.failed {
            let rest = self.r.rest();
            self.fields.push(Field::new(kind, rest));
        }
    }

    fn finish(mut self) -> Fields {
        let rest = self.r.rest();
        if !rest.is_empty() {
            self.fields.push(Field::new(FieldKind::Data, rest));
        }
        self.fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::spec::OwnedParam as P;

    pub(crate) fn ctx<'a>(prepared: &'a [Option<u32>]) -> BuildCtx<'a> {
        BuildCtx {
            user: "sbtest",
            password: "sbtest",
            database: "sbtest",
            server_caps: Capabilities(u64::MAX) & !Capabilities::COMPRESS,
            nonce: b"0123456789abcdefghij",
            secure: false,
            session_caps: Capabilities(u64::MAX),
            prepared,
            compress: false,
            auth_reply: None,
            handshake_seq: Some(1),
        }
    }

    fn payload(spec: &Spec, ctx: &BuildCtx<'_>) -> (Fields, Vec<u8>) {
        let mut fields = build_fields(spec, ctx);
        let mut out = Vec::new();
        fields.finish(&mut out);
        (fields, out)
    }

    #[test]
    fn execute_fields_cover_the_encoders_bytes() {
        let params = vec![P::I32(7), P::Null, P::Bytes(b"abc".to_vec()), P::Date(Default::default())];
        let spec = Spec::Execute { stmt: StmtRef::Prepared(1), flags: 1, params: params.clone() };
        let ids = [Some(10), Some(20)];
        let (fields, bytes) = payload(&spec, &ctx(&ids));
        let borrowed: Vec<Param<'_>> = params.iter().map(P::as_param).collect();
        let mut expected = Vec::new();
        encode_execute(&mut expected, 20, &borrowed);
        expected[HEADER_LEN + 5] = 1;
        assert_eq!(bytes, expected[HEADER_LEN..]);
        assert_eq!(fields.count(FieldKind::ParamType), 4);
        assert_eq!(fields.count(FieldKind::ParamValue), 3, "no value for the NULL");
        assert_eq!(fields.nth(FieldKind::StatementId, 0).unwrap().live, Some(LiveValue::Statement { prepare: 1 }));
        assert_eq!(fields.count(FieldKind::Length), 2);
    }

    #[test]
    fn login_fields_cover_the_encoders_bytes_and_mark_the_scramble() {
        let login = LoginSpec {
            deprecate_eof: true,
            with_database: true,
            connect_attrs: vec![("_client_name".into(), "x".into())],
            charset: 45,
            ..crate::fuzz::seeds::client_login()
        };
        let c = ctx(&[]);
        let (fields, bytes) = payload(&Spec::Login(login), &c);
        assert_eq!(fields.nth(FieldKind::UserName, 0).unwrap().bytes, b"sbtest");
        assert_eq!(fields.nth(FieldKind::DatabaseName, 0).unwrap().bytes, b"sbtest");
        let auth = fields.nth(FieldKind::AuthData, 0).unwrap();
        assert_eq!(auth.bytes.len(), 20);
        assert!(matches!(auth.live, Some(LiveValue::Scramble { .. })));
        assert_eq!(fields.count(FieldKind::AttrKey), 1);
        assert!(bytes.ends_with(b"\x0f\x0c_client_name\x01x"), "{bytes:?}");
    }

    #[test]
    fn a_login_to_a_server_without_secure_connection_still_says_its_auth_is_41() {
        let login = LoginSpec {
            deprecate_eof: false,
            with_database: false,
            connect_attrs: Vec::new(),
            ..crate::fuzz::seeds::client_login()
        };
        let mut c = ctx(&[]);
        // msql-srv's greeting: PROTOCOL_41 and bit 14, nothing more.
        c.server_caps = Capabilities(0x4200);
        let (fields, bytes) = payload(&Spec::Login(login), &c);
        let caps = Capabilities(u64::from(u32::from_le_bytes(bytes[..4].try_into().unwrap())));
        assert!(caps.contains(Capabilities::SECURE_CONNECTION | Capabilities::PROTOCOL_41), "{caps:?}");
        assert!(!caps.contains(Capabilities::PLUGIN_AUTH), "not offered: {caps:?}");
        assert_eq!(fields.nth(FieldKind::AuthData, 0).unwrap().bytes.len(), 20);
    }

    #[test]
    fn every_spec_builds_without_a_data_remainder() {
        let c = ctx(&[Some(3)]);
        let specs = [
            Spec::Query(b"SELECT 1".to_vec()),
            Spec::SendLongData { stmt: StmtRef::Literal(9), param: 1, data: b"xy".to_vec() },
            Spec::Fetch { stmt: StmtRef::Prepared(0), rows: 5 },
            Spec::FieldList { table: b"sbtest1".to_vec(), wildcard: Vec::new() },
            Spec::ChangeUser { connect_attrs: vec![("a".into(), "b".into())] },
            Spec::SslRequest,
            Spec::InitDb,
            Spec::SetOption(1),
        ];
        for spec in specs {
            let (fields, bytes) = payload(&spec, &c);
            assert!(!bytes.is_empty(), "{spec:?}");
            let data_ok = matches!(spec, Spec::SendLongData { .. } | Spec::FieldList { .. });
            assert!(data_ok || fields.count(FieldKind::Data) == 0, "{spec:?}: {fields:?}");
        }
    }
}

//! What a fuzzed session sends: a plan of packets, each a valid message
//! ([`Spec`]) plus the edits that break it ([`FieldEdit`]s on its fields,
//! [`FrameEdit`]s on its framing, [`WrapEdit`]s on its compressed packet).
//! Plans are what the corpus keeps and the mutators change; `encode_spec.rs`
//! turns one into bytes on a live connection.

use wirebench_protocol::command::{Date, DateTime, Param, Time};

use super::fields::FieldEdit;

/// Which statement a command names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StmtRef {
    /// The id the server gave this session's `n`th COM_STMT_PREPARE (from 0);
    /// `n + 1` when there was no such prepare or it failed.
    Prepared(u16),
    /// This id, whatever was prepared.
    Literal(u32),
}

/// A parameter value, owned (the protocol crate's [`Param`] borrows).
#[derive(Debug, Clone, PartialEq)]
pub enum OwnedParam {
    Null,
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U64(u64),
    F32(f32),
    F64(f64),
    Bytes(Vec<u8>),
    VarString(Vec<u8>),
    Blob(Vec<u8>),
    Date(Date),
    Time(Time),
    DateTime(DateTime),
}

impl OwnedParam {
    pub fn as_param(&self) -> Param<'_> {
        match self {
            OwnedParam::Null => Param::Null,
            OwnedParam::I8(v) => Param::I8(*v),
            OwnedParam::I16(v) => Param::I16(*v),
            OwnedParam::I32(v) => Param::I32(*v),
            OwnedParam::I64(v) => Param::I64(*v),
            OwnedParam::U64(v) => Param::U64(*v),
            OwnedParam::F32(v) => Param::F32(*v),
            OwnedParam::F64(v) => Param::F64(*v),
            OwnedParam::Bytes(v) => Param::Bytes(v),
            OwnedParam::VarString(v) => Param::VarString(v),
            OwnedParam::Blob(v) => Param::Blob(v),
            OwnedParam::Date(v) => Param::Date(*v),
            OwnedParam::Time(v) => Param::Time(*v),
            OwnedParam::DateTime(v) => Param::DateTime(*v),
        }
    }
}

/// The login's choices; capabilities are negotiated with the greeting's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginSpec {
    pub deprecate_eof: bool,
    pub with_database: bool,
    pub connect_attrs: Vec<(String, String)>,
    pub charset: u8,
    /// The auth plugin the login names and answers the nonce with (a
    /// server whose account uses another one switches to it).
    pub plugin: String,
    /// Ask for the compressed protocol (besides `--mysql-compression`).
    pub compress: bool,
}

/// One valid client message.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// HandshakeResponse41 (the first packet after the greeting).
    Login(LoginSpec),
    /// An SSLRequest, after which the server expects a TLS handshake
    /// (the session goes on in plain text: the server must cope).
    SslRequest,
    /// The client's answer to the server's AuthSwitchRequest or
    /// AuthMoreData, as the plugin computes it on the live connection
    /// (pre-auth sessions plan it, so that it is mutated like any packet);
    /// where the server asked nothing, its bytes go as a command.
    AuthReply,
    Query(Vec<u8>),
    Prepare(Vec<u8>),
    Execute {
        stmt: StmtRef,
        flags: u8,
        params: Vec<OwnedParam>,
    },
    SendLongData {
        stmt: StmtRef,
        param: u16,
        data: Vec<u8>,
    },
    Close(StmtRef),
    Reset(StmtRef),
    Fetch {
        stmt: StmtRef,
        rows: u32,
    },
    Ping,
    Statistics,
    ResetConnection,
    Quit,
    /// COM_INIT_DB of the run's database (no other name is ever sent).
    InitDb,
    /// COM_CHANGE_USER back to the run's user and database.
    ChangeUser {
        connect_attrs: Vec<(String, String)>,
    },
    SetOption(u16),
    FieldList {
        table: Vec<u8>,
        wildcard: Vec<u8>,
    },
    /// Any other command byte with a body (COM_TIME, COM_DEBUG, MariaDB's
    /// COM_STMT_BULK_EXECUTE, unknown bytes, ...).
    Other {
        command: u8,
        body: Vec<u8>,
    },
}

/// A framing edit: the 4-byte header and how the payload is cut.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FrameEdit {
    /// This sequence id instead of the right one.
    Seq(u8),
    /// This payload length in the header, whatever follows.
    Length(u32),
    /// Only the first `keep` payload bytes are sent; the header says so
    /// when `fix_length`, and still announces the whole payload otherwise.
    Truncate { keep: u32, fix_length: bool },
    /// Bytes sent after the packet, as if part of the stream.
    Garbage(Vec<u8>),
    /// The payload padded with spaces past 16 MiB, so that it goes in
    /// 0xFFFFFF-byte fragments (the server must join them).
    Huge,
    /// The packet is sent twice.
    Twice,
}

/// An edit of the compressed packet that carries a command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WrapEdit {
    Seq(u8),
    /// This compressed payload length in the header.
    PayloadLength(u32),
    /// This uncompressed length in the header (0 claims "not compressed").
    PlainLength(u32),
    /// Flip bit `n` of the compressed payload.
    Corrupt(u32),
}

/// One packet of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPacket {
    pub spec: Spec,
    pub edits: Vec<FieldEdit>,
    pub frame: Vec<FrameEdit>,
    pub wrap: Vec<WrapEdit>,
}

impl PlannedPacket {
    pub fn new(spec: Spec) -> Self {
        PlannedPacket { spec, edits: Vec::new(), frame: Vec::new(), wrap: Vec::new() }
    }
}

/// A whole session: the first packet answers the greeting.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionPlan {
    pub packets: Vec<PlannedPacket>,
}

impl Spec {
    /// The statement the command names, if it names one.
    fn statement_mut(&mut self) -> Option<&mut StmtRef> {
        match self {
            Spec::Execute { stmt, .. }
            | Spec::SendLongData { stmt, .. }
            | Spec::Close(stmt)
            | Spec::Reset(stmt)
            | Spec::Fetch { stmt, .. } => Some(stmt),
            _ => None,
        }
    }
}

impl SessionPlan {
    /// The session without packet `at`. When that packet was a prepare,
    /// later commands naming later prepares name them still (their
    /// numbers move down one).
    pub fn without_packet(&self, at: usize) -> SessionPlan {
        let mut plan = self.clone();
        if at >= plan.packets.len() {
            return plan;
        }
        let removed = plan.packets.remove(at);
        if matches!(removed.spec, Spec::Prepare(_)) {
            let ordinal = self.packets.iter().take(at).filter(|p| matches!(p.spec, Spec::Prepare(_))).count();
            for packet in plan.packets.iter_mut().skip(at) {
                if let Some(StmtRef::Prepared(n)) = packet.spec.statement_mut() {
                    if usize::from(*n) > ordinal {
                        *n -= 1;
                    }
                }
            }
        }
        plan
    }

    /// The session with every login in `form`: naming the database, or
    /// not and followed by COM_INIT_DB (as a client selects the database
    /// then), or selecting none at all.
    pub fn with_login_form(mut self, form: LoginForm) -> SessionPlan {
        let mut at = 0;
        while at < self.packets.len() {
            if let Some(PlannedPacket { spec: Spec::Login(login), .. }) = self.packets.get_mut(at) {
                login.with_database = form == LoginForm::NamingDatabase;
                let selected = matches!(self.packets.get(at + 1).map(|p| &p.spec), Some(Spec::InitDb));
                if form == LoginForm::ThenInitDb && !selected {
                    self.packets.insert(at + 1, PlannedPacket::new(Spec::InitDb));
                }
                if form == LoginForm::NoDatabase && selected {
                    self.packets.remove(at + 1);
                }
            }
            at += 1;
        }
        self
    }
}

/// How a session's login selects the run's database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginForm {
    /// In the login (CONNECT_WITH_DB).
    NamingDatabase,
    /// A login naming none, then COM_INIT_DB.
    ThenInitDb,
    /// Not at all: the server does not complete either way of selecting it.
    NoDatabase,
}

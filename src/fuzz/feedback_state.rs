//! The black-box feedback: what the server answered to what, as AFLNet uses
//! response codes as protocol states. A state is a (message, answer class,
//! error code) triple; a session that reaches a state no session reached
//! before joins the corpus.

use std::fmt;

use wirebench_protocol::constants::command::*;

/// The client message an answer is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientMessage {
    /// The server's first packet, before the client sends anything.
    Greeting,
    /// The packet sent in answer to the greeting.
    Login,
    /// An SSLRequest in answer to the greeting.
    SslRequest,
    /// The client's answer to an AuthSwitchRequest or AuthMoreData.
    AuthReply,
    /// A command: its first payload byte as sent.
    Command(u8),
    /// A command byte no server knows: they all take the same path (ERR
    /// 1047), so they make one state, not 200.
    UnknownCommand,
}

impl ClientMessage {
    /// The step of a command packet whose first payload byte is `byte`.
    pub fn of_command(byte: u8) -> ClientMessage {
        match command_name(byte) {
            Some(_) => ClientMessage::Command(byte),
            None => ClientMessage::UnknownCommand,
        }
    }
}

/// What kind of answer came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnswerClass {
    /// A greeting (HandshakeV10).
    Handshake,
    Ok,
    Err,
    Eof,
    ResultSet,
    PrepareOk,
    LocalInfile,
    AuthSwitch,
    AuthMoreData,
    /// A packet of text without a header byte (COM_STATISTICS).
    Text,
    /// Nothing came and nothing was expected (COM_STMT_CLOSE, ...).
    Silent,
    /// Nothing came within the answer timeout.
    NoReply,
    /// The server closed the connection.
    Closed,
    /// The connection was reset, or a write to it failed.
    Reset,
    /// Bytes that are no packet this client can read.
    Garbled,
    /// None yet: the packet was in flight when the server failed.
    Pending,
}

/// One state: a message, the class of its answer, the error code of an ERR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub step: ClientMessage,
    pub class: AnswerClass,
    pub code: u16,
}

/// The protocol's name for a command byte, or `None` for one it lacks.
pub fn command_name(byte: u8) -> Option<&'static str> {
    Some(match byte {
        COM_SLEEP => "COM_SLEEP",
        COM_QUIT => "COM_QUIT",
        COM_INIT_DB => "COM_INIT_DB",
        COM_QUERY => "COM_QUERY",
        COM_FIELD_LIST => "COM_FIELD_LIST",
        0x05 => "COM_CREATE_DB",
        0x06 => "COM_DROP_DB",
        0x07 => "COM_REFRESH",
        0x08 => "COM_SHUTDOWN",
        COM_STATISTICS => "COM_STATISTICS",
        0x0A => "COM_PROCESS_INFO",
        0x0B => "COM_CONNECT",
        0x0C => "COM_PROCESS_KILL",
        0x0D => "COM_DEBUG",
        COM_PING => "COM_PING",
        0x0F => "COM_TIME",
        0x10 => "COM_DELAYED_INSERT",
        COM_CHANGE_USER => "COM_CHANGE_USER",
        0x12 => "COM_BINLOG_DUMP",
        0x13 => "COM_TABLE_DUMP",
        0x14 => "COM_CONNECT_OUT",
        0x15 => "COM_REGISTER_SLAVE",
        COM_STMT_PREPARE => "COM_STMT_PREPARE",
        COM_STMT_EXECUTE => "COM_STMT_EXECUTE",
        COM_STMT_SEND_LONG_DATA => "COM_STMT_SEND_LONG_DATA",
        COM_STMT_CLOSE => "COM_STMT_CLOSE",
        COM_STMT_RESET => "COM_STMT_RESET",
        COM_SET_OPTION => "COM_SET_OPTION",
        COM_STMT_FETCH => "COM_STMT_FETCH",
        0x1D => "COM_DAEMON",
        0x1E => "COM_BINLOG_DUMP_GTID",
        COM_RESET_CONNECTION => "COM_RESET_CONNECTION",
        0xFA => "COM_STMT_BULK_EXECUTE",
        0xFE => "COM_MULTI",
        _ => return None,
    })
}

impl fmt::Display for ClientMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientMessage::Greeting => f.write_str("greeting"),
            ClientMessage::Login => f.write_str("login"),
            ClientMessage::SslRequest => f.write_str("SSLRequest"),
            ClientMessage::AuthReply => f.write_str("auth reply"),
            ClientMessage::Command(byte) => match command_name(*byte) {
                Some(name) => f.write_str(name),
                None => write!(f, "command 0x{byte:02x}"),
            },
            ClientMessage::UnknownCommand => f.write_str("unknown command"),
        }
    }
}

impl fmt::Display for AnswerClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            AnswerClass::Handshake => "handshake",
            AnswerClass::Ok => "OK",
            AnswerClass::Err => "ERR",
            AnswerClass::Eof => "EOF",
            AnswerClass::ResultSet => "result set",
            AnswerClass::PrepareOk => "PREPARE_OK",
            AnswerClass::LocalInfile => "LOCAL INFILE request",
            AnswerClass::AuthSwitch => "AuthSwitchRequest",
            AnswerClass::AuthMoreData => "AuthMoreData",
            AnswerClass::Text => "text",
            AnswerClass::Silent => "no answer (none expected)",
            AnswerClass::NoReply => "no answer in time",
            AnswerClass::Closed => "connection closed",
            AnswerClass::Reset => "connection reset",
            AnswerClass::Garbled => "unreadable bytes",
            AnswerClass::Pending => "none yet (in flight when the server failed)",
        };
        f.write_str(name)
    }
}

impl AnswerClass {
    const ALL: [AnswerClass; 16] = [
        AnswerClass::Handshake,
        AnswerClass::Ok,
        AnswerClass::Err,
        AnswerClass::Eof,
        AnswerClass::ResultSet,
        AnswerClass::PrepareOk,
        AnswerClass::LocalInfile,
        AnswerClass::AuthSwitch,
        AnswerClass::AuthMoreData,
        AnswerClass::Text,
        AnswerClass::Silent,
        AnswerClass::NoReply,
        AnswerClass::Closed,
        AnswerClass::Reset,
        AnswerClass::Garbled,
        AnswerClass::Pending,
    ];

    /// The class a [`Display`](fmt::Display) name stands for.
    fn from_name(name: &str) -> Option<AnswerClass> {
        AnswerClass::ALL.into_iter().find(|class| class.to_string() == name)
    }
}

impl State {
    /// Reads back what follows the step in [`State`]'s display ("ERR
    /// 1243", "result set", "result set, then ERR 1317"), for `step`.
    pub fn parse_answer(step: ClientMessage, answer: &str) -> Option<State> {
        let err = |code: &str| code.trim().parse::<u16>().ok();
        if let Some(code) = answer.strip_prefix("ERR ") {
            return Some(State { step, class: AnswerClass::Err, code: err(code)? });
        }
        let (class, code) = match answer.split_once(", then ERR ") {
            Some((class, code)) => (class, err(code)?),
            None => (answer, 0),
        };
        Some(State { step, class: AnswerClass::from_name(class.trim())?, code })
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.class, self.code) {
            (AnswerClass::Err, code) => write!(f, "{} -> ERR {code}", self.step),
            (class, 0) => write!(f, "{} -> {class}", self.step),
            // An ERR that ended a result set or a prepare's definitions.
            (class, code) => write!(f, "{} -> {class}, then ERR {code}", self.step),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_as_the_protocol_names_them() {
        let s = State { step: ClientMessage::Command(COM_STMT_EXECUTE), class: AnswerClass::Err, code: 1243 };
        assert_eq!(s.to_string(), "COM_STMT_EXECUTE -> ERR 1243");
        let s = State { step: ClientMessage::of_command(0x99), class: AnswerClass::Closed, code: 0 };
        assert_eq!(s.to_string(), "unknown command -> connection closed");
        assert_eq!(ClientMessage::of_command(0x20), ClientMessage::of_command(0x7f));
        assert_eq!(ClientMessage::of_command(0x17), ClientMessage::Command(COM_STMT_EXECUTE));
        assert_eq!(State { step: ClientMessage::Login, class: AnswerClass::Ok, code: 0 }.to_string(), "login -> OK");
        let s = State { step: ClientMessage::Command(COM_QUERY), class: AnswerClass::ResultSet, code: 1317 };
        assert_eq!(s.to_string(), "COM_QUERY -> result set, then ERR 1317");
    }

    #[test]
    fn every_answer_reads_back_from_its_display() {
        let step = ClientMessage::Command(COM_QUERY);
        for class in AnswerClass::ALL {
            for code in [0, 1317] {
                let state = State { step, class, code: if class == AnswerClass::Err { 1243 } else { code } };
                let text = state.to_string();
                let answer = text.split_once(" -> ").unwrap().1;
                assert_eq!(State::parse_answer(step, answer), Some(state), "{text}");
            }
        }
        assert_eq!(State::parse_answer(step, "a shrug"), None);
        assert_eq!(State::parse_answer(step, "ERR x"), None);
    }
}

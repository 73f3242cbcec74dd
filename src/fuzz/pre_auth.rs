//! Pre-auth fuzzing: what comes before the login's answer is the most
//! exposed surface a server has (anyone on the network reaches it), and
//! the only one of a server that refuses our login (a honeypot, a proxy
//! without an account for us, a server we have no password for). When the
//! login is refused, or with `--pre-auth`, the sessions fuzz the greeting's
//! handling, the SSLRequest, every field of the handshake response and the
//! auth switch and more-data exchanges, and the control check asks
//! whether the server still greets and gives a well-formed login the
//! answer it gave at the start (an ERR 1045 stays an ERR 1045).

use std::fmt;

use crate::client::ClientError;

/// How the server answered a well-formed login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginAnswer {
    LoggedIn,
    /// An ERR: to the login itself, or to the COM_INIT_DB that selects the
    /// database after it (`at_database`).
    Refused {
        code: u16,
        at_database: bool,
    },
}

impl LoginAnswer {
    /// The answer a login attempt got, or `None` when it got none (no
    /// greeting, a close, a hang, bytes that break the protocol).
    pub fn of<T>(attempt: &Result<T, ClientError>) -> Option<LoginAnswer> {
        match attempt {
            Ok(_) => Some(LoginAnswer::LoggedIn),
            Err(e) => LoginAnswer::of_error(e),
        }
    }

    /// The ERR a failed login got, or `None` when it failed otherwise.
    pub fn of_error(error: &ClientError) -> Option<LoginAnswer> {
        match error {
            ClientError::Server { error, .. } => Some(LoginAnswer::Refused { code: error.code, at_database: false }),
            ClientError::SelectDatabase { error, .. } => {
                Some(LoginAnswer::Refused { code: error.code, at_database: true })
            }
            _ => None,
        }
    }
}

impl fmt::Display for LoginAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoginAnswer::LoggedIn => f.write_str("OK (logged in)"),
            LoginAnswer::Refused { code, at_database: false } => write!(f, "ERR {code}"),
            LoginAnswer::Refused { code, at_database: true } => write!(f, "ERR {code} to the COM_INIT_DB after it"),
        }
    }
}

/// What a run fuzzes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FuzzMode {
    /// The login and the commands after it.
    Commands,
    /// What comes before the login's answer; a well-formed login must
    /// keep getting `baseline`.
    PreAuth { baseline: LoginAnswer },
}

/// The line on stderr that says which mode was chosen and why.
pub fn mode_line(mode: &FuzzMode, asked: bool, refusal: Option<&ClientError>) -> String {
    match (mode, refusal) {
        (FuzzMode::Commands, _) => "wirebench fuzz: fuzzing the login and the commands after it: the login works \
                                    (--pre-auth fuzzes only what comes before the login's answer)"
            .to_owned(),
        (FuzzMode::PreAuth { baseline }, Some(error)) => format!(
            "wirebench fuzz: fuzzing what comes before the login's answer (pre-auth mode): the server refuses the \
             login ({error}); the control check expects a well-formed login to keep getting {baseline}; to fuzz \
             commands, give an account and database it accepts"
        ),
        (FuzzMode::PreAuth { baseline }, None) => format!(
            "wirebench fuzz: fuzzing what comes before the login's answer (pre-auth mode{}): the control check \
             expects a well-formed login to keep getting {baseline}",
            if asked { ", --pre-auth" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Endpoint;
    use wirebench_protocol::response::ServerError;

    #[test]
    fn answers_are_told_apart_and_said() {
        let endpoint = Endpoint::tcp("127.0.0.1", 1);
        let denied = ServerError { code: 1045, sql_state: Some(*b"28000"), message: "Access denied".into() };
        let refused: Result<(), _> = Err(ClientError::Server { endpoint: endpoint.clone(), error: denied.clone() });
        let answer = LoginAnswer::of(&refused).unwrap();
        assert_eq!(answer, LoginAnswer::Refused { code: 1045, at_database: false });
        assert_eq!(answer.to_string(), "ERR 1045");
        let database: Result<(), _> =
            Err(ClientError::SelectDatabase { endpoint: endpoint.clone(), database: "d".into(), error: denied });
        assert_eq!(LoginAnswer::of(&database).unwrap().to_string(), "ERR 1045 to the COM_INIT_DB after it");
        assert_eq!(LoginAnswer::of(&Ok(())), Some(LoginAnswer::LoggedIn));
        let closed: Result<(), _> = Err(ClientError::Closed { endpoint, mid_packet: false });
        assert_eq!(LoginAnswer::of(&closed), None);
        let line = mode_line(&FuzzMode::PreAuth { baseline: answer }, false, refused.as_ref().err());
        assert!(line.contains("pre-auth mode") && line.contains("keep getting ERR 1045"), "{line}");
        assert!(mode_line(&FuzzMode::Commands, false, None).contains("the login works"));
    }
}

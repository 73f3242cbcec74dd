//! What `wirebench replay` is asked to do, as the command line gives it.

use std::fmt;
use std::path::PathBuf;

/// `--speed`: how fast the captured times pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// `max`: each command as soon as the one before it is answered.
    Max,
    /// `2` is twice as fast as captured, `0.5` half as fast.
    Times(f64),
}

impl Speed {
    /// The factor, `None` for `max`.
    pub fn factor(self) -> Option<f64> {
        match self {
            Speed::Max => None,
            Speed::Times(factor) => Some(factor),
        }
    }
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speed::Max => f.write_str("max"),
            Speed::Times(factor) => write!(f, "{factor}"),
        }
    }
}

/// `--user-map=CAPTURED:USER:PASSWORD`: the captured user's connections
/// log in as USER.
#[derive(Clone, PartialEq, Eq)]
pub struct UserMapping {
    pub captured: String,
    pub user: String,
    pub password: String,
}

impl fmt::Debug for UserMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UserMapping({} -> {}, password hidden)", self.captured, self.user)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaptureReplayOptions {
    /// The capture to replay.
    pub file: PathBuf,
    pub speed: Speed,
    pub users: Vec<UserMapping>,
    /// `--read-only`: statements that write are not sent.
    pub read_only: bool,
    /// `--multiply`: copies of every connection.
    pub multiply: u32,
}

impl CaptureReplayOptions {
    /// The login a captured user's connections use: 0 is `--mysql-user`'s,
    /// `n` the `n`-th mapping's.
    pub fn login_for(&self, captured_user: Option<&[u8]>) -> u32 {
        let Some(user) = captured_user else { return 0 };
        self.users.iter().position(|m| m.captured.as_bytes() == user).map_or(0, |n| n as u32 + 1)
    }

    /// The captured users login `n` logs in for.
    pub fn stands_for(&self, n: usize) -> String {
        match n.checked_sub(1).and_then(|m| self.users.get(m)) {
            Some(mapping) => mapping.captured.clone(),
            None => "every captured user not in --user-map".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_map_to_their_logins_and_the_rest_to_the_default() {
        let mapping =
            |captured: &str| UserMapping { captured: captured.into(), user: "u".into(), password: "p".into() };
        let options = CaptureReplayOptions {
            file: PathBuf::from("x.wbc"),
            speed: Speed::Max,
            users: vec![mapping("app"), mapping("report")],
            read_only: false,
            multiply: 1,
        };
        assert_eq!(options.login_for(Some(b"report")), 2);
        assert_eq!(options.login_for(Some(b"app")), 1);
        assert_eq!(options.login_for(Some(b"other")), 0);
        assert_eq!(options.login_for(None), 0);
        assert!(!format!("{:?}", options.users[0]).contains('p') || !format!("{:?}", options.users[0]).contains(":p"));
    }
}

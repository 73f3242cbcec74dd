//! What a capture must never keep: a password's scramble. The login's
//! auth response is never read into a record (`ClientFirstPacket` steps
//! over it); COM_CHANGE_USER carries one inside the command, which is
//! kept with it emptied.

use wirebench_protocol::buf::Reader;
use wirebench_protocol::Capabilities;

/// COM_CHANGE_USER's payload with its auth response emptied; the user,
/// database, charset, plugin and attributes stay. A payload that cannot be
/// read keeps its command byte and user only.
pub fn change_user_without_secret(payload: &[u8], caps: Capabilities) -> Vec<u8> {
    let mut r = Reader::new(payload);
    let mut out = Vec::with_capacity(payload.len());
    let Ok(command) = r.u8("command") else { return out };
    out.push(command);
    let Ok(user) = r.null_terminated("user") else { return out };
    out.extend_from_slice(user);
    out.push(0);
    let skipped = if caps.contains(Capabilities::SECURE_CONNECTION) {
        r.u8("auth response length").and_then(|len| r.skip(usize::from(len), "auth response"))
    } else {
        r.null_terminated("auth response").map(|_| ())
    };
    if skipped.is_err() {
        return out;
    }
    // An empty auth response: a zero length, or (without
    // SECURE_CONNECTION) an empty NUL-terminated string.
    out.push(0);
    out.extend_from_slice(r.rest());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use wirebench_protocol::command::ChangeUser;

    #[test]
    fn the_scramble_goes_and_the_rest_stays() {
        let caps = Capabilities::SECURE_CONNECTION | Capabilities::PROTOCOL_41 | Capabilities::PLUGIN_AUTH;
        let mut packet = Vec::new();
        ChangeUser {
            user: b"app",
            auth_response: b"0123456789abcdefghij",
            database: b"shop",
            charset: 45,
            auth_plugin_name: b"mysql_native_password",
            capabilities: caps,
            connect_attrs: &[],
        }
        .encode(&mut packet)
        .unwrap();
        let redacted = change_user_without_secret(&packet[4..], caps);
        assert!(!redacted.windows(20).any(|w| w == b"0123456789abcdefghij"));
        let mut expected = b"\x11app\0\0shop\0".to_vec();
        expected.extend_from_slice(&packet[4 + 1 + 4 + 1 + 20 + 5..]);
        assert_eq!(redacted, expected);
        assert_eq!(change_user_without_secret(b"\x11ap", caps), b"\x11");
    }
}

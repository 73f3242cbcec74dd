//! Command bytes by name, as MySQL's and MariaDB's sources name them
//! (`enum_server_command`), for `by_command` counts and the logs' words.

/// The `COM_*` name of a command byte; `COM_0x..` for one no server defines.
pub fn command_name(command: u8) -> std::borrow::Cow<'static, str> {
    match NAMES.iter().find(|(byte, _)| *byte == command) {
        Some((_, name)) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(format!("COM_0x{command:02X}")),
    }
}

/// The command byte a `COM_*` name stands for.
pub fn command_byte(name: &str) -> Option<u8> {
    NAMES.iter().find(|(_, n)| *n == name).map(|(byte, _)| *byte)
}

const NAMES: &[(u8, &str)] = &[
    (0x00, "COM_SLEEP"),
    (0x01, "COM_QUIT"),
    (0x02, "COM_INIT_DB"),
    (0x03, "COM_QUERY"),
    (0x04, "COM_FIELD_LIST"),
    (0x05, "COM_CREATE_DB"),
    (0x06, "COM_DROP_DB"),
    (0x07, "COM_REFRESH"),
    (0x08, "COM_SHUTDOWN"),
    (0x09, "COM_STATISTICS"),
    (0x0A, "COM_PROCESS_INFO"),
    (0x0B, "COM_CONNECT"),
    (0x0C, "COM_PROCESS_KILL"),
    (0x0D, "COM_DEBUG"),
    (0x0E, "COM_PING"),
    (0x0F, "COM_TIME"),
    (0x10, "COM_DELAYED_INSERT"),
    (0x11, "COM_CHANGE_USER"),
    (0x12, "COM_BINLOG_DUMP"),
    (0x13, "COM_TABLE_DUMP"),
    (0x14, "COM_CONNECT_OUT"),
    (0x15, "COM_REGISTER_SLAVE"),
    (0x16, "COM_STMT_PREPARE"),
    (0x17, "COM_STMT_EXECUTE"),
    (0x18, "COM_STMT_SEND_LONG_DATA"),
    (0x19, "COM_STMT_CLOSE"),
    (0x1A, "COM_STMT_RESET"),
    (0x1B, "COM_SET_OPTION"),
    (0x1C, "COM_STMT_FETCH"),
    (0x1D, "COM_DAEMON"),
    (0x1E, "COM_BINLOG_DUMP_GTID"),
    (0x1F, "COM_RESET_CONNECTION"),
    (0xFA, "COM_STMT_BULK_EXECUTE"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_bytes_agree() {
        for (byte, name) in NAMES {
            assert_eq!(command_name(*byte), *name);
            assert_eq!(command_byte(name), Some(*byte));
        }
        assert_eq!(command_name(0x42), "COM_0x42");
    }
}

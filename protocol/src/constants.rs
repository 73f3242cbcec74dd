//! Numbers fixed by the protocol: capability and status flags, command bytes,
//! column types and flags. Names follow the MySQL/MariaDB documentation.

use core::ops::{BitAnd, BitOr, BitOrAssign, Not};

/// Capability flags, as a 64-bit set: the low 32 bits are the classic
/// MySQL flags, the high 32 bits MariaDB's extended capabilities (sent in the
/// last 4 of the greeting's 10 reserved bytes, and in bytes 19..23 of the
/// handshake response's filler).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// Bit 0: LONG_PASSWORD for MySQL; MariaDB clears it to say "I am MariaDB
    /// and my extended capabilities are in the reserved bytes".
    pub const LONG_PASSWORD: Self = Self(1);
    pub const FOUND_ROWS: Self = Self(1 << 1);
    pub const LONG_FLAG: Self = Self(1 << 2);
    pub const CONNECT_WITH_DB: Self = Self(1 << 3);
    pub const NO_SCHEMA: Self = Self(1 << 4);
    pub const COMPRESS: Self = Self(1 << 5);
    pub const ODBC: Self = Self(1 << 6);
    pub const LOCAL_FILES: Self = Self(1 << 7);
    pub const IGNORE_SPACE: Self = Self(1 << 8);
    pub const PROTOCOL_41: Self = Self(1 << 9);
    pub const INTERACTIVE: Self = Self(1 << 10);
    pub const SSL: Self = Self(1 << 11);
    pub const IGNORE_SIGPIPE: Self = Self(1 << 12);
    pub const TRANSACTIONS: Self = Self(1 << 13);
    pub const RESERVED: Self = Self(1 << 14);
    pub const SECURE_CONNECTION: Self = Self(1 << 15);
    pub const MULTI_STATEMENTS: Self = Self(1 << 16);
    pub const MULTI_RESULTS: Self = Self(1 << 17);
    pub const PS_MULTI_RESULTS: Self = Self(1 << 18);
    pub const PLUGIN_AUTH: Self = Self(1 << 19);
    pub const CONNECT_ATTRS: Self = Self(1 << 20);
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: Self = Self(1 << 21);
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: Self = Self(1 << 22);
    pub const SESSION_TRACK: Self = Self(1 << 23);
    pub const DEPRECATE_EOF: Self = Self(1 << 24);
    pub const OPTIONAL_RESULTSET_METADATA: Self = Self(1 << 25);
    pub const ZSTD_COMPRESSION: Self = Self(1 << 26);
    pub const QUERY_ATTRIBUTES: Self = Self(1 << 27);
    pub const MULTI_FACTOR_AUTH: Self = Self(1 << 28);
    pub const SSL_VERIFY_SERVER_CERT: Self = Self(1 << 30);
    pub const REMEMBER_OPTIONS: Self = Self(1 << 31);

    // MariaDB extended capabilities (high 32 bits).
    pub const MARIADB_CLIENT_PROGRESS: Self = Self(1 << 32);
    pub const MARIADB_CLIENT_COM_MULTI: Self = Self(1 << 33);
    pub const MARIADB_CLIENT_STMT_BULK_OPERATIONS: Self = Self(1 << 34);
    pub const MARIADB_CLIENT_EXTENDED_TYPE_INFO: Self = Self(1 << 35);
    pub const MARIADB_CLIENT_CACHE_METADATA: Self = Self(1 << 36);

    pub const fn empty() -> Self {
        Self(0)
    }
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    /// The classic 32 bits, as sent in the capability fields.
    pub const fn low(self) -> u32 {
        self.0 as u32
    }
    /// MariaDB's extended 32 bits.
    pub const fn mariadb_ext(self) -> u32 {
        (self.0 >> 32) as u32
    }
    pub const fn from_parts(low: u32, mariadb_ext: u32) -> Self {
        Self(low as u64 | (mariadb_ext as u64) << 32)
    }
}

impl BitOr for Capabilities {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}
impl BitOrAssign for Capabilities {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}
impl BitAnd for Capabilities {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}
impl Not for Capabilities {
    type Output = Self;
    fn not(self) -> Self {
        Self(!self.0)
    }
}

/// Server status flags (OK, EOF and greeting packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusFlags(pub u16);

impl StatusFlags {
    pub const IN_TRANS: Self = Self(1);
    pub const AUTOCOMMIT: Self = Self(1 << 1);
    pub const MORE_RESULTS_EXISTS: Self = Self(1 << 3);
    pub const NO_GOOD_INDEX_USED: Self = Self(1 << 4);
    pub const NO_INDEX_USED: Self = Self(1 << 5);
    pub const CURSOR_EXISTS: Self = Self(1 << 6);
    pub const LAST_ROW_SENT: Self = Self(1 << 7);
    pub const DB_DROPPED: Self = Self(1 << 8);
    pub const NO_BACKSLASH_ESCAPES: Self = Self(1 << 9);
    pub const METADATA_CHANGED: Self = Self(1 << 10);
    pub const QUERY_WAS_SLOW: Self = Self(1 << 11);
    pub const PS_OUT_PARAMS: Self = Self(1 << 12);
    pub const IN_TRANS_READONLY: Self = Self(1 << 13);
    pub const SESSION_STATE_CHANGED: Self = Self(1 << 14);

    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// Command bytes: the first byte of every client command packet.
pub mod command {
    pub const COM_SLEEP: u8 = 0x00;
    pub const COM_QUIT: u8 = 0x01;
    pub const COM_INIT_DB: u8 = 0x02;
    pub const COM_QUERY: u8 = 0x03;
    pub const COM_FIELD_LIST: u8 = 0x04;
    pub const COM_CREATE_DB: u8 = 0x05;
    pub const COM_DROP_DB: u8 = 0x06;
    pub const COM_REFRESH: u8 = 0x07;
    pub const COM_SHUTDOWN: u8 = 0x08;
    pub const COM_STATISTICS: u8 = 0x09;
    pub const COM_PROCESS_INFO: u8 = 0x0A;
    /// Server-internal, as are COM_TIME, COM_DELAYED_INSERT, COM_CONNECT_OUT
    /// and COM_DAEMON: no client sends them.
    pub const COM_CONNECT: u8 = 0x0B;
    pub const COM_PROCESS_KILL: u8 = 0x0C;
    pub const COM_DEBUG: u8 = 0x0D;
    pub const COM_PING: u8 = 0x0E;
    pub const COM_TIME: u8 = 0x0F;
    pub const COM_DELAYED_INSERT: u8 = 0x10;
    pub const COM_CHANGE_USER: u8 = 0x11;
    pub const COM_BINLOG_DUMP: u8 = 0x12;
    pub const COM_TABLE_DUMP: u8 = 0x13;
    pub const COM_CONNECT_OUT: u8 = 0x14;
    pub const COM_REGISTER_SLAVE: u8 = 0x15;
    pub const COM_STMT_PREPARE: u8 = 0x16;
    pub const COM_STMT_EXECUTE: u8 = 0x17;
    pub const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const COM_STMT_CLOSE: u8 = 0x19;
    pub const COM_STMT_RESET: u8 = 0x1A;
    pub const COM_SET_OPTION: u8 = 0x1B;
    pub const COM_STMT_FETCH: u8 = 0x1C;
    pub const COM_DAEMON: u8 = 0x1D;
    pub const COM_BINLOG_DUMP_GTID: u8 = 0x1E;
    /// MariaDB only.
    pub const COM_STMT_BULK_EXECUTE: u8 = 0xFA;
    pub const COM_RESET_CONNECTION: u8 = 0x1F;
}

/// Column (and parameter) types, `enum_field_types`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
#[non_exhaustive]
pub enum ColumnType {
    Decimal = 0x00,
    Tiny = 0x01,
    Short = 0x02,
    Long = 0x03,
    Float = 0x04,
    Double = 0x05,
    Null = 0x06,
    Timestamp = 0x07,
    LongLong = 0x08,
    Int24 = 0x09,
    Date = 0x0A,
    Time = 0x0B,
    DateTime = 0x0C,
    Year = 0x0D,
    NewDate = 0x0E,
    VarChar = 0x0F,
    Bit = 0x10,
    Timestamp2 = 0x11,
    DateTime2 = 0x12,
    Time2 = 0x13,
    TypedArray = 0x14,
    Vector = 0xF2,
    Json = 0xF5,
    NewDecimal = 0xF6,
    Enum = 0xF7,
    Set = 0xF8,
    TinyBlob = 0xF9,
    MediumBlob = 0xFA,
    LongBlob = 0xFB,
    Blob = 0xFC,
    VarString = 0xFD,
    String = 0xFE,
    Geometry = 0xFF,
}

impl ColumnType {
    /// The type for a byte on the wire, or `None` for a byte no server sends.
    pub const fn from_u8(b: u8) -> Option<Self> {
        use ColumnType::*;
        Some(match b {
            0x00 => Decimal,
            0x01 => Tiny,
            0x02 => Short,
            0x03 => Long,
            0x04 => Float,
            0x05 => Double,
            0x06 => Null,
            0x07 => Timestamp,
            0x08 => LongLong,
            0x09 => Int24,
            0x0A => Date,
            0x0B => Time,
            0x0C => DateTime,
            0x0D => Year,
            0x0E => NewDate,
            0x0F => VarChar,
            0x10 => Bit,
            0x11 => Timestamp2,
            0x12 => DateTime2,
            0x13 => Time2,
            0x14 => TypedArray,
            0xF2 => Vector,
            0xF5 => Json,
            0xF6 => NewDecimal,
            0xF7 => Enum,
            0xF8 => Set,
            0xF9 => TinyBlob,
            0xFA => MediumBlob,
            0xFB => LongBlob,
            0xFC => Blob,
            0xFD => VarString,
            0xFE => String,
            0xFF => Geometry,
            _ => return None,
        })
    }
}

/// Column definition flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ColumnFlags(pub u16);

impl ColumnFlags {
    pub const NOT_NULL: Self = Self(1);
    pub const PRI_KEY: Self = Self(1 << 1);
    pub const UNIQUE_KEY: Self = Self(1 << 2);
    pub const MULTIPLE_KEY: Self = Self(1 << 3);
    pub const BLOB: Self = Self(1 << 4);
    pub const UNSIGNED: Self = Self(1 << 5);
    pub const ZEROFILL: Self = Self(1 << 6);
    pub const BINARY: Self = Self(1 << 7);
    pub const ENUM: Self = Self(1 << 8);
    pub const AUTO_INCREMENT: Self = Self(1 << 9);
    pub const TIMESTAMP: Self = Self(1 << 10);
    pub const SET: Self = Self(1 << 11);
    pub const NO_DEFAULT_VALUE: Self = Self(1 << 12);
    pub const ON_UPDATE_NOW: Self = Self(1 << 13);
    pub const NUM: Self = Self(1 << 15);

    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// utf8mb4_general_ci: understood by MySQL 5.5+ and every MariaDB.
pub const CHARSET_UTF8MB4_GENERAL_CI: u8 = 45;
/// Binary collation, used for binary parameter values.
pub const CHARSET_BINARY: u8 = 63;

/// The default max packet size a client announces (and enforces on receive).
pub const DEFAULT_MAX_PACKET_SIZE: u32 = 64 * 1024 * 1024;

/// The client-side error numbers libmysqlclient reports for a connection
/// it lost (errmsg.h), which a client reports the same way so that a
/// script or an error list can name them.
pub mod client_error {
    /// CR_SERVER_GONE_ERROR: a command could not be sent ("MySQL server
    /// has gone away").
    pub const CR_SERVER_GONE_ERROR: u16 = 2006;
    /// CR_TCP_CONNECTION: the TCP connection broke.
    pub const CR_TCP_CONNECTION: u16 = 2011;
    /// CR_SERVER_LOST: the answer could not be read ("Lost connection to
    /// MySQL server during query").
    pub const CR_SERVER_LOST: u16 = 2013;
    /// CR_SERVER_LOST_EXTENDED: the same, with the system error.
    pub const CR_SERVER_LOST_EXTENDED: u16 = 2055;

    /// Whether `code` says the connection was lost: the errors after which
    /// sysbench's driver opens the connection again, when they are ignored
    /// (drv_mysql.c, `check_error`).
    pub fn is_lost_connection(code: u16) -> bool {
        matches!(code, CR_SERVER_GONE_ERROR | CR_TCP_CONNECTION | CR_SERVER_LOST | CR_SERVER_LOST_EXTENDED)
    }
}

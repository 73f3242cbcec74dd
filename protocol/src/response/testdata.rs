//! What the MariaDB 10.11 captures in `testdata/` (see capture.py) were
//! recorded with, for the tests here, the codec benchmark and the fuzz
//! targets, which replay them.

use crate::Capabilities;

/// The capabilities the captures negotiated, without DEPRECATE_EOF (the
/// `*_eof.bin` files; the `*_deof.bin` ones add it).
pub const CAPTURE_CAPABILITIES: Capabilities = Capabilities(
    Capabilities::LONG_FLAG.0
        | Capabilities::CONNECT_WITH_DB.0
        | Capabilities::LOCAL_FILES.0
        | Capabilities::PROTOCOL_41.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::SECURE_CONNECTION.0
        | Capabilities::MULTI_STATEMENTS.0
        | Capabilities::MULTI_RESULTS.0
        | Capabilities::PS_MULTI_RESULTS.0
        | Capabilities::PLUGIN_AUTH.0,
);

//! The initial handshake, the handshake response and the SSL request.

//! The client handshake fed arbitrary server bytes, and the RSA key parser.
//!
//! Input: a config byte (password, secure transport, TLS mode, known server
//! key or leave to fetch it, DEPRECATE_EOF, database, connect attributes),
//! two split points, then the server's bytes. The handshake runs twice from
//! the same state and rng seed: all bytes at once, and delivered in three
//! chunks through a buffer the way a driver reads a socket. Both runs must
//! send the same bytes and end the same way.
//!
//! The same server bytes (after the parameters) also go to
//! rsa_key::parse_public_key and, when they parse, encrypt_password.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::auth::rsa_key;
use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, TlsMode};
use wirebench_protocol::{CodecError, UsageError};
use wirebench_protocol_fuzz::{FuzzRng, Input, TEST_PUBLIC_KEY};

fn config(bits: u8) -> HandshakeConfig {
    let password: &[u8] = if bits & 1 != 0 { b"" } else { b"sbtest" };
    let mut c = HandshakeConfig::new("sbtest", password);
    c.secure_transport = bits & 2 != 0;
    c.tls = match (bits >> 2) & 3 {
        1 => TlsMode::Preferred,
        2 => TlsMode::Required,
        _ => TlsMode::Disabled,
    };
    // A known key, or leave to fetch one: either way the RSA path is
    // reached (refusing to fetch is a one-line check).
    if bits & 16 != 0 {
        c.server_public_key = Some(TEST_PUBLIC_KEY.as_bytes().to_vec());
    } else {
        c.get_server_public_key = true;
    }
    c.deprecate_eof = bits & 32 != 0;
    if bits & 64 != 0 {
        c.database = Some("sbtest".into());
    }
    if bits & 128 != 0 {
        c.connect_attrs = vec![("_client_name".into(), "wirebench".into())];
    }
    c
}

#[derive(Debug, PartialEq)]
struct Run {
    /// Every step the handshake reported, in order.
    steps: Vec<HandshakeStep>,
    /// What the client sent.
    sent: Vec<u8>,
    /// Server bytes used; not compared after an error, which ends the
    /// handshake without saying how much of that call's input it had used.
    consumed: usize,
    error: Option<CodecError>,
}

impl Run {
    fn fail(mut self, e: CodecError) -> Run {
        self.consumed = 0;
        self.error = Some(e);
        self
    }
}

/// Runs the handshake over `bytes`, which arrive up to each of `ends` in turn.
fn run(config: &HandshakeConfig, bytes: &[u8], ends: &[usize]) -> Run {
    let mut hs = ClientHandshake::new(config.clone());
    let mut rng = FuzzRng(7);
    let mut r = Run { steps: Vec::new(), sent: Vec::new(), consumed: 0, error: None };
    for &end in ends.iter().chain([&bytes.len()]) {
        loop {
            let available = &bytes[r.consumed..end.max(r.consumed)];
            let (used, step) = match hs.advance(available, &mut r.sent, &mut rng) {
                Ok(x) => x,
                Err(e) => return r.fail(e),
            };
            assert!(used <= available.len());
            r.consumed += used;
            match step {
                HandshakeStep::NeedMore => break,
                HandshakeStep::StartTls => {
                    r.steps.push(step);
                    if let Err(e) = hs.tls_established(&mut r.sent, &mut rng) {
                        return r.fail(e);
                    }
                }
                HandshakeStep::Done(_) | HandshakeStep::ServerError(_) => {
                    r.steps.push(step);
                    // Finished: more bytes are a misuse, never a panic.
                    assert!(matches!(
                        hs.advance(&bytes[r.consumed..], &mut Vec::new(), &mut rng),
                        Err(CodecError::Usage(UsageError::OutOfOrder { .. }))
                    ));
                    return r;
                }
                other => panic!("a handshake step this target does not know how to take: {other:?}"),
            }
        }
    }
    r
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let config = config(input.u8());
    let cuts = (input.u16(), input.u16());
    let bytes = input.rest();

    let whole = run(&config, bytes, &[]);
    let (a, b) = (usize::from(cuts.0) % (bytes.len() + 1), usize::from(cuts.1) % (bytes.len() + 1));
    let split = run(&config, bytes, &[a.min(b), a.max(b)]);
    assert_eq!(whole, split, "whole and chunked delivery disagree (cuts at {a}, {b})");

    if let Ok(key) = rsa_key::parse_public_key(bytes) {
        let _ = key;
        let _ = rsa_key::encrypt_password(b"sbtest", b"abcdefghij0123456789", bytes, &mut FuzzRng(1));
    }
});

//! The login state machine driven packet by packet by an arbitrary server,
//! under every configuration that changes what the client sends or accepts.
//!
//! Input: two config bytes (see `config`), then the server's packets, each a
//! u16 length and up to that many payload bytes. The target frames every
//! payload with the sequence id the client expects next, so each step of the
//! exchange (greeting, TLS, auth switch, AuthMoreData, OK or ERR) is one
//! packet away; `auth` covers bad framing and sequence ids on raw bytes.
//!
//! Checked at every step:
//! - the client writes whole packets with consecutive sequence ids;
//! - a complete packet is used whole, and a step that ends the exchange
//!   (StartTls, Done, ServerError) uses only its own packet when more bytes
//!   follow in the same read: those are TLS's, or the compressed protocol's;
//! - the password never leaves in clear unless over TLS or a secure transport;
//! - a login is done with SSL negotiated exactly when TLS was started (always
//!   under `TlsMode::Required`), with capabilities both sides have, and with
//!   a key fetched from the server only when the configuration allows it;
//! - once done, refused or failed, the machine takes no more input.
//!
//! After a login with COMPRESS, the bytes that follow go to a compressed
//! stream decoder, as the client hands them over.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebench_protocol::compress::{CompressedStream, Inflater};
use wirebench_protocol::constants::DEFAULT_MAX_PACKET_SIZE;
use wirebench_protocol::framing::{decode_packet, encode_packet};
use wirebench_protocol::handshake::{ClientHandshake, HandshakeConfig, HandshakeStep, LoginInfo, TlsMode};
use wirebench_protocol::{Capabilities, CodecError, UsageError};
use wirebench_protocol_fuzz::{FuzzRng, Input, TEST_PUBLIC_KEY};

/// Distinct from the user and database names, so finding it in the client's
/// bytes means the password itself went out.
const PASSWORD: &[u8] = b"login-fuzz-password";

/// The default, one between the MySQL 8 (74 bytes) and MariaDB (100 bytes)
/// greetings, one below an RSA key packet, and no limit.
const MAX_PACKET_SIZES: [u32; 4] = [DEFAULT_MAX_PACKET_SIZE, 80, 200, u32::MAX];

/// First byte: 1 empty password, 2 secure transport, 4/8 TLS preferred/
/// required, 16/32 get the server's key / a known key (neither: full
/// authentication over plain TCP must be refused), 64 DEPRECATE_EOF, 128
/// database. Second byte: 1 connect attributes, 2 COMPRESS, 4 MariaDB
/// extended metadata, 8 SESSION_TRACK, bits 4-5 the max packet size.
fn config(a: u8, b: u8) -> HandshakeConfig {
    let password: &[u8] = if a & 1 != 0 { b"" } else { PASSWORD };
    let mut c = HandshakeConfig::new("sbtest", password);
    c.secure_transport = a & 2 != 0;
    c.tls = match (a >> 2) & 3 {
        1 => TlsMode::Preferred,
        2 => TlsMode::Required,
        _ => TlsMode::Disabled,
    };
    c.get_server_public_key = a & 16 != 0;
    if a & 32 != 0 {
        c.server_public_key = Some(TEST_PUBLIC_KEY.as_bytes().to_vec());
    }
    c.deprecate_eof = a & 64 != 0;
    if a & 128 != 0 {
        c.database = Some("sbtest".into());
    }
    if b & 1 != 0 {
        c.connect_attrs = vec![("_client_name".into(), "wirebench".into())];
    }
    for (bit, caps) in [
        (2, Capabilities::COMPRESS),
        (4, Capabilities::MARIADB_CLIENT_EXTENDED_TYPE_INFO | Capabilities::MARIADB_CLIENT_CACHE_METADATA),
        (8, Capabilities::SESSION_TRACK),
    ] {
        if b & bit != 0 {
            c.extra_capabilities |= caps;
        }
    }
    c.max_packet_size = MAX_PACKET_SIZES[usize::from(b >> 4) & 3];
    c
}

/// Checks what the client wrote: whole packets from sequence id `seq` on,
/// and no password in clear on an insecure transport. Returns the id the
/// server's next packet must carry.
fn check_sent(out: &[u8], mut seq: u8, secure: bool) -> u8 {
    let mut at = 0;
    while at < out.len() {
        let frame = decode_packet(&out[at..], seq, usize::MAX)
            .unwrap_or_else(|e| panic!("the client wrote a bad packet at {at}: {e:?}"))
            .unwrap_or_else(|| panic!("the client wrote part of a packet at {at}"));
        at += frame.consumed;
        seq = frame.next_seq;
    }
    if !secure {
        assert!(!out.windows(PASSWORD.len()).any(|w| w == PASSWORD), "the password went out in clear");
    }
    seq
}

fn check_login(login: &LoginInfo, config: &HandshakeConfig, tls: bool) {
    assert!(!(config.tls == TlsMode::Required && !tls), "logged in without the TLS that was required");
    assert_eq!(login.capabilities.contains(Capabilities::SSL), tls, "SSL negotiated iff TLS was started");
    assert!(login.server_capabilities.contains(login.capabilities), "a capability the server did not offer");
    if login.capabilities.contains(Capabilities::COMPRESS) {
        assert!(config.extra_capabilities.contains(Capabilities::COMPRESS), "compression nobody asked for");
    }
    if login.server_public_key.is_some() {
        assert!(config.get_server_public_key, "used a server key without leave to fetch one");
    }
}

fn assert_finished(hs: &mut ClientHandshake, rng: &mut FuzzRng) {
    assert!(
        matches!(
            hs.advance(&[0, 0, 0, 0], &mut Vec::new(), rng),
            Err(CodecError::Usage(UsageError::OutOfOrder { .. }))
        ),
        "a finished handshake took more input"
    );
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let config = config(input.u8(), input.u8());
    let mut hs = ClientHandshake::new(config.clone());
    let mut rng = FuzzRng(7);
    let mut seq = 0u8;
    let mut tls = false;

    while !input.rest().is_empty() {
        let len = usize::from(input.u16());
        let mut packet = Vec::new();
        let sent_from = encode_packet(&mut packet, seq, input.take(len));
        let following = input.rest();
        let (before, before_rng) = (hs.clone(), rng.clone());

        let mut out = Vec::new();
        let (used, step) = match hs.advance(&packet, &mut out, &mut rng) {
            Ok(progress) => progress,
            Err(_) => return assert_finished(&mut hs, &mut rng),
        };
        assert_eq!(used, packet.len(), "a complete packet is used whole");
        if step != HandshakeStep::NeedMore {
            // The same packet with the rest of the input behind it, in one read.
            let mut read = packet.clone();
            read.extend_from_slice(following);
            let (mut again, mut again_rng, mut again_out) = (before, before_rng, Vec::new());
            let replay = again.advance(&read, &mut again_out, &mut again_rng);
            assert_eq!(replay, Ok((packet.len(), step.clone())), "bytes after the last packet changed the step");
            assert_eq!(again_out, out);
        }
        if step == HandshakeStep::StartTls {
            tls = true;
            if hs.tls_established(&mut out, &mut rng).is_err() {
                return assert_finished(&mut hs, &mut rng);
            }
        }
        seq = check_sent(&out, sent_from, tls || config.secure_transport);

        match step {
            HandshakeStep::NeedMore | HandshakeStep::StartTls => {}
            HandshakeStep::Done(login) => {
                check_login(&login, &config, tls);
                assert_finished(&mut hs, &mut rng);
                if login.capabilities.contains(Capabilities::COMPRESS) {
                    let _ = CompressedStream::new().decode(following, &mut Vec::new(), &mut Inflater::new());
                }
                return;
            }
            HandshakeStep::ServerError(_) => return assert_finished(&mut hs, &mut rng),
            other => panic!("a handshake step this target does not know how to take: {other:?}"),
        }
    }
});

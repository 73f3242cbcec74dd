//! LOAD DATA LOCAL INFILE, the client's side of the "LOCAL INFILE Request"
//! exchange (MySQL's protocol documentation, COM_QUERY Response):
//!
//! ```text
//! client: COM_QUERY "LOAD DATA LOCAL INFILE 'name' INTO TABLE ..."  seq 0
//! server: 0xFB, then the file name to the end of the payload        seq 1
//! client: the file's bytes, in packets of any size                  seq 2, 3, ...
//! client: an empty packet: the end of the file                      seq n
//! server: OK or ERR                                                 seq n+1
//! ```
//!
//! The server names the file, and a client that sends whatever file it is
//! asked for lets a hostile server read the client's disk. So a request is
//! honoured only when it names exactly the file the client's own statement
//! named ([`accept_local_infile`]); any other is refused with the empty
//! packet alone. Only a connection that negotiated CLIENT_LOCAL_FILES may
//! send the statement at all: servers refuse it otherwise.

use crate::error::ProtocolError;
use crate::framing::{encode_packet, MAX_FRAGMENT};

/// The first byte of a LOCAL INFILE request, where a column count would be.
pub const LOCAL_INFILE_HEADER: u8 = 0xFB;

/// The file name a LOCAL INFILE request asks for, or `None` when `payload`
/// is not one.
pub fn local_infile_request(payload: &[u8]) -> Option<&[u8]> {
    match payload.split_first() {
        Some((&LOCAL_INFILE_HEADER, name)) => Some(name),
        _ => None,
    }
}

/// Whether the request in `payload` may be answered with data: it must ask
/// for exactly `sent`, the name in the statement this client sent. Anything
/// else is [`ProtocolError::LocalInfileRefused`], naming what was asked.
pub fn accept_local_infile(payload: &[u8], sent: &[u8]) -> Result<(), ProtocolError> {
    match local_infile_request(payload) {
        Some(name) if name == sent => Ok(()),
        Some(name) => Err(ProtocolError::LocalInfileRefused(String::from_utf8_lossy(name).into_owned())),
        None => Err(ProtocolError::UnexpectedMessage {
            state: "waiting for a LOCAL INFILE request",
            got: "a packet that is not one",
        }),
    }
}

/// Appends `data` as the file's content starting at sequence id `seq` (the
/// request's plus one), in packets of at most `max_payload` bytes (the
/// server's `max_allowed_packet`; never a full 16 MiB fragment, which would
/// read as "continued"), then the empty packet that ends the file. Returns
/// the sequence id of the server's OK or ERR.
pub fn encode_local_infile_data(out: &mut Vec<u8>, mut seq: u8, data: &[u8], max_payload: usize) -> u8 {
    let size = max_payload.clamp(1, MAX_FRAGMENT - 1);
    for chunk in data.chunks(size) {
        seq = encode_packet(out, seq, chunk);
    }
    encode_packet(out, seq, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documentation's example request: `LOAD DATA LOCAL INFILE
    /// '/etc/passwd'` answered with `0c 00 00 01 fb 2f 65 74 63 2f 70 61 73
    /// 73 77 64` (payload: 0xFB, then "/etc/passwd").
    const PASSWD_REQUEST: [u8; 12] = [0xfb, 0x2f, 0x65, 0x74, 0x63, 0x2f, 0x70, 0x61, 0x73, 0x73, 0x77, 0x64];

    #[test]
    fn documented_request_names_its_file() {
        let packet = [[0x0c, 0x00, 0x00, 0x01].as_slice(), &PASSWD_REQUEST].concat();
        let frame = crate::framing::decode_packet(&packet, 1, 1 << 20).unwrap().unwrap();
        assert_eq!(&*frame.payload, PASSWD_REQUEST);
        assert_eq!(local_infile_request(&PASSWD_REQUEST), Some(&b"/etc/passwd"[..]));
        assert_eq!(local_infile_request(&[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]), None, "an OK is not one");
        assert_eq!(local_infile_request(&[]), None);
    }

    #[test]
    fn only_the_file_the_statement_named_is_sent() {
        assert_eq!(accept_local_infile(&PASSWD_REQUEST, b"/etc/passwd"), Ok(()));
        assert_eq!(
            accept_local_infile(&PASSWD_REQUEST, b"memory:sbtest1"),
            Err(ProtocolError::LocalInfileRefused("/etc/passwd".into()))
        );
        // A prefix or an extension of the name is another file.
        assert!(accept_local_infile(&PASSWD_REQUEST, b"/etc/passw").is_err());
        assert!(accept_local_infile(&PASSWD_REQUEST, b"/etc/passwd2").is_err());
        assert!(accept_local_infile(&[0x00], b"/etc/passwd").is_err());
    }

    /// After the request at sequence id 1, the content follows at 2 and the
    /// empty packet at 3, as the documentation's exchange goes; the
    /// server's OK then comes at 4.
    #[test]
    fn documented_transfer_is_the_data_then_an_empty_packet() {
        let mut out = Vec::new();
        let next = encode_local_infile_data(&mut out, 2, b"1\tabc\n", 1 << 20);
        assert_eq!(next, 4);
        assert_eq!(out, [0x06, 0x00, 0x00, 0x02, b'1', b'\t', b'a', b'b', b'c', b'\n', 0x00, 0x00, 0x00, 0x03]);
    }

    #[test]
    fn data_is_cut_to_the_servers_packet_size() {
        let mut out = vec![0xAA];
        let next = encode_local_infile_data(&mut out, 2, b"abcdefg", 3);
        assert_eq!(next, 6);
        assert_eq!(
            out,
            [
                0xAA, 0x03, 0, 0, 0x02, b'a', b'b', b'c', 0x03, 0, 0, 0x03, b'd', b'e', b'f', 0x01, 0, 0, 0x04, b'g',
                0, 0, 0, 0x05
            ]
        );
        let mut empty = Vec::new();
        assert_eq!(encode_local_infile_data(&mut empty, 2, b"", 3), 3, "an empty file is the end packet alone");
        assert_eq!(empty, [0, 0, 0, 0x02]);
    }

    #[test]
    fn no_packet_reaches_a_full_fragment() {
        let data = vec![b'x'; MAX_FRAGMENT + 10];
        let mut out = Vec::new();
        let next = encode_local_infile_data(&mut out, 2, &data, usize::MAX);
        assert_eq!(next, 5, "two data packets and the end");
        assert_eq!(&out[..4], &[0xFE, 0xFF, 0xFF, 0x02]);
        let second = 4 + MAX_FRAGMENT - 1;
        assert_eq!(&out[second..second + 4], &[11, 0, 0, 0x03]);
        assert_eq!(&out[out.len() - 4..], &[0, 0, 0, 0x04]);
    }
}

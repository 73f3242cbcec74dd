//! A captured frame down to its TCP segment: the link layer (Ethernet with
//! VLAN tags, Linux cooked v1 and v2, BSD and OpenBSD loopback, raw IP),
//! IPv4 or IPv6 (extension headers stepped over), TCP.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_RST: u8 = 0x04;
pub const TCP_ACK: u8 = 0x10;

/// The link types this reader knows (LINKTYPE_* numbers).
pub const LINK_TYPES: &str =
    "Ethernet (1), Linux cooked (113, 276), BSD loopback (0, 108) and raw IP (12, 14, 101, 228, 229)";

/// One TCP segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSegment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload: &'a [u8],
}

impl TcpSegment<'_> {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// What a frame turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded<'a> {
    Tcp(TcpSegment<'a>),
    /// IP, but not TCP; or not IP.
    Other,
    /// An IP fragment: not reassembled (TCP segments are not fragmented
    /// on any path a capture of a database is taken on).
    Fragment,
    UnsupportedLink(u32),
    /// Too short, or a header that contradicts itself.
    Malformed(&'static str),
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]))
}

fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes([*data.get(at)?, *data.get(at + 1)?, *data.get(at + 2)?, *data.get(at + 3)?]))
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;

/// Decodes a frame of `link_type`.
pub fn decode_frame(link_type: u32, data: &[u8]) -> Decoded<'_> {
    let ip = match link_type {
        1 => ethernet(data),
        113 => be16(data, 14).map(|ethertype| (ethertype, data.get(16..).unwrap_or_default())),
        276 => be16(data, 0).map(|ethertype| (ethertype, data.get(20..).unwrap_or_default())),
        0 | 108 => loopback(data, link_type == 108),
        12 | 14 | 101 => raw_ip(data),
        228 => Some((ETHERTYPE_IPV4, data)),
        229 => Some((ETHERTYPE_IPV6, data)),
        other => return Decoded::UnsupportedLink(other),
    };
    match ip {
        Some((ETHERTYPE_IPV4, packet)) => ipv4(packet),
        Some((ETHERTYPE_IPV6, packet)) => ipv6(packet),
        Some(_) => Decoded::Other,
        None => Decoded::Malformed("a frame shorter than its link header"),
    }
}

fn ethernet(data: &[u8]) -> Option<(u16, &[u8])> {
    let mut at = 12;
    let mut ethertype = be16(data, at)?;
    // 802.1Q and 802.1ad tags, stacked.
    while matches!(ethertype, 0x8100 | 0x88A8 | 0x9100) {
        at += 4;
        ethertype = be16(data, at)?;
    }
    Some((ethertype, data.get(at + 2..)?))
}

/// BSD loopback: the address family in 4 bytes, in the capturing host's
/// byte order (LINKTYPE_NULL) or big-endian (LINKTYPE_LOOP).
fn loopback(data: &[u8], big_endian: bool) -> Option<(u16, &[u8])> {
    let raw = [*data.first()?, *data.get(1)?, *data.get(2)?, *data.get(3)?];
    let family =
        if big_endian || u32::from_le_bytes(raw) > 0xFFFF { u32::from_be_bytes(raw) } else { u32::from_le_bytes(raw) };
    let ethertype = match family {
        2 => ETHERTYPE_IPV4,
        // AF_INET6 is 24 on NetBSD and OpenBSD, 28 on FreeBSD, 30 on macOS.
        24 | 28 | 30 => ETHERTYPE_IPV6,
        _ => 0,
    };
    Some((ethertype, data.get(4..)?))
}

fn raw_ip(data: &[u8]) -> Option<(u16, &[u8])> {
    match data.first()? >> 4 {
        4 => Some((ETHERTYPE_IPV4, data)),
        6 => Some((ETHERTYPE_IPV6, data)),
        _ => Some((0, data)),
    }
}

fn ipv4(packet: &[u8]) -> Decoded<'_> {
    let Some(&first) = packet.first() else { return Decoded::Malformed("an empty IPv4 packet") };
    let header = usize::from(first & 0x0F) * 4;
    let (Some(total), Some(fragment), Some(&protocol)) = (be16(packet, 2), be16(packet, 6), packet.get(9)) else {
        return Decoded::Malformed("an IPv4 header cut short");
    };
    if first >> 4 != 4 || header < 20 {
        return Decoded::Malformed("an IPv4 header with a bad version or length");
    }
    // More fragments, or a fragment offset.
    if fragment & 0x3FFF != 0 {
        return Decoded::Fragment;
    }
    if protocol != 6 {
        return Decoded::Other;
    }
    // TCP segmentation offload captures carry 0 as the total length.
    let end = if total == 0 { packet.len() } else { usize::from(total).min(packet.len()) };
    let (Some(src), Some(dst)) = (be32(packet, 12), be32(packet, 16)) else {
        return Decoded::Malformed("an IPv4 header cut short");
    };
    let Some(segment) = packet.get(header..end) else {
        return Decoded::Malformed("an IPv4 packet shorter than its header");
    };
    tcp(IpAddr::V4(Ipv4Addr::from(src)), IpAddr::V4(Ipv4Addr::from(dst)), segment)
}

fn ipv6(packet: &[u8]) -> Decoded<'_> {
    let (Some(payload_len), Some(&first_next)) = (be16(packet, 4), packet.get(6)) else {
        return Decoded::Malformed("an IPv6 header cut short");
    };
    let address = |at: usize| -> Option<Ipv6Addr> {
        let bytes: [u8; 16] = packet.get(at..at + 16)?.try_into().ok()?;
        Some(Ipv6Addr::from(bytes))
    };
    let (Some(src), Some(dst)) = (address(8), address(24)) else {
        return Decoded::Malformed("an IPv6 header cut short");
    };
    let end = if payload_len == 0 { packet.len() } else { (40 + usize::from(payload_len)).min(packet.len()) };
    let mut next = first_next;
    let mut at = 40;
    loop {
        match next {
            6 => break,
            44 => return Decoded::Fragment,
            // Hop-by-hop, routing, destination options: (len + 1) * 8 bytes.
            0 | 43 | 60 => {
                let (Some(&after), Some(&len)) = (packet.get(at), packet.get(at + 1)) else {
                    return Decoded::Malformed("an IPv6 extension header cut short");
                };
                next = after;
                at += (usize::from(len) + 1) * 8;
            }
            // Authentication header: (len + 2) * 4 bytes.
            51 => {
                let (Some(&after), Some(&len)) = (packet.get(at), packet.get(at + 1)) else {
                    return Decoded::Malformed("an IPv6 extension header cut short");
                };
                next = after;
                at += (usize::from(len) + 2) * 4;
            }
            _ => return Decoded::Other,
        }
    }
    let Some(segment) = packet.get(at..end) else {
        return Decoded::Malformed("an IPv6 packet shorter than its headers");
    };
    tcp(IpAddr::V6(src), IpAddr::V6(dst), segment)
}

fn tcp(src: IpAddr, dst: IpAddr, segment: &[u8]) -> Decoded<'_> {
    let (Some(src_port), Some(dst_port), Some(seq), Some(ack), Some(&offset), Some(&flags)) =
        (be16(segment, 0), be16(segment, 2), be32(segment, 4), be32(segment, 8), segment.get(12), segment.get(13))
    else {
        return Decoded::Malformed("a TCP header cut short");
    };
    let header = usize::from(offset >> 4) * 4;
    if header < 20 {
        return Decoded::Malformed("a TCP header with a bad length");
    }
    let Some(payload) = segment.get(header..) else {
        return Decoded::Malformed("a TCP segment shorter than its header");
    };
    Decoded::Tcp(TcpSegment {
        src: SocketAddr::new(src, src_port),
        dst: SocketAddr::new(dst, dst_port),
        seq,
        ack,
        flags,
        payload,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A TCP segment's bytes (no options).
    pub(crate) fn tcp_bytes(src_port: u16, dst_port: u16, seq: u32, ack: u32, flags: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&src_port.to_be_bytes());
        out.extend_from_slice(&dst_port.to_be_bytes());
        out.extend_from_slice(&seq.to_be_bytes());
        out.extend_from_slice(&ack.to_be_bytes());
        out.extend_from_slice(&[0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]);
        out.extend_from_slice(payload);
        out
    }

    pub(crate) fn ipv4_bytes(src: [u8; 4], dst: [u8; 4], tcp: &[u8]) -> Vec<u8> {
        let mut out = vec![0x45, 0];
        out.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        out.extend_from_slice(&src);
        out.extend_from_slice(&dst);
        out.extend_from_slice(tcp);
        out
    }

    pub(crate) fn ethernet_bytes(ip: &[u8], ethertype: u16) -> Vec<u8> {
        let mut out = vec![0u8; 12];
        out.extend_from_slice(&ethertype.to_be_bytes());
        out.extend_from_slice(ip);
        out
    }

    fn ipv6_bytes(next: u8, extension: &[u8], tcp: &[u8]) -> Vec<u8> {
        let mut out = vec![0x60, 0, 0, 0];
        out.extend_from_slice(&((extension.len() + tcp.len()) as u16).to_be_bytes());
        out.extend_from_slice(&[next, 64]);
        out.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        out.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        out.extend_from_slice(extension);
        out.extend_from_slice(tcp);
        out
    }

    fn segment(decoded: Decoded<'_>) -> TcpSegment<'_> {
        match decoded {
            Decoded::Tcp(segment) => segment,
            other => panic!("not TCP: {other:?}"),
        }
    }

    #[test]
    fn every_link_type_reaches_the_segment() {
        let tcp = tcp_bytes(50000, 3306, 7, 9, TCP_ACK, b"hello");
        let ip = ipv4_bytes([127, 0, 0, 1], [127, 0, 0, 2], &tcp);
        let mut vlan = vec![0u8; 12];
        vlan.extend_from_slice(&[0x81, 0x00, 0, 5, 0x08, 0x00]);
        vlan.extend_from_slice(&ip);
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x08, 0x00]);
        sll.extend_from_slice(&ip);
        let mut sll2 = vec![0x08, 0x00];
        sll2.extend_from_slice(&[0; 18]);
        sll2.extend_from_slice(&ip);
        let mut null = 2u32.to_le_bytes().to_vec();
        null.extend_from_slice(&ip);
        let mut null_be = 2u32.to_be_bytes().to_vec();
        null_be.extend_from_slice(&ip);
        let cases: Vec<(u32, Vec<u8>)> = vec![
            (1, ethernet_bytes(&ip, 0x0800)),
            (1, vlan),
            (113, sll),
            (276, sll2),
            (0, null),
            (0, null_be.clone()),
            (108, null_be),
            (101, ip.clone()),
            (228, ip.clone()),
        ];
        for (link, frame) in &cases {
            let s = segment(decode_frame(*link, frame));
            assert_eq!(
                (s.src.to_string().as_str(), s.dst.port(), s.seq, s.ack, s.payload),
                ("127.0.0.1:50000", 3306, 7, 9, &b"hello"[..]),
                "link {link}"
            );
        }
    }

    #[test]
    fn ipv6_with_extension_headers() {
        let tcp = tcp_bytes(50000, 3306, 1, 2, TCP_ACK, b"x");
        let plain = ipv6_bytes(6, &[], &tcp);
        assert_eq!(segment(decode_frame(229, &plain)).payload, b"x");
        // A hop-by-hop header of 8 bytes, then TCP.
        let hop = ipv6_bytes(0, &[6, 0, 0, 0, 0, 0, 0, 0], &tcp);
        let frame = ethernet_bytes(&hop, 0x86DD);
        let s = segment(decode_frame(1, &frame));
        assert_eq!((s.src.to_string().as_str(), s.payload), ("[::1]:50000", &b"x"[..]));
        assert_eq!(decode_frame(229, &ipv6_bytes(44, &[6, 0, 0, 1, 0, 0, 0, 0], &tcp)), Decoded::Fragment);
    }

    #[test]
    fn the_rest_is_named_not_misread() {
        let tcp = tcp_bytes(1, 2, 0, 0, 0, b"");
        let mut fragment = ipv4_bytes([1, 1, 1, 1], [2, 2, 2, 2], &tcp);
        fragment[6] = 0x20;
        assert_eq!(decode_frame(228, &fragment), Decoded::Fragment);
        let mut udp = ipv4_bytes([1, 1, 1, 1], [2, 2, 2, 2], &tcp);
        udp[9] = 17;
        assert_eq!(decode_frame(228, &udp), Decoded::Other);
        assert_eq!(decode_frame(1, &ethernet_bytes(&[0; 30], 0x0806)), Decoded::Other);
        assert_eq!(decode_frame(147, &[0; 40]), Decoded::UnsupportedLink(147));
        for len in 0..60 {
            let frame: Vec<u8> =
                ethernet_bytes(&ipv4_bytes([1; 4], [2; 4], &tcp), 0x0800).into_iter().take(len).collect();
            let _ = decode_frame(1, &frame);
        }
    }
}

//! Turning a planned packet, or one recorded in a reproducer, into the
//! bytes to send on a live connection.

use super::encode_spec::{build_fields, live_value, BuildCtx};
use super::exec::{Outgoing, Phase, Rendered};
use super::fields::LiveSpot;
use super::frame::{frame_payload, PAYLOAD_AT};
use super::spec::{PlannedPacket, Spec};

impl Outgoing for PlannedPacket {
    fn render(&self, index: usize, ctx: &BuildCtx<'_>) -> Rendered {
        // How the server reads it: by what the connection is waiting for.
        let phase = match (&self.spec, ctx.handshake_seq, ctx.auth_reply) {
            (Spec::AuthReply, _, Some(_)) => Phase::AuthReply,
            (Spec::SslRequest, Some(_), _) => Phase::SslRequest,
            (Spec::Login(_), Some(_), _) => Phase::Login,
            _ if index == 0 => Phase::Login,
            _ => Phase::Command,
        };
        let mut fields = build_fields(&self.spec, ctx);
        for edit in &self.edits {
            fields.apply(edit);
        }
        let mut payload = Vec::new();
        let spots = fields.finish(&mut payload);
        let mut bytes = Vec::new();
        // The greeting took sequence id 0: its answer carries 1 (2 after
        // an SSLRequest), an auth reply the next after the server's
        // request; every command starts again from 0.
        let seq = match phase {
            Phase::Login | Phase::SslRequest => ctx.handshake_seq.unwrap_or(1),
            Phase::AuthReply => ctx.auth_reply.map_or(0, |(_, seq)| seq),
            Phase::Command => 0,
        };
        let sent = frame_payload(&payload, seq, &self.frame, &mut bytes);
        let spots = spots
            .into_iter()
            .filter(|spot| spot.range.end <= sent)
            .map(|spot| LiveSpot { range: spot.range.start + PAYLOAD_AT..spot.range.end + PAYLOAD_AT, ..spot })
            .collect();
        Rendered { phase, bytes, spots, wrap: self.wrap.clone() }
    }

    fn is_auth_reply(&self) -> bool {
        self.spec == Spec::AuthReply
    }
}

/// A packet as a reproducer recorded it: its bytes are sent as they are,
/// but for the live values, recomputed for this connection.
impl Outgoing for Rendered {
    fn render(&self, _index: usize, ctx: &BuildCtx<'_>) -> Rendered {
        let mut rendered = self.clone();
        for spot in &self.spots {
            let value = live_value(&spot.live, ctx);
            if let Some(slot) = rendered.bytes.get_mut(spot.range.clone()) {
                if slot.len() == value.len() {
                    slot.copy_from_slice(&value);
                }
            }
        }
        rendered
    }

    fn is_auth_reply(&self) -> bool {
        self.phase == Phase::AuthReply
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::fields::{Edit, FieldEdit, FieldKind, LiveValue};
    use crate::fuzz::spec::{FrameEdit, StmtRef};
    use wirebench_protocol::constants::Capabilities;

    fn ctx<'a>(prepared: &'a [Option<u32>], nonce: &'a [u8]) -> BuildCtx<'a> {
        BuildCtx {
            user: "u",
            password: "p",
            database: "d",
            server_caps: Capabilities(u64::MAX),
            nonce,
            secure: false,
            session_caps: Capabilities(u64::MAX),
            prepared,
            compress: false,
            auth_reply: None,
            handshake_seq: None,
        }
    }

    #[test]
    fn handshake_packets_take_the_sequence_the_connection_is_at() {
        let after_ssl = BuildCtx { handshake_seq: Some(2), ..ctx(&[], b"n") };
        let login = PlannedPacket::new(Spec::Login(crate::fuzz::seeds::client_login())).render(1, &after_ssl);
        assert_eq!((login.phase, login.bytes[3]), (Phase::Login, 2), "a login after an SSLRequest");
        let asked = BuildCtx { auth_reply: Some((b"abcd", 3)), ..ctx(&[], b"n") };
        let reply = PlannedPacket::new(Spec::AuthReply).render(2, &asked);
        assert_eq!(reply.bytes, [4, 0, 0, 3, b'a', b'b', b'c', b'd']);
        assert_eq!(reply.spots, vec![LiveSpot { live: LiveValue::AuthReply, range: 4..8 }]);
        let again = BuildCtx { auth_reply: Some((b"wxyz", 5)), ..ctx(&[], b"n") };
        assert_eq!(reply.render(2, &again).bytes, [4, 0, 0, 3, b'w', b'x', b'y', b'z'], "replayed: the live reply");
        let unasked = PlannedPacket::new(Spec::AuthReply).render(2, &ctx(&[], b"n"));
        assert_eq!((unasked.phase, unasked.bytes.as_slice()), (Phase::Command, &[0, 0, 0, 0][..]));
    }

    #[test]
    fn statement_ids_are_live_until_an_edit_sets_them() {
        let mut packet = PlannedPacket::new(Spec::Close(StmtRef::Prepared(0)));
        let r = packet.render(1, &ctx(&[Some(0x0102_0304)], b"n"));
        assert_eq!(r.bytes, [5, 0, 0, 0, 0x19, 4, 3, 2, 1]);
        assert_eq!(r.spots, vec![LiveSpot { live: LiveValue::Statement { prepare: 0 }, range: 5..9 }]);
        // Replayed where the prepare got id 9: the recorded bytes follow.
        assert_eq!(r.render(1, &ctx(&[Some(9)], b"n")).bytes, [5, 0, 0, 0, 0x19, 9, 0, 0, 0]);
        packet.edits.push(FieldEdit { kind: FieldKind::StatementId, nth: 0, edit: Edit::Set(vec![0xFF; 4]) });
        let r = packet.render(1, &ctx(&[Some(9)], b"n"));
        assert!(r.spots.is_empty());
        assert_eq!(r.render(1, &ctx(&[Some(1)], b"n")).bytes[5..], [0xFF; 4]);
    }

    #[test]
    fn the_login_scramble_follows_the_nonce_on_replay() {
        let login = crate::fuzz::spec::LoginSpec {
            deprecate_eof: true,
            with_database: true,
            connect_attrs: Vec::new(),
            charset: 45,
            ..crate::fuzz::seeds::client_login()
        };
        let packet = PlannedPacket::new(Spec::Login(login));
        let first = packet.render(0, &ctx(&[], b"01234567890123456789"));
        assert_eq!(first.phase, Phase::Login);
        assert_eq!(first.bytes[3], 1, "the answer to the greeting is packet 1");
        let again = packet.render(0, &ctx(&[], b"abcdefghijabcdefghij"));
        assert_ne!(first.bytes, again.bytes);
        assert_eq!(first.render(0, &ctx(&[], b"abcdefghijabcdefghij")).bytes, again.bytes);
    }

    #[test]
    fn a_truncated_live_value_is_not_patched() {
        let mut packet = PlannedPacket::new(Spec::Close(StmtRef::Prepared(0)));
        packet.frame.push(FrameEdit::Truncate { keep: 3, fix_length: true });
        let r = packet.render(1, &ctx(&[Some(7)], b"n"));
        assert_eq!(r.bytes, [3, 0, 0, 0, 0x19, 7, 0]);
        assert!(r.spots.is_empty());
    }
}

//! Mutating a session plan, as AFL's havoc stacks mutations: each round
//! picks one of field edits (most often), changes to a message's content,
//! packets inserted, spliced from another session, dropped, repeated or
//! swapped, and, at a lower rate, framing and compressed-packet edits.

use wirebench_protocol::constants::Capabilities;

use super::dictionary::{ATTRIBUTES, OTHER_COMMANDS, TABLES};
use super::edits::edit_for;
use super::encode_spec::{build_fields, BuildCtx};
use super::fields::FieldEdit;
use super::fuzz_rng::FuzzRng;
use super::generate::{pre_auth_packet, random_command};
use super::seeds::{Seeds, LOGIN_PLUGINS};
use super::spec::{FrameEdit, PlannedPacket, SessionPlan, Spec, StmtRef, WrapEdit};
use super::text::mutate_text;
use super::values::{edge_bytes, edge_u16, edge_u32, edge_u8, random_param};

/// Packets a mutated session keeps at most.
const MAX_PACKETS: usize = 64;
/// Edits a packet keeps at most.
const MAX_EDITS: usize = 8;

/// What mutations draw from besides the session itself.
pub struct Pool<'a> {
    pub seeds: &'a Seeds,
    /// Another session to splice packets from.
    pub donor: Option<&'a SessionPlan>,
    pub database: &'a str,
    pub compression: bool,
    /// Pre-auth sessions: packets added are the handshake's (auth
    /// replies, logins) or harmless commands.
    pub pre_auth: bool,
}

/// A mutant of `plan`: one to four stacked mutations (sometimes eight).
pub fn mutate_plan(plan: &SessionPlan, rng: &mut FuzzRng, pool: &Pool<'_>) -> SessionPlan {
    let mut plan = plan.clone();
    if plan.packets.is_empty() {
        plan.packets.push(PlannedPacket::new(Spec::Ping));
    }
    let rounds = if rng.one_in(8) { 8 } else { 1 + rng.below(4) };
    for _ in 0..rounds {
        match rng.below(100) {
            0..=39 => field_mutation(&mut plan, rng, pool),
            40..=62 => spec_mutation(&mut plan, rng, pool),
            63..=79 => packet_mutation(&mut plan, rng, pool),
            80..=89 => frame_mutation(&mut plan, rng),
            90..=93 if pool.compression => wrap_mutation(&mut plan, rng),
            _ => simplify(&mut plan, rng),
        }
    }
    plan.packets.truncate(MAX_PACKETS);
    plan
}

/// The connection the mutators build packets for to see their fields: a
/// server that offers everything.
fn probe_ctx<'a>(pool: &'a Pool<'_>) -> BuildCtx<'a> {
    BuildCtx {
        user: "sbtest",
        password: "sbtest",
        database: pool.database,
        server_caps: Capabilities(u64::MAX) & !Capabilities::COMPRESS & !Capabilities::SSL,
        nonce: b"01234567890123456789",
        secure: false,
        session_caps: Capabilities(u64::MAX) & !Capabilities::COMPRESS & !Capabilities::SSL,
        prepared: &[],
        compress: pool.compression,
        auth_reply: Some((b"01234567890123456789", 3)),
        handshake_seq: Some(1),
    }
}

fn pick_packet<'p>(plan: &'p mut SessionPlan, rng: &mut FuzzRng) -> Option<&'p mut PlannedPacket> {
    let at = rng.below(plan.packets.len());
    plan.packets.get_mut(at)
}

/// An edit of one field of one packet, fitting the field's kind.
fn field_mutation(plan: &mut SessionPlan, rng: &mut FuzzRng, pool: &Pool<'_>) {
    let ctx = probe_ctx(pool);
    let Some(packet) = pick_packet(plan, rng) else { return };
    let mut fields = build_fields(&packet.spec, &ctx);
    for edit in &packet.edits {
        fields.apply(edit);
    }
    let at = rng.below(fields.0.len());
    let Some(field) = fields.0.get(at) else { return };
    let nth = fields.0.iter().take(at).filter(|f| f.kind == field.kind).count() as u16;
    let previous = at.checked_sub(1).and_then(|i| fields.0.get(i));
    let edit = edit_for(field, previous, rng, pool.database);
    if packet.edits.len() >= MAX_EDITS {
        packet.edits.remove(0);
    }
    packet.edits.push(FieldEdit { kind: field.kind, nth, edit });
}

/// A change to one message's content that keeps it well-formed.
fn spec_mutation(plan: &mut SessionPlan, rng: &mut FuzzRng, pool: &Pool<'_>) {
    let extra = &pool.seeds.statements;
    let Some(packet) = pick_packet(plan, rng) else { return };
    match &mut packet.spec {
        Spec::Query(text) | Spec::Prepare(text) => *text = mutate_text(text, rng, extra),
        Spec::Execute { stmt, flags, params } => match rng.below(6) {
            0 => *stmt = other_stmt(rng),
            1 => *flags = edge_u8(rng),
            2 => params.push(random_param(rng)),
            3 => {
                params.pop();
            }
            _ => {
                let at = rng.below(params.len());
                if let Some(p) = params.get_mut(at) {
                    *p = random_param(rng);
                }
            }
        },
        Spec::SendLongData { stmt, param, data } => match rng.below(3) {
            0 => *stmt = other_stmt(rng),
            1 => *param = edge_u16(rng),
            _ => *data = edge_bytes(rng),
        },
        Spec::Close(stmt) | Spec::Reset(stmt) => *stmt = other_stmt(rng),
        Spec::Fetch { stmt, rows } => {
            if rng.one_in(2) {
                *stmt = other_stmt(rng);
            } else {
                *rows = edge_u32(rng);
            }
        }
        Spec::Login(login) => match rng.below(7) {
            0 => login.deprecate_eof = !login.deprecate_eof,
            1 => login.with_database = !login.with_database,
            2 => login.charset = edge_u8(rng),
            3 => {
                login.connect_attrs.pop();
            }
            4 => login.plugin = rng.pick(LOGIN_PLUGINS).map_or(String::new(), |p| (*p).to_owned()),
            5 if pool.pre_auth => login.compress = !login.compress,
            _ => {
                let (k, v) = rng.pick(ATTRIBUTES).copied().unwrap_or(("k", "v"));
                let value = if rng.one_in(4) { "v".repeat(70_000) } else { v.to_owned() };
                login.connect_attrs.push((k.to_owned(), value));
            }
        },
        Spec::ChangeUser { connect_attrs } => connect_attrs.clear(),
        // Its bytes are the plugin's answer: field edits break them.
        Spec::AuthReply => {}
        spec if pool.pre_auth => *spec = pre_auth_packet(rng),
        Spec::SetOption(option) => *option = edge_u16(rng),
        Spec::FieldList { table, wildcard } => {
            *table = rng.pick(TABLES).map_or_else(Vec::new, |t| t.as_bytes().to_vec());
            *wildcard = edge_bytes(rng);
        }
        Spec::Other { command, body } => {
            *command = *rng.pick(OTHER_COMMANDS).unwrap_or(command);
            *body = edge_bytes(rng);
        }
        spec => *spec = random_command(rng, pool.seeds, &[1, 2]),
    }
}

/// A statement id that is probably wrong: another prepare's, or an edge value.
fn other_stmt(rng: &mut FuzzRng) -> StmtRef {
    if rng.one_in(2) {
        StmtRef::Prepared(rng.below(4) as u16)
    } else {
        StmtRef::Literal(edge_u32(rng))
    }
}

/// Packets added, spliced from another session, dropped, repeated or swapped.
fn packet_mutation(plan: &mut SessionPlan, rng: &mut FuzzRng, pool: &Pool<'_>) {
    let len = plan.packets.len();
    let at = 1 + rng.below(len);
    match rng.below(6) {
        0 => {
            let spec = if pool.pre_auth { pre_auth_packet(rng) } else { random_command(rng, pool.seeds, &[1, 2, 3]) };
            plan.packets.insert(at.min(len), PlannedPacket::new(spec));
        }
        1 => {
            let donated = pool.donor.and_then(|d| rng.pick(&d.packets)).cloned();
            if let Some(packet) = donated {
                plan.packets.insert(at.min(len), packet);
            }
        }
        2 if len > 1 => *plan = plan.without_packet(at.min(len - 1)),
        3 => {
            if let Some(packet) = plan.packets.get(at.min(len - 1)).cloned() {
                plan.packets.insert(at.min(len), packet);
            }
        }
        4 if len > 2 => {
            let other = 1 + rng.below(len - 1);
            plan.packets.swap(at.min(len - 1), other);
        }
        _ => plan.packets.truncate(at.max(1)),
    }
}

/// A framing edit: lies in the header, cuts, garbage, doubling, and, once
/// in a long while, a payload past 16 MiB.
fn frame_mutation(plan: &mut SessionPlan, rng: &mut FuzzRng) {
    let Some(packet) = pick_packet(plan, rng) else { return };
    let edit = match rng.below(500) {
        0 => FrameEdit::Huge,
        1..=129 => FrameEdit::Seq([1, 2, 0xFF, 0x7F][rng.below(4)]),
        130..=249 => FrameEdit::Length(match rng.below(4) {
            0 => 0,
            1 => 0xFF_FFFF,
            _ => rng.below(64) as u32,
        }),
        250..=379 => FrameEdit::Truncate { keep: rng.below(16) as u32, fix_length: rng.one_in(2) },
        380..=449 => FrameEdit::Garbage(match rng.below(3) {
            0 => vec![0x01, 0x00, 0x00, 0x00, 0x0E],
            1 => vec![0xFF; 1 + rng.below(8)],
            _ => {
                let n = 1 + rng.below(16);
                rng.bytes(n)
            }
        }),
        _ => FrameEdit::Twice,
    };
    if packet.frame.len() < MAX_EDITS {
        packet.frame.push(edit);
    }
}

/// An edit of the compressed packet carrying a command.
fn wrap_mutation(plan: &mut SessionPlan, rng: &mut FuzzRng) {
    let Some(packet) = pick_packet(plan, rng) else { return };
    let edit = match rng.below(4) {
        0 => WrapEdit::Seq(edge_u8(rng)),
        1 => WrapEdit::PayloadLength(rng.below(64) as u32),
        2 => WrapEdit::PlainLength(if rng.one_in(2) { 0xFF_FFFF } else { rng.below(300) as u32 }),
        _ => WrapEdit::Corrupt(rng.next_u32()),
    };
    if packet.wrap.len() < MAX_EDITS {
        packet.wrap.push(edit);
    }
}

/// Undoes one edit somewhere: mutants close to valid reach deeper states.
fn simplify(plan: &mut SessionPlan, rng: &mut FuzzRng) {
    let Some(packet) = pick_packet(plan, rng) else { return };
    match rng.below(3) {
        0 => {
            packet.edits.pop();
        }
        1 => {
            packet.frame.pop();
        }
        _ => {
            packet.wrap.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::seeds::recorded_seeds;

    #[test]
    fn mutants_keep_the_login_first_most_of_the_time_and_vary() {
        let seeds = recorded_seeds();
        let pool =
            Pool { seeds: &seeds, donor: seeds.plans.first(), database: "sbtest", compression: true, pre_auth: false };
        let mut rng = FuzzRng::new(3, 3);
        let base = &seeds.plans[6];
        let mut distinct = std::collections::HashSet::new();
        let mut framed = 0;
        for _ in 0..500 {
            let m = mutate_plan(base, &mut rng, &pool);
            assert!(!m.packets.is_empty() && m.packets.len() <= MAX_PACKETS);
            framed += m.packets.iter().filter(|p| !p.frame.is_empty()).count();
            distinct.insert(format!("{m:?}"));
        }
        assert!(distinct.len() > 450);
        assert!(framed > 20 && framed < 400, "framing edits at a lower rate: {framed}");
    }
}

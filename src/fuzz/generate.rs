//! Fresh sessions from the protocol's grammar: a login, some prepares,
//! then a random walk over every command, most of them valid, with the
//! statement ids and parameter counts the prepares call for, so that a
//! session reaches the command phase's deeper states.

use wirebench_protocol::command::{count_placeholders, CURSOR_TYPE_READ_ONLY, MULTI_STATEMENTS_OFF};

use super::dictionary::{OTHER_COMMANDS, STATEMENTS, TABLES};
use super::fuzz_rng::FuzzRng;
use super::seeds::{client_login, Seeds, LOGIN_PLUGINS};
use super::spec::{OwnedParam, PlannedPacket, SessionPlan, Spec, StmtRef};
use super::values::{edge_bytes, edge_u16, edge_u32, plain_param, random_param};

/// The MYSQL_VERSION_ID the generators count placeholders for.
const VERSION_ID: u32 = 101_100;

/// A statement to prepare: a seed's, or one of the dictionary's.
fn fuzzed_statement(rng: &mut FuzzRng, seeds: &Seeds) -> Vec<u8> {
    match rng.pick(&seeds.statements) {
        Some(s) if rng.one_in(2) => s.clone(),
        _ => rng.pick(STATEMENTS).map_or_else(Vec::new, |s| s.as_bytes().to_vec()),
    }
}

/// A statement to send as text.
pub fn query(rng: &mut FuzzRng, seeds: &Seeds) -> Vec<u8> {
    match rng.pick(&seeds.queries) {
        Some(q) if rng.one_in(2) => q.clone(),
        _ => rng.pick(STATEMENTS).map_or_else(Vec::new, |s| s.as_bytes().to_vec()),
    }
}

/// A new session.
pub fn fresh_session(rng: &mut FuzzRng, seeds: &Seeds) -> SessionPlan {
    let first = match rng.below(40) {
        0 => Spec::SslRequest,
        1 => random_command(rng, seeds, &[]),
        _ => Spec::Login(client_login()),
    };
    let mut packets = vec![PlannedPacket::new(first)];
    let prepared: Vec<usize> = (0..1 + rng.below(3))
        .map(|_| {
            let sql = fuzzed_statement(rng, seeds);
            let params = count_placeholders(&sql, VERSION_ID);
            packets.push(PlannedPacket::new(Spec::Prepare(sql)));
            params
        })
        .collect();
    for _ in 0..2 + rng.below(11) {
        packets.push(PlannedPacket::new(random_command(rng, seeds, &prepared)));
    }
    if rng.one_in(2) {
        packets.push(PlannedPacket::new(Spec::Quit));
    }
    SessionPlan { packets }
}

/// A new pre-auth session: what answers the greeting (a login mostly, an
/// SSLRequest, bytes that are no login), auth replies, and now and then a
/// command the server must refuse before a login.
pub fn fresh_pre_auth_session(rng: &mut FuzzRng) -> SessionPlan {
    let mut packets = Vec::new();
    if rng.one_in(8) {
        packets.push(PlannedPacket::new(Spec::SslRequest));
    }
    for _ in 0..1 + usize::from(rng.one_in(6)) {
        packets.push(PlannedPacket::new(pre_auth_login(rng)));
    }
    for _ in 0..rng.below(3) {
        packets.push(PlannedPacket::new(Spec::AuthReply));
    }
    if rng.one_in(3) {
        packets.push(PlannedPacket::new(pre_auth_packet(rng)));
    }
    SessionPlan { packets }
}

/// What answers the greeting in a pre-auth session: a login with any
/// plugin and any choices, or bytes that are no login at all.
fn pre_auth_login(rng: &mut FuzzRng) -> Spec {
    if rng.one_in(12) {
        return Spec::Other { command: *rng.pick(OTHER_COMMANDS).unwrap_or(&0), body: edge_bytes(rng) };
    }
    let mut login = client_login();
    login.plugin = rng.pick(LOGIN_PLUGINS).map_or(login.plugin, |p| (*p).to_owned());
    login.with_database = !rng.one_in(3);
    login.compress = rng.one_in(2);
    login.deprecate_eof = !rng.one_in(4);
    if rng.one_in(3) {
        login.connect_attrs.clear();
    }
    Spec::Login(login)
}

/// One packet of a pre-auth session after its first: an auth reply, a
/// login again, an SSLRequest, or a command that needs no login to be
/// answered harmlessly (COM_PING, COM_QUIT, COM_STATISTICS, an unknown one).
pub fn pre_auth_packet(rng: &mut FuzzRng) -> Spec {
    match rng.below(8) {
        0..=2 => Spec::AuthReply,
        3 => pre_auth_login(rng),
        4 => Spec::SslRequest,
        5 => Spec::Ping,
        6 => Spec::Statistics,
        _ => Spec::Other { command: *rng.pick(OTHER_COMMANDS).unwrap_or(&0), body: edge_bytes(rng) },
    }
}

/// A statement of the session: mostly one it prepared.
fn stmt_ref(rng: &mut FuzzRng, prepared: usize) -> StmtRef {
    if prepared == 0 || rng.one_in(10) {
        return StmtRef::Literal(edge_u32(rng));
    }
    StmtRef::Prepared(rng.below(prepared) as u16)
}

/// One command, valid for the session's prepared statements (`prepared`
/// holds each one's parameter count) most of the time.
pub fn random_command(rng: &mut FuzzRng, seeds: &Seeds, prepared: &[usize]) -> Spec {
    let stmt = stmt_ref(rng, prepared.len());
    let params = match stmt {
        StmtRef::Prepared(n) => prepared.get(usize::from(n)).copied().unwrap_or(0),
        StmtRef::Literal(_) => rng.below(4),
    };
    match rng.below(100) {
        0..=29 => execute_spec(rng, stmt, params),
        30..=39 => {
            let param = if rng.one_in(5) { edge_u16(rng) } else { rng.below(params + 1) as u16 };
            Spec::SendLongData { stmt, param, data: edge_bytes(rng) }
        }
        40..=44 => Spec::Fetch { stmt, rows: if rng.one_in(3) { edge_u32(rng) } else { 1 + rng.below(10) as u32 } },
        45..=49 => Spec::Close(stmt),
        50..=54 => Spec::Reset(stmt),
        55..=59 => Spec::Ping,
        60..=74 => Spec::Query(query(rng, seeds)),
        75..=76 => Spec::InitDb,
        77..=78 => Spec::ChangeUser { connect_attrs: client_login().connect_attrs },
        79..=81 => Spec::ResetConnection,
        82..=84 => Spec::SetOption(if rng.one_in(3) { edge_u16(rng) } else { MULTI_STATEMENTS_OFF }),
        85..=87 => Spec::FieldList {
            table: rng.pick(TABLES).map_or_else(Vec::new, |t| t.as_bytes().to_vec()),
            wildcard: if rng.one_in(2) { Vec::new() } else { edge_bytes(rng) },
        },
        88..=89 => Spec::Statistics,
        90..=91 => Spec::Prepare(fuzzed_statement(rng, seeds)),
        _ => Spec::Other { command: *rng.pick(OTHER_COMMANDS).unwrap_or(&0x0F), body: edge_bytes(rng) },
    }
}

/// A COM_STMT_EXECUTE with `params` values, mostly plausible ones.
fn execute_spec(rng: &mut FuzzRng, stmt: StmtRef, params: usize) -> Spec {
    let count = if rng.one_in(8) { rng.below(params + 3) } else { params };
    let values: Vec<OwnedParam> =
        (0..count).map(|_| if rng.one_in(3) { random_param(rng) } else { plain_param(rng) }).collect();
    let flags = if rng.one_in(6) { CURSOR_TYPE_READ_ONLY } else { 0 };
    Spec::Execute { stmt, flags, params: values }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::seeds::recorded_seeds;

    #[test]
    fn fresh_sessions_log_in_prepare_and_use_what_they_prepared() {
        let seeds = recorded_seeds();
        let mut rng = FuzzRng::new(11, 0);
        let mut executes_of_prepared = 0;
        let mut long_data = 0;
        for _ in 0..200 {
            let plan = fresh_session(&mut rng, &seeds);
            assert!(plan.packets.len() >= 3);
            for p in &plan.packets {
                match &p.spec {
                    Spec::Execute { stmt: StmtRef::Prepared(_), .. } => executes_of_prepared += 1,
                    Spec::SendLongData { .. } => long_data += 1,
                    _ => {}
                }
            }
        }
        assert!(executes_of_prepared > 100, "{executes_of_prepared}");
        assert!(long_data > 30, "{long_data}");
    }
}

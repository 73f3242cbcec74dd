//! The seed corpus: real sysbench traffic, recorded from wirebench's own
//! workloads (each test's prepares, two events of executes and
//! transactions, the same events as text with `--db-ps-mode=disable`, and
//! the `prepare` command's CREATE TABLE and INSERT), each as a session
//! that logs in as libmariadb does.

use wirebench_protocol::buf::Reader;
use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};
use wirebench_protocol::constants::command::{COM_PING, COM_QUERY, COM_QUIT, COM_STMT_EXECUTE, COM_STMT_PREPARE};
use wirebench_protocol::constants::CHARSET_UTF8MB4_GENERAL_CI;
use wirebench_protocol::framing::HEADER_LEN;

use super::encode_spec::LOGIN_PLUGIN;
use super::spec::{LoginSpec, OwnedParam, PlannedPacket, SessionPlan, Spec, StmtRef};
use crate::rand::{RandConfig, RandParams, Rng};
use crate::workload::{
    CommandSink, EmulatedStatement, OltpOptions, Script, ScriptContext, StatementSpec, Step, Test, Workload,
};

/// Events recorded per test.
const EVENTS: usize = 2;
/// Commands recorded per test at most (bulk_insert's events are large).
const MAX_COMMANDS: usize = 48;

/// The seeds, and the statement texts the generators draw from.
#[derive(Debug, Clone, Default)]
pub struct Seeds {
    pub plans: Vec<SessionPlan>,
    /// Every statement the tests prepare (with `?` markers).
    pub statements: Vec<Vec<u8>>,
    /// Every statement the tests send as text.
    pub queries: Vec<Vec<u8>>,
}

/// The login libmariadb sends for sysbench, as a spec.
pub fn client_login() -> LoginSpec {
    LoginSpec {
        deprecate_eof: true,
        with_database: true,
        connect_attrs: [
            ("_client_name", "libmariadb"),
            ("_client_version", "3.3.8"),
            ("_os", "Linux"),
            ("_pid", "4242"),
            ("_platform", "x86_64"),
            ("program_name", "sysbench"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect(),
        charset: CHARSET_UTF8MB4_GENERAL_CI,
        plugin: LOGIN_PLUGIN.name().to_owned(),
        compress: false,
    }
}

/// Records the seeds from every test with small tables.
pub fn recorded_seeds() -> Seeds {
    let options = OltpOptions { tables: 1, table_size: 10, threads: 1, ..OltpOptions::default() };
    let mut seeds = Seeds::default();
    for test in Test::ALL {
        let Ok(workload) = test.workload(&options) else { continue };
        let specs = workload.statements();
        seeds.statements.extend(specs.iter().map(|s| s.sql.clone().into_bytes()));
        for emulate in [false, true] {
            let plan = recorded_session(workload.as_ref(), &specs, emulate);
            seeds.queries.extend(plan.packets.iter().filter_map(|p| match &p.spec {
                Spec::Query(sql) => Some(sql.clone()),
                _ => None,
            }));
            seeds.plans.push(plan);
        }
    }
    if let Ok(workload) = Test::OltpReadWrite.workload(&options) {
        let plan = prepare_session(workload.as_ref());
        seeds.queries.extend(plan.packets.iter().filter_map(|p| match &p.spec {
            Spec::Query(sql) => Some(sql.clone()),
            _ => None,
        }));
        seeds.plans.push(plan);
    }
    seeds.statements.sort();
    seeds.statements.dedup();
    seeds.queries.sort();
    seeds.queries.dedup();
    seeds
}

/// The plugins a pre-auth login names: a server whose account uses
/// another switches to it, and that exchange is fuzzed too.
pub const LOGIN_PLUGINS: &[&str] =
    &["mysql_native_password", "caching_sha2_password", "client_ed25519", "mysql_clear_password", "sha256_password"];

/// What comes before the login's answer, as clients send it: libmariadb's
/// login with each plugin, with and without the database, attributes and
/// the compressed protocol; an SSLRequest, then the login in plain text;
/// each followed by an auth reply (used when the server asks for one),
/// then COM_PING and COM_QUIT (what a server must refuse before a login).
pub fn pre_auth_seeds() -> Vec<SessionPlan> {
    let mut plans = Vec::new();
    for (n, plugin) in LOGIN_PLUGINS.iter().enumerate() {
        for variant in 0..4 {
            let mut login = client_login();
            login.plugin = (*plugin).to_owned();
            login.with_database = variant != 1;
            login.compress = variant == 2;
            if variant == 3 {
                login.connect_attrs.clear();
            }
            let mut packets = Vec::new();
            if (n + variant) % 4 == 0 {
                packets.push(PlannedPacket::new(Spec::SslRequest));
            }
            packets.push(PlannedPacket::new(Spec::Login(login)));
            packets.push(PlannedPacket::new(Spec::AuthReply));
            packets.extend([Spec::Ping, Spec::Quit].map(PlannedPacket::new));
            plans.push(SessionPlan { packets });
        }
    }
    plans
}

/// Sessions recorded elsewhere (a capture file's, later) as seeds: each
/// is the payloads of its commands, in order, after its login. The login
/// is the run's own (a recorded one carries another connection's answer
/// to another nonce, which no server takes again); each command becomes
/// the spec that builds it, so that it is mutated field by field (text,
/// prepares, pings), or its command byte and body as they are.
pub fn seeds_from_sessions(sessions: &[Vec<Vec<u8>>]) -> Vec<SessionPlan> {
    sessions
        .iter()
        .map(|commands| {
            let mut packets = vec![PlannedPacket::new(Spec::Login(client_login()))];
            packets.extend(commands.iter().filter_map(|payload| {
                let (&command, body) = payload.split_first()?;
                let spec = match command {
                    COM_QUERY => Spec::Query(body.to_vec()),
                    COM_STMT_PREPARE => Spec::Prepare(body.to_vec()),
                    COM_PING => Spec::Ping,
                    COM_QUIT => Spec::Quit,
                    _ => Spec::Other { command, body: body.to_vec() },
                };
                Some(PlannedPacket::new(spec))
            }));
            SessionPlan { packets }
        })
        .collect()
}

/// sysbench's generator for thread 0 with the default `--rand-*` settings.
fn seed_rng() -> Option<Rng> {
    RandParams::new(&RandConfig::default()).ok().map(|params| Rng::for_thread(1, 0, params))
}

/// A session running `EVENTS` events of a test: prepares, then the events'
/// commands, then closes, then COM_QUIT; `emulate`: the events as text.
fn recorded_session(workload: &dyn Workload, specs: &[StatementSpec], emulate: bool) -> SessionPlan {
    let mut packets = vec![PlannedPacket::new(Spec::Login(client_login()))];
    if !emulate {
        packets.extend(specs.iter().map(|s| PlannedPacket::new(Spec::Prepare(s.sql.clone().into_bytes()))));
    }
    let mut templates: Vec<ExecuteTemplate> =
        specs.iter().enumerate().filter_map(|(i, s)| ExecuteTemplate::new(i as u32, &s.slots).ok()).collect();
    let emulated = EmulatedStatement::all(specs).ok();
    let mut script: Box<dyn Script> = workload.script(ScriptContext { thread: 0, threads: 1 });
    let Some(mut rng) = seed_rng() else { return SessionPlan { packets } };
    let mut events = 0;
    while events < EVENTS && packets.len() < MAX_COMMANDS {
        let mut out = Vec::new();
        let step = {
            let sink = CommandSink::new(&mut templates, &mut out);
            let mut sink = if emulate { sink.emulating(emulated.as_deref()) } else { sink };
            script.next(&mut rng, &mut sink)
        };
        let Ok(step) = step else { break };
        if let Some(packet) = recorded_command(&out, specs) {
            packets.push(packet);
        }
        if step == Step::Last {
            events += 1;
        }
    }
    if !emulate {
        packets.extend((0..specs.len()).map(|i| PlannedPacket::new(Spec::Close(StmtRef::Prepared(i as u16)))));
    }
    packets.push(PlannedPacket::new(Spec::Quit));
    SessionPlan { packets }
}

/// The `prepare` command's first statements: CREATE TABLE, the INSERT of
/// the rows, CREATE INDEX.
fn prepare_session(workload: &dyn Workload) -> SessionPlan {
    let mut packets = vec![PlannedPacket::new(Spec::Login(client_login()))];
    if let Some(rng) = seed_rng() {
        let sql = workload.prepare(ScriptContext { thread: 0, threads: 1 }, rng);
        packets.extend(sql.take(4).map(|s| PlannedPacket::new(Spec::Query(s.into_bytes()))));
    }
    packets.push(PlannedPacket::new(Spec::Quit));
    SessionPlan { packets }
}

/// A command a script wrote, as a spec: text, or an execute of statement
/// `id` (the template's id is its index in `specs`).
fn recorded_command(packet: &[u8], specs: &[StatementSpec]) -> Option<PlannedPacket> {
    let payload = packet.get(HEADER_LEN..)?;
    let spec = match payload.split_first()? {
        (&COM_QUERY, sql) => Spec::Query(sql.to_vec()),
        (&COM_STMT_EXECUTE, body) => {
            let id = u32::from_le_bytes(body.get(..4)?.try_into().ok()?);
            let slots = &specs.get(id as usize)?.slots;
            let params = execute_params(payload, slots)?;
            Spec::Execute { stmt: StmtRef::Prepared(id as u16), flags: 0, params }
        }
        _ => return None,
    };
    Some(PlannedPacket::new(spec))
}

/// The values of a COM_STMT_EXECUTE payload whose parameters are `slots`.
fn execute_params(payload: &[u8], slots: &[ParamSlot]) -> Option<Vec<OwnedParam>> {
    let mut r = Reader::new(payload);
    r.skip(10 + slots.len().div_ceil(8) + 1 + 2 * slots.len(), "head").ok()?;
    let mut params = Vec::with_capacity(slots.len());
    for slot in slots {
        let param = match slot {
            ParamSlot::Int8 => OwnedParam::I8(r.u8("v").ok()? as i8),
            ParamSlot::Int16 => OwnedParam::I16(r.u16("v").ok()? as i16),
            ParamSlot::Int32 => OwnedParam::I32(r.u32("v").ok()? as i32),
            ParamSlot::Int64 => OwnedParam::I64(r.u64("v").ok()? as i64),
            ParamSlot::UInt64 => OwnedParam::U64(r.u64("v").ok()?),
            ParamSlot::Double => OwnedParam::F64(f64::from_bits(r.u64("v").ok()?)),
            ParamSlot::Bytes { .. } => OwnedParam::Bytes(r.lenenc_bytes("v").ok()?.to_vec()),
            _ => return None,
        };
        params.push(param);
    }
    Some(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_gives_seeds_with_its_statements_and_events() {
        let seeds = recorded_seeds();
        assert_eq!(seeds.plans.len(), 2 * Test::ALL.len() + 1);
        assert!(seeds.statements.iter().any(|s| s == b"SELECT c FROM sbtest1 WHERE id=?"));
        assert!(seeds.queries.iter().any(|s| s == b"BEGIN"));
        assert!(seeds.queries.iter().any(|s| s.starts_with(b"CREATE TABLE sbtest1")));
        let point_select = &seeds.plans[2 * Test::ALL.iter().position(|t| *t == Test::OltpPointSelect).unwrap()];
        let executes = point_select.packets.iter().filter(|p| matches!(p.spec, Spec::Execute { .. })).count();
        assert_eq!(executes, EVENTS);
        assert!(matches!(point_select.packets[0].spec, Spec::Login(_)));
        assert!(matches!(point_select.packets.last().unwrap().spec, Spec::Quit));
    }

    #[test]
    fn recorded_sessions_become_plans_with_the_runs_login() {
        let sessions = vec![vec![b"\x03SELECT 1".to_vec(), b"\x16SELECT ?".to_vec(), vec![0x0e], b"\x17\x01".to_vec()]];
        let plans = seeds_from_sessions(&sessions);
        let specs: Vec<&Spec> = plans[0].packets.iter().map(|p| &p.spec).collect();
        assert!(matches!(specs[0], Spec::Login(_)));
        assert_eq!(specs[1], &Spec::Query(b"SELECT 1".to_vec()));
        assert_eq!(specs[2], &Spec::Prepare(b"SELECT ?".to_vec()));
        assert_eq!(specs[3], &Spec::Ping);
        assert_eq!(specs[4], &Spec::Other { command: 0x17, body: vec![1] });
    }
}

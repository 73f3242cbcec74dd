//! `--server-stats` against the test MariaDB: the server's counters over a
//! run of known size are that run's (Com_select its reads, Com_commit its
//! transactions, Questions its statements and the sampler's), the check of
//! Questions fails when a second client runs beside it, the server's CPU
//! time per query is what `/proc` says of the server's process, the plain
//! report and the server are left alone with the option off, the JSON
//! lines keep to docs/result.schema.json, and a run's shards count the one
//! server once.
//!
//! The tests take turns: each reads the server's counters, which a test
//! running beside it would move.

use crate::common::{self, text};

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{rows, Ran, ScratchDir, TestServer};
use serde_json::Value;
use wirebench::client::Connection;

const DB: &str = "sbtest";
const TABLE: &[&str] = &["--tables=1", "--table-size=1000"];

fn succeeded(output: Ran, what: &str) -> Ran {
    assert!(output.succeeded(), "{what}: {output}");
    output
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The server to this test alone, its table prepared afresh (the tests of
/// other files, which take the server between this file's tests, drop and
/// prepare sbtest's tables too), no other client connected.
fn server_to_myself() -> Option<(MutexGuard<'static, ()>, OnlyClient, TestServer)> {
    static TURN: Mutex<()> = Mutex::new(());
    let server = TestServer::find()?;
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let login = server.login_args(DB);
    let table = [&["oltp_point_select"], TABLE].concat();
    let _ = common::run_wirebench(&[login.clone(), strings(&table), strings(&["cleanup"])].concat());
    succeeded(common::run_wirebench(&[login, strings(&table), strings(&["prepare"])].concat()), "prepare");
    Some((turn, only_client(&server), server))
}

/// A connection of the test's that waited until it was the server's only
/// client, and stays open, sending nothing, while the test runs. A client
/// that has left is not gone until the server has read its COM_QUIT, which
/// counts in Questions; on a loaded machine that can fall after the next
/// run's first sample. This connection's own ends after the run.
struct OnlyClient {
    _connection: Connection,
    _runtime: tokio::runtime::Runtime,
}

fn only_client(server: &TestServer) -> OnlyClient {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut connection = runtime.block_on(Connection::connect(&server.options(server.socket()))).unwrap();
    let others = "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                  WHERE ID <> CONNECTION_ID() AND COMMAND <> 'Daemon' AND USER <> 'system user'";
    common::wait_until("the server's other clients to leave", Duration::from_secs(60), || {
        let answer = runtime.block_on(connection.query(others)).unwrap();
        rows(&answer)[0][0].as_deref() == Some("0")
    });
    OnlyClient { _connection: connection, _runtime: runtime }
}

/// The command line of a `test` run over the server's unix socket, with
/// `args` before `run`.
fn run_args(server: &TestServer, test: &str, args: &[&str]) -> Vec<String> {
    let socket = server.socket.as_ref().expect("WIREBENCH_TEST_SOCKET");
    let login = [
        format!("--mysql-socket={}", socket.display()),
        "--mysql-user=sbtest".to_owned(),
        "--mysql-password=sbtest".to_owned(),
        format!("--mysql-db={DB}"),
    ];
    [login.to_vec(), strings(&[test]), strings(TABLE), strings(args), strings(&["run"])].concat()
}

fn run(server: &TestServer, test: &str, args: &[&str]) -> Ran {
    common::run_wirebench(&run_args(server, test, args))
}

/// Every line of `stdout` as JSON, each checked against the schema.
fn schema_checked(stdout: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut lines = Vec::new();
    for (n, line) in stdout.lines().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}: {line}", n + 1));
        let errors: Vec<String> =
            validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "line {} breaks the schema: {errors:?}\n{line}", n + 1);
        lines.push(value);
    }
    lines
}

/// The final line, which must have the server's figures.
fn final_of(lines: &[Value]) -> &Value {
    let result = lines.iter().rev().find(|l| l["type"] == "final").expect("a final line");
    assert!(!result["server"].is_null(), "no server figures: {result}");
    result
}

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or_else(|| panic!("{pointer}: {value}"))
}

fn f64_at(value: &Value, pointer: &str) -> f64 {
    value.pointer(pointer).and_then(Value::as_f64).unwrap_or_else(|| panic!("{pointer}: {value}"))
}

/// The server's process, through its socket.
fn server_pid(server: &TestServer) -> u32 {
    let socket = UnixStream::connect(server.socket.as_ref().expect("WIREBENCH_TEST_SOCKET")).unwrap();
    wirebench::client::unix_peer_pid(&socket).expect("the server's pid through its socket")
}

/// A process's CPU time so far (user and system), µs, read here apart
/// from wirebench's code.
fn cpu_us(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, fields) = stat.rsplit_once(')').unwrap();
    let ticks: Vec<u64> = fields.split_whitespace().skip(11).take(2).map(|f| f.parse().unwrap()).collect();
    (ticks[0] + ticks[1]) * tick_us()
}

/// The length of a clock tick of /proc's CPU times, µs.
fn tick_us() -> u64 {
    // SAFETY: sysconf only reads a constant.
    1_000_000 / u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap()
}

/// Waits until the server's CPU time stands still (a tick at most in
/// 300 ms): what InnoDB does after a prepare (flushing, purge) must not
/// fall into a window that is measured.
fn wait_for_idle(pid: u32) {
    let still = || {
        let before = cpu_us(pid);
        // sleep: the window in which the server's CPU time must stand still.
        std::thread::sleep(Duration::from_millis(300));
        cpu_us(pid) - before <= tick_us()
    };
    common::wait_until("the server to go idle", Duration::from_secs(120), still);
}

/// A status variable of the server now, read on a connection of the
/// test's (its own statement counted).
fn status(server: &TestServer, name: &str) -> u64 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut conn = Connection::connect(&server.options(server.socket())).await.unwrap();
        let answer = conn.query(&format!("SHOW GLOBAL STATUS LIKE '{name}'")).await.unwrap();
        let value = rows(&answer)[0][1].clone().unwrap().parse().unwrap();
        conn.quit().await.unwrap();
        value
    })
}

/// A point-select run of known size: the server selected once per read,
/// and its Questions are the run's, the sampler's and the connections'
/// COM_QUIT; the JSON keeps to the schema; the process read is the one
/// behind the socket; `compare --metric=server_cpu_per_query` reads the
/// figure back.
#[test]
fn point_selects_are_the_servers_selects() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let out = succeeded(run(&server, "oltp_point_select", &["--events=6000", "--threads=2", "--format=json"]), "run");
    let lines = schema_checked(&out.stdout.clone());
    let result = final_of(&lines);
    let reads = u64_at(result, "/counters/reads");
    assert_eq!(reads, 6000);
    assert_eq!(u64_at(result, "/server/delta/status/Com_select"), reads, "{}", result["server"]);
    let questions = u64_at(result, "/server/delta/status/Questions");
    let sampler = u64_at(result, "/server/delta/sampler_statements");
    assert!((reads + sampler..=reads + sampler + 2).contains(&questions), "{}", result["server"]);
    assert_eq!(result["server"]["consistency"]["consistent"], true, "{}", result["server"]);
    assert_eq!(result["server"]["source"]["location"], "this_host");
    assert_eq!(u64_at(result, "/server/source/pid"), u64::from(server_pid(&server)));
    assert_eq!(f64_at(result, "/server/figures/per_query/Com_select"), 1.0);
    let report = out.stderr.clone();
    assert!(report.contains("\nServer statistics (SHOW GLOBAL STATUS of unix:"), "{report}");
    assert!(!report.contains("WARNING"), "{report}");

    let dir = ScratchDir::new("server-stats-compare");
    let file = dir.write("a.json", &out.stdout.clone());
    let cpu = f64_at(result, "/server/figures/cpu_us_per_query");
    let compare = strings(&["compare", "--metric=server_cpu_per_query", file.to_str().unwrap()]);
    let table = succeeded(common::run_wirebench(&compare), "compare").stdout;
    assert!(table.starts_with("Server CPU per query (us)\n"), "{table}");
    let row = table.lines().nth(2).unwrap_or_else(|| panic!("{table}"));
    assert!(row.starts_with('2') && row.ends_with(&format!(" {cpu:.2}")), "{table}");
}

/// oltp_read_write's events are transactions: the server committed one
/// for each.
#[test]
fn read_write_transactions_are_the_servers_commits() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let out = succeeded(run(&server, "oltp_read_write", &["--events=300", "--threads=2", "--format=json"]), "run");
    let lines = schema_checked(&out.stdout.clone());
    let result = final_of(&lines);
    let transactions = u64_at(result, "/counters/transactions");
    assert_eq!(transactions, 300);
    assert_eq!(u64_at(result, "/server/delta/status/Com_commit"), transactions, "{}", result["server"]);
    assert_eq!(result["server"]["consistency"]["consistent"], true, "{}", result["server"]);
}

/// Another client's statements during the run are the server's but not
/// the run's: the check fails, and the report says what it means.
#[test]
fn a_second_client_fails_the_check() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let options = server.options(server.socket());
    let other = {
        let (stop, sent) = (stop.clone(), sent.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let mut conn = Connection::connect(&options).await.unwrap();
                while !stop.load(Ordering::Relaxed) {
                    conn.query("SELECT 1").await.unwrap();
                    sent.fetch_add(1, Ordering::Relaxed);
                    // sleep: another client's steady pace, the scenario.
                    tokio::time::sleep(Duration::from_micros(500)).await;
                }
                conn.quit().await.unwrap();
            });
        })
    };
    common::wait_until("the other client's queries", Duration::from_secs(20), || sent.load(Ordering::Relaxed) >= 10);
    let out = run(&server, "oltp_point_select", &["--time=2", "--threads=2", "--format=json"]);
    stop.store(true, Ordering::Relaxed);
    other.join().unwrap();
    let out = succeeded(out, "run");
    let result = final_of(&schema_checked(&out.stdout.clone())).clone();
    let check = &result["server"]["consistency"];
    assert_eq!(check["consistent"], false, "{check}");
    assert!(check["unexplained"].as_i64().unwrap() > 100, "the other client sent {sent:?}: {check}");
    let report = out.stderr.clone();
    assert!(report.contains("    WARNING: the server counted "), "{report}");
    assert!(report.contains("another client used the server during the run"), "{report}");
}

/// The run's own idle connections are not another client: their
/// COM_QUITs at the end, which `Questions` counts, are the run's, so the
/// check holds and the report warns of no stranger. (Their pings, each
/// second here, `Questions` does not count.)
#[test]
fn idle_connections_are_the_runs_not_a_strangers() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let args = ["--time=2", "--threads=2", "--idle-connections=50", "--idle-ping-interval=1", "--format=json"];
    let out = succeeded(run(&server, "oltp_point_select", &args), "run");
    let result = final_of(&schema_checked(&out.stdout.clone())).clone();
    assert_eq!(u64_at(&result, "/idle_connections/open"), 50, "{}", result["idle_connections"]);
    let check = &result["server"]["consistency"];
    assert_eq!(check["consistent"], true, "{check}");
    let report = out.stderr.clone();
    assert!(!report.contains("WARNING") && !report.contains("another client"), "{report}");
}

/// The server's CPU time per query is the increase of its process's CPU
/// time, read here from `/proc` before and after the whole command, over
/// the run's queries: within 20% (the command also logs in and prepares,
/// and ticks are 10 ms).
#[test]
fn server_cpu_per_query_is_procs() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let pid = server_pid(&server);
    wait_for_idle(pid);
    let before = cpu_us(pid);
    let out = run(&server, "oltp_point_select", &["--events=20000", "--threads=2", "--format=json"]);
    let after = cpu_us(pid);
    let result = final_of(&schema_checked(&succeeded(out, "run").stdout)).clone();
    let queries = u64_at(&result, "/counters/queries");
    let procs = (after - before) as f64 / queries as f64;
    let ours = f64_at(&result, "/server/figures/cpu_us_per_query");
    // The sampler's window lies within this one, so its CPU time is at most
    // this one's (give or take a tick at each end); the rest of this window
    // (logins, prepared statements, goodbyes) is far less than the run.
    let slack = 2.0 * tick_us() as f64 / queries as f64;
    let shown = format!("--server-stats {ours:.2} us, /proc {procs:.2} us per query");
    assert!(procs > 0.0 && ours <= procs + slack, "{shown}");
    assert!(ours >= 0.5 * procs, "{shown}");
    let process = &result["server"]["delta"]["process"];
    let split = u64_at(process, "/cpu_user_us") + u64_at(process, "/cpu_system_us");
    assert!((ours - split as f64 / queries as f64).abs() < 1e-6, "{process}");
}

/// With the option off (the default of the text report) nothing samples
/// the server, and the report ends as sysbench's does; asked for, the
/// block follows it; invoked as `sysbench`, the server is sampled but the
/// report stays sysbench's.
#[test]
fn the_plain_report_and_the_server_are_left_alone_when_off() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let args = ["--events=500", "--threads=2"];
    for off in [&args[..], &[&args[..], &["--server-stats=off"]].concat()] {
        let before = status(&server, "Com_show_status");
        let out = succeeded(run(&server, "oltp_point_select", off), "run");
        assert_eq!(status(&server, "Com_show_status"), before + 1, "only the test's own SHOW STATUS: {off:?}");
        let report = out.stdout.clone();
        assert!(!report.contains("Server statistics") && !report.contains("SHOW GLOBAL STATUS"), "{report}");
        let tail = report.rsplit("Threads fairness:\n").next().unwrap();
        assert_eq!(tail.matches('\n').count(), 3, "nothing after sysbench's last lines: {report}");
    }
    let on = succeeded(run(&server, "oltp_point_select", &[&args[..], &["--server-stats"]].concat()), "run");
    assert!(on.stdout.clone().contains("\nServer statistics (SHOW GLOBAL STATUS of unix:"));

    let dir = ScratchDir::new("server-stats-as-sysbench");
    let sysbench = dir.0.join("sysbench");
    std::os::unix::fs::symlink(common::WIREBENCH, &sysbench).unwrap();
    let before = status(&server, "Com_show_status");
    let asked = run_args(&server, "oltp_point_select", &[&args[..], &["--server-stats"]].concat());
    let out = succeeded(common::run(Command::new(&sysbench).args(&asked).stdin(Stdio::null())), "run as sysbench");
    assert!(status(&server, "Com_show_status") >= before + 3, "sampled at the start and the end");
    let report = out.stdout.clone();
    assert!(!report.contains("Server statistics"), "{report}");
    assert_eq!(report.rsplit("Threads fairness:\n").next().unwrap().matches('\n').count(), 3, "{report}");
}

/// `--server-stats=interim`: a line after each interim line; the CSV rows
/// carry the server's columns; `--chart` draws its panels.
#[test]
fn interim_lines_csv_columns_and_chart_panels() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let dir = ScratchDir::new("server-stats-interim");
    let chart = dir.0.join("run.svg");
    let chart_option = format!("--chart={}", chart.display());
    let args = ["--time=3", "--threads=2", "--report-interval=1", "--server-stats=interim", "--format=csv"];
    let out = succeeded(run(&server, "oltp_point_select", &[&args[..], &[chart_option.as_str()]].concat()), "run");
    let report = out.stderr.clone();
    let interim: Vec<&str> = report.lines().filter(|l| l.starts_with("[ ") && l.contains(" ] server: ")).collect();
    assert!(interim.len() >= 2, "{report}");
    // The server's counters are read one by one while queries run, so an
    // interval's rows and queries may each hold a query the other does not.
    let rows_per_query = |l: &str| -> Option<f64> { l.split(" rows/q: ").nth(1)?.split(' ').next()?.parse().ok() };
    let one_row_each = |l: &&str| rows_per_query(l).is_some_and(|r| (0.95..=1.05).contains(&r));
    // An interval in which the server ran no query (the client stalled on
    // a loaded machine) has no per-query figures; the others have both.
    let with_queries: Vec<&&str> = interim.iter().filter(|l| l.contains(" rows/q: ")).collect();
    assert!(!with_queries.is_empty(), "{interim:?}");
    assert!(with_queries.iter().all(|l| l.contains(" cpu/q: ") && one_row_each(l)), "{interim:?}");
    let csv = out.stdout.clone();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "server_com_select").unwrap_or_else(|| panic!("{header:?}"));
    let queries = header.iter().position(|h| *h == "num_queries").unwrap();
    for row in csv.lines().skip(1) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{row}");
        let (selects, sent): (u64, u64) = (cells[column].parse().unwrap(), cells[queries].parse().unwrap());
        // An interval's edges are the report thread's, not sharp: near.
        assert!(selects.abs_diff(sent) <= sent / 5 + 50, "{row}");
    }
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("Server CPU time per query (--server-stats)"), "no CPU panel");
    assert!(svg.contains("InnoDB buffer pool hit ratio (--server-stats)"), "no hit ratio panel");
}

/// Over TCP the server's process is found through /proc/net/tcp; a
/// `--server-pid` names it instead, and one that names no process is
/// refused before any load.
#[test]
fn tcp_finds_the_process_and_server_pid_names_it() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let pid = server_pid(&server);
    let tcp = |extra: &[String]| {
        let args = [server.login_args(DB), strings(&["oltp_point_select"]), strings(TABLE)].concat();
        let asked = strings(&["--events=200", "--threads=1", "--format=json", "run"]);
        common::run_wirebench(&[args, extra.to_vec(), asked].concat())
    };
    let found = final_of(&schema_checked(&succeeded(tcp(&[]), "run over TCP").stdout)).clone();
    assert_eq!(found["server"]["source"]["location"], "this_host", "{}", found["server"]["source"]);
    assert_eq!(u64_at(&found, "/server/source/pid"), u64::from(pid));
    let given = tcp(&[format!("--server-pid={pid}")]);
    let given = final_of(&schema_checked(&succeeded(given, "run with --server-pid").stdout)).clone();
    assert_eq!(given["server"]["source"]["location"], "given_pid");
    assert!(!given["server"]["delta"]["process"].is_null());
    let nobody = (pid + 1..).find(|p| !Path::new(&format!("/proc/{p}")).exists()).unwrap();
    let refused = tcp(&[format!("--server-pid={nobody}")]);
    let stderr = refused.stderr.clone();
    assert!(!refused.succeeded(), "{stderr}");
    assert!(stderr.contains(&format!("--server-pid={nobody}: process {nobody} cannot be read")), "{stderr}");
    assert!(!stderr.contains("Threads started!"), "no load ran: {stderr}");
}

/// Two shards of one run: only shard 0 samples; its own result has no
/// figures per query (its queries are half the server's); merged, the
/// figures are per query of both shards', and the check holds. The shards
/// end by time, together: shard 0 samples until its own end, so a shard
/// still running after it (a run of `--events`, one shard slower) would
/// leave queries out of the window, as the check would then say.
#[test]
fn shards_count_the_one_server_once() {
    let Some((_turn, _only, server)) = server_to_myself() else { return };
    let dir = ScratchDir::new("server-stats-shards");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let start_at = format!("--start-at={:.3}", (now + 3.0).ceil());
    let files: Vec<PathBuf> = (0..2).map(|i| dir.0.join(format!("s{i}.json"))).collect();
    let shards: Vec<Child> = (0..2)
        .map(|i| {
            let shard = format!("--shard={i}/2");
            let args = ["--time=2", "--threads=4", "--format=json", "--report-interval=1", &start_at, &shard];
            common::wirebench()
                .args(run_args(&server, "oltp_point_select", &args))
                .stdout(std::fs::File::create(&files[i]).unwrap())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, shard) in shards.into_iter().enumerate() {
        let out = shard.wait_with_output().unwrap();
        assert!(out.status.success(), "shard {i}: {}", text(&out.stderr));
    }
    let finals: Vec<Value> =
        files.iter().map(|f| schema_checked(&std::fs::read_to_string(f).unwrap()).pop().unwrap()).collect();
    assert!(!finals[0]["server"].is_null() && finals[1]["server"].is_null(), "only shard 0 samples");
    assert!(finals[0]["server"]["figures"]["cpu_us_per_query"].is_null(), "{}", finals[0]["server"]["figures"]);
    assert!(finals[0]["server"]["consistency"].is_null());
    let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let merged =
        succeeded(common::run_wirebench(&[strings(&["merge", "--format=json"]), paths.clone()].concat()), "merge");
    let lines = schema_checked(&merged.stdout.clone());
    let result = final_of(&lines);
    let reads = u64_at(&finals[0], "/counters/reads") + u64_at(&finals[1], "/counters/reads");
    assert!(reads > 0);
    assert_eq!(u64_at(result, "/counters/reads"), reads);
    assert_eq!(u64_at(result, "/server/source/merged_shards"), 2);
    assert_eq!(result["server"]["consistency"]["consistent"], true, "{}", result["server"]);
    let selects = u64_at(result, "/server/delta/status/Com_select");
    let allowed = u64_at(result, "/server/consistency/allowed_below");
    assert!(selects <= reads && selects + allowed >= reads, "{selects} of {reads}");
    assert!(result["server"]["figures"]["cpu_us_per_query"].as_f64().unwrap() > 0.0);
    let report = succeeded(common::run_wirebench(&[strings(&["merge"]), paths].concat()), "merge").stdout;
    assert!(report.contains("    sampled by shard 0/2 alone, for the whole run"), "{report}");
}

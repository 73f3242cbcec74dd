//! `--shard=I/N` and `--start-at` against the test MariaDB: three shards
//! run as separate processes, started together, and add up to the run one
//! instance would make (exact `--events`, bulk_insert's rows without a
//! duplicate key, prepare's and cleanup's tables split between them).

use crate::common::{self, text};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::TestServer;
use wirebench::client::Connection;

use crate::common::serial;

// One sharded run at a time: they share the tables of `sbtest_shards`, a
// database of their own, so they take the server beside image.rs's runs
// (`find_beside_others`), which have theirs.
const DATABASE: &str = "sbtest_shards";

fn login(server: &TestServer) -> Vec<String> {
    server.login_args(DATABASE)
}

/// Runs the `count` shards of `args` at once, each a process of its own;
/// their outputs in shard order.
fn run_shards(count: u32, args: &[String]) -> Vec<Output> {
    let children: Vec<_> = (0..count)
        .map(|shard| {
            common::wirebench()
                .args(args)
                .arg(format!("--shard={shard}/{count}"))
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("wirebench starts")
        })
        .collect();
    children.into_iter().map(|child| child.wait_with_output().unwrap()).collect()
}

/// Each shard ended well; its stdout and stderr.
fn succeeded(outputs: &[Output]) -> Vec<(String, String)> {
    outputs
        .iter()
        .enumerate()
        .map(|(shard, output)| {
            let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
            assert!(output.status.success(), "shard {shard}: {}\n{stdout}\n{stderr}", output.status);
            (stdout, stderr)
        })
        .collect()
}

/// The number after `label` in a report.
fn reported(stdout: &str, label: &str) -> u64 {
    let line =
        stdout.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}\n{stdout}"));
    line.trim_start()[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
}

fn query_u64(server: &TestServer, sql: &str) -> u64 {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut conn = Connection::connect(&server.options(server.tcp()).database(DATABASE)).await.unwrap();
        let response = conn.query(sql).await.unwrap();
        let rows = common::rows(&response);
        rows[0][0].as_deref().unwrap_or("0").parse().unwrap()
    })
}

fn table_exists(server: &TestServer, table: &str) -> bool {
    query_u64(
        server,
        &format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='{DATABASE}' AND table_name='{table}'"
        ),
    ) == 1
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// bulk_insert over 3 shards and 5 connections (2, 2, 1) with
/// `--events=1000`: exactly 1000 rows, each table's ids 1..n as its one
/// connection numbers them, no duplicate key; the shards start within
/// half a second of `--start-at` (a loaded machine wakes a sleeper late;
/// a shard that started at once would be seconds early, and one that
/// slept by whole seconds up to one late) and their events add up to the
/// 1000.
#[test]
fn bulk_insert_shards_insert_exactly_the_rows_of_one_run() {
    let Some(server) = TestServer::find_beside_others() else { return };
    let _serial = serial();
    let mut args = login(&server);
    args.extend(["bulk_insert".to_owned(), "--threads=5".to_owned()]);
    let with = |extra: &[&str]| [args.clone(), extra.iter().map(|s| (*s).to_owned()).collect()].concat();
    succeeded(&run_shards(3, &with(&["cleanup"])));
    succeeded(&run_shards(3, &with(&["prepare"])));
    for table in 1..=5 {
        assert!(table_exists(&server, &format!("sbtest{table}")), "prepare made sbtest{table}");
    }
    let start_at = format!("--start-at={:.3}", unix_now() + 4.0);
    let outputs = succeeded(&run_shards(3, &with(&["--events=1000", "--time=0", &start_at, "run"])));
    let events: Vec<u64> = outputs.iter().map(|(stdout, _)| reported(stdout, "total number of events:")).collect();
    assert_eq!(events.iter().sum::<u64>(), 1000, "{events:?}");
    let mut rows = 0;
    for table in 1..=5 {
        let (count, max) = (
            query_u64(&server, &format!("SELECT COUNT(*) FROM sbtest{table}")),
            query_u64(&server, &format!("SELECT COALESCE(MAX(id), 0) FROM sbtest{table}")),
        );
        assert_eq!(count, max, "sbtest{table}: ids 1..n, as one connection inserts them");
        rows += count;
    }
    assert_eq!(rows, 1000);
    for (shard, (_, stderr)) in outputs.iter().enumerate() {
        let late_ms = lateness_ms(stderr);
        assert!(late_ms < 500.0, "shard {shard} started {late_ms} ms late:\n{stderr}");
    }
    succeeded(&run_shards(3, &with(&["cleanup"])));
    for table in 1..=5 {
        assert!(!table_exists(&server, &format!("sbtest{table}")), "cleanup dropped sbtest{table}");
    }
}

/// How late a shard says it started, in ms.
fn lateness_ms(stderr: &str) -> f64 {
    let line = stderr.lines().find(|l| l.contains("after --start-at")).unwrap_or_else(|| panic!("{stderr}"));
    let before = line.split(" ms after --start-at").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

/// oltp_insert without auto_inc draws unique ids per connection: 3 shards
/// of 4 connections run exactly `--events=300` inserts, none a duplicate.
#[test]
fn oltp_insert_shards_run_exactly_the_events_without_duplicate_ids() {
    let Some(server) = TestServer::find_beside_others() else { return };
    let _serial = serial();
    let mut args = login(&server);
    args.extend(["oltp_insert", "--tables=2", "--table-size=10", "--auto_inc=off"].map(String::from));
    let with = |extra: &[&str]| [args.clone(), extra.iter().map(|s| (*s).to_owned()).collect()].concat();
    succeeded(&run_shards(3, &with(&["--threads=2", "cleanup"])));
    // Connection t prepares tables t+1, t+1+threads, ...: one each here.
    let prepared = succeeded(&run_shards(2, &with(&["--threads=2", "prepare"])));
    assert!(prepared[0].0.contains("Creating table 'sbtest1'") && !prepared[0].0.contains("'sbtest2'"));
    assert!(prepared[1].0.contains("Creating table 'sbtest2'") && !prepared[1].0.contains("'sbtest1'"));
    let outputs =
        succeeded(&run_shards(3, &with(&["--threads=4", "--events=300", "--time=0", "--rand-seed=7", "run"])));
    let events: Vec<u64> = outputs.iter().map(|(stdout, _)| reported(stdout, "total number of events:")).collect();
    assert_eq!(events, [100, 100, 100]);
    let rows = query_u64(&server, "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2)");
    assert_eq!(rows, 300);
    let cleaned = succeeded(&run_shards(2, &with(&["--threads=2", "cleanup"])));
    assert!(cleaned[0].0.contains("Dropping table 'sbtest1'") && cleaned[1].0.contains("Dropping table 'sbtest2'"));
    assert!(!table_exists(&server, "sbtest1") && !table_exists(&server, "sbtest2"));
}

/// A shard without a connection says so and ends well; a start time long
/// gone is refused before anything connects.
#[test]
fn idle_shards_and_past_start_times() {
    let Some(server) = TestServer::find_beside_others() else { return };
    let mut args = login(&server);
    args.extend(["oltp_point_select", "--threads=2", "--shard=2/3", "run"].map(String::from));
    let output = common::wirebench().args(&args).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("shard 2/3 has nothing to do: --threads=2"), "{}", text(&output.stderr));
    let past = format!("--start-at={}", unix_now() as u64 - 60);
    let output = common::wirebench().args(&args[..6]).args([&past, "run"]).output().unwrap();
    let stderr = text(&output.stderr);
    assert!(!output.status.success() && stderr.contains(" s in the past: give an instant a little ahead"), "{stderr}");
}

/// The Kubernetes recipe is an Indexed Job of N pods at once whose
/// wirebench takes N shards and one start instant.
#[test]
fn kubernetes_job_names_the_fields_a_sharded_run_needs() {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes/wirebench-job.yaml")).unwrap();
    let field = |name: &str| -> String {
        let line = manifest.lines().find(|l| l.trim_start().starts_with(&format!("{name}:"))).unwrap_or_else(|| {
            panic!("no {name}: in the manifest");
        });
        line.split_once(':').unwrap().1.trim().to_owned()
    };
    assert_eq!(field("kind"), "Job");
    assert_eq!(field("apiVersion"), "batch/v1");
    assert_eq!(field("completionMode"), "Indexed");
    let completions = field("completions");
    assert_eq!(field("parallelism"), completions, "all the shards run at once");
    let args: Vec<&str> =
        manifest.lines().filter_map(|l| l.trim_start().strip_prefix("- ")).filter(|a| a.starts_with("--")).collect();
    assert!(args.contains(&format!("--shards={completions}").as_str()), "{args:?}");
    assert!(args.contains(&"--start-at=@START_AT@"), "{args:?}");
    assert!(args.contains(&"--format=json"), "merge reads each pod's JSON result: {args:?}");
    assert!(manifest.contains("JOB_COMPLETION_INDEX") && manifest.contains("kubectl logs"));
    assert!(manifest.contains("job-completion-index=$i") && manifest.contains("wirebench merge shard-*.json"));
    assert!(!manifest.contains('\t'), "YAML takes no tabs");
}

/// An sshd of the test's own on 127.0.0.1, with a client key it accepts;
/// killed on drop, so that a failing assert leaves no sshd behind.
struct TestSshd {
    child: std::process::Child,
    dir: PathBuf,
    port: u16,
}

impl TestSshd {
    /// `/usr/sbin/sshd` started on a free port, or `None` (the test is
    /// skipped, after saying so) when openssh-server is not installed; with
    /// WIREBENCH_REQUIRE_SERVER=1 that fails the test instead.
    fn start(dir: &Path) -> Option<TestSshd> {
        let missing: Vec<&str> =
            [SSHD, "/usr/bin/ssh", SSH_KEYGEN].into_iter().filter(|p| !Path::new(p).exists()).collect();
        if !missing.is_empty() {
            let message = format!(
                "no {}: install openssh-server and openssh-client (apt-get install openssh-server openssh-client; \
                 scripts/test.sh does)",
                missing.join(", ")
            );
            common::unavailable(&message);
            return None;
        }
        let (config, port) = write_sshd_config(dir);
        // sshd's privilege separation wants its empty directory to exist.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        let child = Command::new(SSHD).arg("-D").arg("-e").arg("-f").arg(&config).stderr(log).spawn().unwrap();
        let mut sshd = TestSshd { child, dir: dir.to_owned(), port };
        sshd.wait_until_listening();
        Some(sshd)
    }

    fn wait_until_listening(&mut self) {
        common::wait_until("sshd to listen", Duration::from_secs(10), || {
            // Another process may have taken the port between its choice and sshd's bind.
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("sshd exited ({status}) before listening on port {}:\n{}", self.port, self.log());
            }
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
        });
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// The ssh command that logs in to it with the client key, asking
    /// nothing (run-shards.sh's WIREBENCH_SSH).
    fn ssh_command(&self) -> String {
        format!(
            "ssh -p {} -i {} -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
            self.port,
            self.dir.join("client_key").display()
        )
    }
}

impl Drop for TestSshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SSHD: &str = "/usr/sbin/sshd";
const SSH_KEYGEN: &str = "/usr/bin/ssh-keygen";

/// Generates the host and client keys in `dir`, authorizes the client key
/// and writes an sshd_config for a free port; the config's path and the
/// port.
fn write_sshd_config(dir: &Path) -> (PathBuf, u16) {
    for key in ["host_key", "client_key"] {
        let status =
            Command::new(SSH_KEYGEN).args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(dir.join(key)).status().unwrap();
        assert!(status.success(), "ssh-keygen {key}: {status}");
    }
    std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\nPidFile {}\n\
         PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n",
        dir.join("host_key").display(),
        dir.join("authorized_keys").display(),
        dir.join("sshd.pid").display()
    );
    let path = dir.join("sshd_config");
    std::fs::write(&path, config).unwrap();
    (path, port)
}

/// The ssh recipe against a real sshd on this host: each of two hosts
/// (127.0.0.1 and localhost, both this sshd) runs its shard over ssh with
/// the MariaDB login on its command line, as a remote host would (ssh
/// forwards no environment); each shard's JSON result says which shard it
/// ran, the shards add up to `--events`, and the script's merge says so.
#[test]
fn ssh_script_runs_one_shard_per_host() {
    let Some(server) = TestServer::find_beside_others() else { return };
    let _serial = serial();
    let scratch = common::ScratchDir::new("ssh-shards");
    let Some(sshd) = TestSshd::start(&scratch.0) else { return };
    let mut args = login(&server);
    args.extend(["bulk_insert", "--threads=2"].map(String::from));
    let with = |extra: &[&str]| [args.clone(), extra.iter().map(|s| (*s).to_owned()).collect()].concat();
    succeeded(&run_shards(2, &with(&["cleanup"])));
    succeeded(&run_shards(2, &with(&["prepare"])));
    let out = scratch.0.join("out");
    let output = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/ssh/run-shards.sh"))
        .args(["-o", out.to_str().unwrap(), "-d", "3", "127.0.0.1", "localhost", "--"])
        .args(with(&["--events=200", "--time=0", "run"]))
        .env("WIREBENCH_SSH", sshd.ssh_command())
        .env("WIREBENCH", common::WIREBENCH)
        .env("WIREBENCH_LOCAL", common::WIREBENCH)
        .stdout(std::process::Stdio::piped())
        .output()
        .unwrap();
    let shard_err = |shard: u32| std::fs::read_to_string(out.join(format!("shard-{shard}.err"))).unwrap_or_default();
    assert!(
        output.status.success(),
        "{}\n{}\nshard 0:\n{}\nshard 1:\n{}\nsshd:\n{}",
        output.status,
        text(&output.stderr),
        shard_err(0),
        shard_err(1),
        sshd.log()
    );
    let events: u64 = (0..2)
        .map(|shard| {
            let result = std::fs::read_to_string(out.join(format!("shard-{shard}.json"))).unwrap();
            let last: serde_json::Value = serde_json::from_str(result.lines().last().unwrap()).unwrap();
            assert_eq!(last["run"]["shard"]["index"], shard, "{result}");
            assert_eq!(last["run"]["shard"]["count"], 2, "{result}");
            last["counters"]["transactions"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(events, 200);
    let sessions = sshd.log().matches("Accepted publickey for").count();
    assert_eq!(sessions, 2, "each shard logged in over ssh:\n{}", sshd.log());
    let merged = std::fs::read_to_string(out.join("merged.txt")).unwrap();
    assert_eq!(merged, text(&output.stdout));
    assert!(merged.contains("Merged 2 of 2 shards"), "{merged}");
    assert_eq!(reported(&merged, "total number of events:"), 200);
    assert_eq!(query_u64(&server, "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2)"), 200);
    succeeded(&run_shards(2, &with(&["cleanup"])));
}

//! `--shard=I/N` for a Lua script's `run`, against the test MariaDB
//! (database sbtest_lua, as the other Lua tests): the shards' threads are
//! numbered as one instance's (`sysbench.tid`, the thread functions'
//! argument), their `sysbench.rand.unique()` values never meet, their
//! `--events` add up, and `wirebench merge` merges their results but
//! refuses shards of another script or script option. Skipped without a
//! server unless WIREBENCH_REQUIRE_SERVER=1.

use crate::common::{self, text};

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use common::{ScratchDir, TestServer};
use serde_json::Value;
use wirebench::client::Connection;

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lua/shard.lua")
}

fn succeeded(output: Output, what: &str) -> Output {
    assert!(output.status.success(), "{what}: {}\n{}\n{}", output.status, text(&output.stdout), text(&output.stderr));
    output
}

fn query_rows(server: &TestServer, sql: &str) -> Vec<Vec<Option<String>>> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut options = server.options(server.tcp());
        options.database = Some("sbtest_lua".to_owned());
        let mut conn = Connection::connect(&options).await.unwrap();
        let response = conn.query(sql).await.unwrap();
        common::rows(&response)
    })
}

fn final_line(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(text.lines().last().unwrap_or_else(|| panic!("{} is empty", path.display()))).unwrap()
}

#[test]
fn a_scripts_shards_run_as_one_instance_and_merge() {
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("lua-shards");
    let mut args = vec![script().display().to_string()];
    args.extend(server.login_args("sbtest_lua"));
    common::run_wirebench(&[args.clone(), vec!["prepare".to_owned()]].concat()).expect_success();
    let refused = common::run_wirebench(&[args.clone(), vec!["--shard=0/2".to_owned(), "prepare".to_owned()]].concat());
    assert!(!refused.succeeded());
    assert!(refused.stderr.contains("--shard splits a script's run only"), "{refused}");

    let base = args.clone();
    let start_at = ((SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 3.0) * 1e3).ceil() / 1e3;
    args.extend(["--threads=3", "--events=30", "--format=json", "--rand-seed=5"].map(String::from));
    args.push(format!("--start-at={start_at:.3}"));
    let file = |name: &str| dir.0.join(name);
    let shard = |index: u32, extra: &[&str], json: &str| {
        let mut line = args.clone();
        line.extend(extra.iter().map(|s| (*s).to_owned()));
        line.extend([format!("--shard={index}/2"), "run".to_owned()]);
        common::wirebench()
            .args(&line)
            .stdout(std::fs::File::create(file(json)).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [shard(0, &[], "s0.json"), shard(1, &[], "s1.json"), shard(1, &["--note=y"], "other.json")];
    let outputs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for (i, output) in outputs.into_iter().enumerate() {
        let stderr = text(&succeeded(output, &format!("shard process {i}")).stderr);
        assert!(stderr.contains("started at") && stderr.contains("after --start-at"), "{stderr}");
    }

    // Each row's thread: one of the whole run's 0..2, the argument of its
    // event() and thread_init() the same number; 30 rows, none a duplicate
    // (the third process, with another --note, inserts nothing).
    let rows = query_rows(&server, "SELECT tid, arg, init_arg, COUNT(*) FROM shard_lua GROUP BY tid, arg, init_arg");
    let mut per_tid = std::collections::BTreeMap::new();
    for row in &rows {
        let field = |i: usize| row[i].as_deref().unwrap().parse::<u64>().unwrap();
        assert_eq!((field(1), field(2)), (field(0), field(0)), "the arguments are sysbench.tid: {rows:?}");
        *per_tid.entry(field(0)).or_insert(0) += field(3);
    }
    assert_eq!(per_tid.values().sum::<u64>(), 30, "{rows:?}");
    assert!(per_tid.keys().all(|&tid| tid < 3), "{rows:?}");
    assert!(per_tid.contains_key(&2), "shard 1's thread is the whole run's thread 2: {rows:?}");

    let finals: Vec<Value> = ["s0.json", "s1.json"].iter().map(|f| final_line(&file(f))).collect();
    let shard_field = |v: &Value, name: &str| v["run"]["shard"][name].clone();
    assert_eq!(shard_field(&finals[0], "run_id"), shard_field(&finals[1], "run_id"));
    assert_eq!(finals[0]["run"]["test"], "shard.lua", "{}", finals[0]["run"]);
    let merge = |files: &[&str]| {
        let mut command = common::wirebench();
        command.arg("merge").arg("--format=json").args(files.iter().map(|f| file(f)));
        command.output().unwrap()
    };
    let merged = text(&succeeded(merge(&["s0.json", "s1.json"]), "merge").stdout);
    let result: Value = serde_json::from_str(merged.lines().last().unwrap()).unwrap();
    assert_eq!(result["run"]["shard"]["merged_from"].as_u64(), Some(2), "{result}");
    assert_eq!(result["counters"]["transactions"].as_u64(), Some(30), "{result}");
    let other = merge(&["s0.json", "other.json"]);
    assert!(!other.status.success());
    assert!(
        text(&other.stderr).contains("not shards of the same run: the script's text or options"),
        "{}",
        text(&other.stderr)
    );
    common::run_wirebench(&[base, vec!["cleanup".to_owned()]].concat()).expect_success();
}

//! `--rate-stages` end to end against the null server (in-process, on a
//! free port): the achieved rate follows the stages, a stage the server
//! cannot hold drops events and says so, shards merged add up to the
//! stages, a Lua script runs under them; and the command line's refusals.

use std::net::SocketAddr;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use wirebench::null_server::{NullServer, NullServerConfig};

// The runs take a few percent of a core: they run side by side, and
// beside the searches against the null server.
use crate::common::{self, Ran};
use crate::light_on_the_cores;

fn null_server(delay: Duration) -> NullServer {
    let config = NullServerConfig {
        tcp: Some(SocketAddr::from(([127, 0, 0, 1], 0))),
        answer_delay: delay,
        ..NullServerConfig::default()
    };
    NullServer::start(config).unwrap()
}

/// wirebench `args` against the null server `server`.
fn against(server: &NullServer, args: &[&str]) -> Ran {
    let port = format!("--mysql-port={}", server.local_addr().unwrap().port());
    let login = ["--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest", "--table-size=100", &port];
    common::run_wirebench(&[&login[..], args].concat())
}

/// The JSON lines of a run, checked against docs/result.schema.json.
fn json_lines(stdout: &str) -> Vec<Value> {
    let schema: Value = serde_json::from_str(include_str!("../../docs/result.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let lines: Vec<Value> =
        stdout.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    for line in &lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?} in {line}");
    }
    lines
}

fn intervals(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "interval").collect()
}

fn final_line(lines: &[Value]) -> &Value {
    lines.iter().find(|l| l["type"] == "final").expect("a final line")
}

/// The stages' target (RATE, SECONDS pairs, as --rate-stages takes them)
/// at `t` seconds: each moves linearly from the previous stage's rate;
/// none once they are over (the run ends with them, a line that a late
/// tick ends after them has none there).
fn target_at(stages: &[(f64, f64)], t: f64) -> f64 {
    let (mut from, mut start) = (stages[0].0, 0.0);
    for &(rate, secs) in stages {
        if t < start + secs {
            return from + (rate - from) * (t - start) / secs;
        }
        (from, start) = (rate, start + secs);
    }
    0.0
}

/// The stages' mean target over an interval line's own span (from its
/// `time_s` and `interval_s`): a tick that comes late shifts the span,
/// and the target with it.
fn span_target(stages: &[(f64, f64)], interval: &Value) -> f64 {
    let (end, span) = (interval["time_s"].as_f64().unwrap(), interval["interval_s"].as_f64().unwrap());
    let steps = 1000;
    (0..steps).map(|i| target_at(stages, end - span + span * (f64::from(i) + 0.5) / f64::from(steps))).sum::<f64>()
        / f64::from(steps)
}

/// Ramp from 0 to 1200/s over 3 s, hold 2 s, ramp down to 400/s over 2 s,
/// hold 1 s, fixed arrivals: each second's line reports its target, every
/// arrival due by then is run, waiting or dropped; once past the first
/// second of a ramp, each second the client kept up with achieves within
/// 5 % of its target, and the run ends with the stages. The rates leave a
/// loaded 2-core machine room: the test is of the schedule, not of the
/// client's speed.
#[test]
fn the_achieved_rate_follows_each_stage() {
    let _light = light_on_the_cores();
    let server = null_server(Duration::ZERO);
    let args = ["oltp_point_select", "--threads=4", "--rate-stages=0:0,1200:3,1200:2,400:2,400:1"];
    let args = [&args[..], &["--rate-arrival=fixed", "--report-interval=1", "--format=json", "run"]].concat();
    // A second in which the machine starved the client or the in-process
    // server (the 2 cores are shared) misses its target through no fault
    // of the schedule's.
    common::in_one_of_three_runs(|| follows_the_stages(&json_lines(&against(&server, &args).ok())));
}

/// `Err(why)` unless `cond`.
fn check(cond: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(why())
    }
}

fn follows_the_stages(lines: &[Value]) -> Result<(), String> {
    let intervals = intervals(lines);
    let last = final_line(lines);
    let (end_s, threads) = (last["time_s"].as_f64().unwrap(), 4.0);
    // A line a second while the stages run, however many a run a loaded
    // machine stretched has: one after the other, none past the end.
    check(intervals.len() >= 7, || format!("{} lines, one per second of the stages", intervals.len()))?;
    let stages = [(0.0, 0.0), (1200.0, 3.0), (1200.0, 2.0), (400.0, 2.0), (400.0, 1.0)];
    // The first second of each ramp: the run's start, the way down.
    let first_of_a_ramp = [0, 5];
    let (mut until_s, mut due, mut accounted) = (0.0, 0.0, 0.0);
    for (k, interval) in intervals.iter().enumerate() {
        let (time_s, span_s) = (interval["time_s"].as_f64().unwrap(), interval["interval_s"].as_f64().unwrap());
        check((time_s - span_s - until_s).abs() < 1e-3 && time_s <= end_s, || format!("second {}: {interval}", k + 1))?;
        until_s = time_s;
        let (target, want) = (interval["target_rate"].as_f64().unwrap(), span_target(&stages, interval));
        check((target - want).abs() < want * 0.01 + 1.0, || format!("second {}: target {target}, not {want}", k + 1))?;
        (due, accounted) = every_arrival_accounted_for(interval, (due, accounted), threads)
            .map_err(|e| format!("second {}: {e}", k + 1))?;
        let tps = interval["rates"]["tps"].as_f64().unwrap();
        if first_of_a_ramp.contains(&k) || !kept_up(&intervals, k, threads) {
            continue;
        }
        check((tps / target - 1.0).abs() < 0.05, || format!("second {}: achieved {tps} against {target}", k + 1))?;
    }
    assert_eq!(last["rate"]["stages"], true);
    // The stages' integral is 6200 arrivals: each ran, waited at the end
    // or was dropped, and dropped only behind a client that says it held
    // arrivals past a second.
    let rate = &last["rate"];
    let events = last["counters"]["transactions"].as_f64().unwrap();
    let (dropped, backlog) = (rate["dropped"].as_f64().unwrap(), rate["backlog"].as_f64().unwrap());
    let all = events + dropped + backlog;
    check((all - 6_200.0).abs() <= threads + 62.0, || {
        format!("{events} events, {dropped} dropped, {backlog} left of 6200")
    })?;
    let delay_max_ms = rate["client"]["delay_ms"]["max"].as_f64().unwrap_or(0.0);
    check(dropped == 0.0 || delay_max_ms >= 1_000.0, || format!("dropped {dropped}: {rate}"))?;
    // The run ends with the stages, later only by what the client held.
    check(end_s < 9.5 + delay_max_ms / 1e3, || format!("time {end_s}: {rate}"))
}

/// The schedule itself, whatever a stall of a loaded machine held back:
/// every arrival due by an interval line's end (the running sum `due` of
/// its target over its span) ran (the running sum `accounted`, with the
/// dropped), runs or waits (its queue line), give or take what was in
/// flight at the two moments the line was taken. The sums after the line.
fn every_arrival_accounted_for(
    interval: &Value,
    (due, accounted): (f64, f64),
    threads: f64,
) -> Result<(f64, f64), String> {
    let (target, span_s) = (interval["target_rate"].as_f64().unwrap(), interval["interval_s"].as_f64().unwrap());
    let (tps, dropped) = (interval["rates"]["tps"].as_f64().unwrap(), interval["dropped"].as_f64().unwrap());
    let queue = &interval["queue"];
    let pending = queue["length"].as_f64().unwrap() + queue["concurrency"].as_f64().unwrap();
    let (due, accounted) = (due + target * span_s, accounted + tps * span_s + dropped);
    let off = accounted + pending - due;
    check(off.abs() <= threads + 0.01 * due, || format!("{off} off the {due} arrivals due: {interval}"))?;
    Ok((due, accounted))
}

/// Whether the client kept up with interval `k` from start to end:
/// nothing waited at its start or end, nothing started late or was
/// dropped. Only then is its achieved rate its target's.
fn kept_up(intervals: &[&Value], k: usize, threads: f64) -> bool {
    let waiting = |i: &Value| i["queue"]["length"].as_f64().unwrap();
    let interval = intervals[k];
    let before = k == 0 || waiting(intervals[k - 1]) <= threads;
    before && waiting(interval) <= threads && interval["late_starts"] == 0 && interval["dropped"] == 0
}

/// A server that answers each command 2 ms late holds about 500/s on one
/// connection: a stage at 3000/s drops what could not start within a
/// second, counts it per interval and in the report, and no event waited
/// much longer than that second.
#[test]
fn a_stage_the_server_cannot_hold_drops_events() {
    let _light = light_on_the_cores();
    let server = null_server(Duration::from_millis(2));
    let args = ["oltp_point_select", "--threads=1", "--rate-stages=100:1,3000:0,3000:3", "--report-interval=1"];
    let text = against(&server, &[&args[..], &["run"]].concat()).ok();
    let interim: Vec<&str> = text.lines().filter(|l| l.contains(" tps: ")).collect();
    assert!(interim.len() >= 3, "{text}");
    // The first line's span ends a little past the first second (as late
    // as a loaded machine wakes the report), into the next stage: its
    // target is 100/s and some of 3000/s (the JSON run's line below says
    // how much), and it drops nothing yet.
    let target: f64 = interim[0].split(" target: ").nth(1).and_then(|t| t.split(' ').next()?.parse().ok()).unwrap();
    assert!((100.0..3000.0).contains(&target) && interim[0].ends_with(" dropped: 0"), "{}", interim[0]);
    assert!(interim[2].contains(" target: 3000.00 dropped: "), "{}", interim[2]);
    assert!(text.contains("Rate: --rate-stages, mean target "), "{text}");
    let json = against(&server, &[&args[..], &["--format=json", "run"]].concat()).ok();
    let lines = json_lines(&json);
    let first = intervals(&lines)[0];
    let (target, want) =
        (first["target_rate"].as_f64().unwrap(), span_target(&[(100.0, 1.0), (3000.0, 0.0), (3000.0, 3.0)], first));
    assert!((target - want).abs() < want * 0.01 + 1.0, "the first second's target {target}, not {want}: {first}");
    let dropped: Vec<u64> = intervals(&lines).iter().map(|i| i["dropped"].as_u64().unwrap()).collect();
    assert_eq!(dropped[0], 0, "the first second is within capacity: {dropped:?}");
    let total: u64 = dropped.iter().sum();
    assert!(total > 3_000, "about 2500 a second past the first: {dropped:?}");
    let last = final_line(&lines);
    assert!(last["rate"]["dropped"].as_u64().unwrap() >= total);
    assert_eq!(last["rate"]["target_met"], false);
    let max_ms = last["latency_ms"]["max"].as_f64().unwrap();
    assert!(max_ms < 1_500.0, "an event waits a second at most before it is dropped: max {max_ms} ms");
}

/// Two shards, each with its share of every stage, merged: the targets
/// and the events add up to the stages'.
#[test]
fn shards_merged_add_up_to_the_stages() {
    let _light = light_on_the_cores();
    let server = null_server(Duration::ZERO);
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64() + 2.0;
    let dir = std::env::temp_dir().join(format!("wirebench-stages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let port = format!("--mysql-port={}", server.local_addr().unwrap().port());
            let mut args: Vec<String> =
                ["--mysql-host=127.0.0.1", "--mysql-user=x", "--mysql-db=sbtest", "--table-size=100"]
                    .map(String::from)
                    .to_vec();
            args.extend(
                ["oltp_point_select", "--threads=4", "--rate-stages=1000:1,3001:2", "--rate-arrival=fixed"]
                    .map(String::from),
            );
            args.extend([port, "--report-interval=1".into(), "--format=json".into(), format!("--shard={i}/2")]);
            args.extend([format!("--start-at={start:.3}"), "run".into()]);
            (i, std::thread::spawn(move || common::run_wirebench(&args)))
        })
        .collect();
    let mut files = Vec::new();
    let mut shard_targets: Vec<Vec<f64>> = Vec::new();
    for (i, shard) in shards {
        let stdout = shard.join().unwrap().ok();
        let lines = json_lines(&stdout);
        let stages = &final_line(&lines)["run"]["shard"]["identity"]["rate_stages"];
        assert_eq!(stages, "1000:1,3001:2", "the whole run's stages identify it");
        // Each shard's lines: half of each stage, over the line's own span.
        let half = [(500.0, 1.0), (1500.5, 2.0)];
        let targets: Vec<(f64, f64)> =
            intervals(&lines).iter().map(|i| (i["target_rate"].as_f64().unwrap(), span_target(&half, i))).collect();
        let near = |(got, want): &(f64, f64)| (got - want).abs() < want * 0.01 + 1.0;
        assert!(targets.iter().all(near), "shard {i}: {targets:?}");
        shard_targets.push(targets.iter().map(|t| t.0).collect());
        let path = dir.join(format!("shard-{i}.json"));
        std::fs::write(&path, stdout).unwrap();
        files.push(path);
    }
    let merge: Vec<String> = ["merge".to_owned(), "--format=json".to_owned()]
        .into_iter()
        .chain(files.iter().map(|f| f.display().to_string()))
        .collect();
    let merged = common::run_wirebench(&merge).ok();
    let _ = std::fs::remove_dir_all(&dir);
    let lines = json_lines(&merged);
    let targets: Vec<f64> = intervals(&lines).iter().map(|i| i["target_rate"].as_f64().unwrap()).collect();
    // A slot a second (the report thread of a machine starved for seconds
    // may have ticked less often).
    assert!(!targets.is_empty(), "merged {targets:?}, the shards' {shard_targets:?}");
    // Each second's the sum of the shards' second's (their spans a late
    // tick of a loaded machine shifts: not 1000 and 1500.25 to the unit).
    for (k, got) in targets.iter().enumerate().take(2) {
        let want: f64 = shard_targets.iter().filter_map(|t| t.get(k)).sum();
        assert!((got - want).abs() < want * 0.02, "merged targets {targets:?}, the shards' {shard_targets:?}");
    }
    // The stages' integral is 5001 arrivals: each ran, waited at the end or
    // was dropped.
    let last = final_line(&lines);
    let events = last["counters"]["transactions"].as_f64().unwrap();
    let (dropped, backlog) = (last["rate"]["dropped"].as_f64().unwrap(), last["rate"]["backlog"].as_f64().unwrap());
    let all = events + dropped + backlog;
    assert!((all / 5001.0 - 1.0).abs() < 0.03, "{events} events, {dropped} dropped, {backlog} left of 5001");
}

/// sysbench's oltp_point_select.lua, run by the Lua engine (`--lua`) and
/// as the built-in test its path names: the events come on the stages'
/// schedule, every second past the first has its share (none shows tps 0).
#[test]
fn a_lua_script_runs_under_stages() {
    let _light = light_on_the_cores();
    let Some(script) = Some("/usr/share/sysbench/oltp_point_select.lua").filter(|p| std::path::Path::new(p).exists())
    else {
        panic!("sysbench's scripts are not installed (scripts/test.sh installs sysbench)");
    };
    let server = null_server(Duration::ZERO);
    for engine in ["--lua=on", "--lua=off"] {
        let args = [script, engine, "--threads=2", "--rate-stages=500:1,1500:2,1500:1", "--rate-arrival=fixed"];
        let args = [&args[..], &["--report-interval=1", "--format=json", "run"]].concat();
        common::in_one_of_three_runs(|| {
            let lines = json_lines(&against(&server, &args).ok());
            runs_on_the_ramp(&lines).map_err(|e| format!("{engine}: {e}"))
        });
    }
}

fn runs_on_the_ramp(lines: &[Value]) -> Result<(), String> {
    let intervals = intervals(lines);
    check(intervals.len() >= 3, || format!("{} intervals", intervals.len()))?;
    // The ramp from 500 to 1500 over 2 s, then the hold.
    let stages = [(500.0, 1.0), (1500.0, 2.0), (1500.0, 1.0)];
    let (mut due, mut accounted) = (0.0, 0.0);
    for (k, interval) in intervals.iter().enumerate() {
        (due, accounted) = every_arrival_accounted_for(interval, (due, accounted), 2.0)
            .map_err(|e| format!("second {}: {e}", k + 1))?;
        if !(1..=3).contains(&k) {
            continue;
        }
        let (tps, target) = (interval["rates"]["tps"].as_f64().unwrap(), interval["target_rate"].as_f64().unwrap());
        let want = span_target(&stages, interval);
        check((target - want).abs() < want * 0.01 + 1.0, || format!("second {}: target {target}, not {want}", k + 1))?;
        // The ramp's first second may start a little behind; never at 0.
        let bound = if k > 1 { 0.05 } else { 0.5 };
        let kept_up = kept_up(&intervals, k, 2.0);
        check(!kept_up || (tps / target - 1.0).abs() < bound, || {
            format!("second {}: achieved {tps} of {target}", k + 1)
        })?;
        check(tps > 0.0, || format!("second {}: no event", k + 1))?;
    }
    // The stages' integral: each arrival ran, waited at the end or was
    // dropped.
    let last = final_line(lines);
    let events = last["counters"]["transactions"].as_f64().unwrap();
    let (dropped, backlog) = (last["rate"]["dropped"].as_f64().unwrap(), last["rate"]["backlog"].as_f64().unwrap());
    let all = events + dropped + backlog;
    check((all / 4000.0 - 1.0).abs() < 0.03, || format!("{events} events, {dropped} dropped, {backlog} left of 4000"))
}

/// Checkpoints carry their own rate block: the drops of their span, not
/// the run's so far. One connection to a server 2 ms slow holds about
/// 500/s; the stage at 3000/s drops the rest once arrivals are a second
/// overdue. The header lists the stages.
#[test]
fn each_checkpoint_counts_its_own_drops() {
    let _light = light_on_the_cores();
    let server = null_server(Duration::from_millis(2));
    let args = ["oltp_point_select", "--threads=1", "--rate-stages=100:1,3000:0,3000:3", "--report-checkpoints=1,2,3"];
    let text = against(&server, &[&args[..], &["run"]].concat()).ok();
    let header = "Target transaction rate in stages (each moves it linearly to its rate over its seconds): \
                  holds 100/sec over 1s, to 3000/sec over 0s, to 3000/sec over 3s; 4s in all\n";
    assert!(text.contains(header), "{text}");
    let dropped: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Dropped: "))
        .map(|rest| rest.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(dropped.len(), 4, "three checkpoints and the final report:\n{text}");
    assert_eq!(dropped[0], 0, "the first second is within capacity: {dropped:?}");
    // A span of a second at 3000/s cannot drop more than it brought: a
    // count carried over from the checkpoint before would.
    for (k, &n) in dropped.iter().enumerate().skip(2) {
        assert!(n > 500, "span {}: the overload drops: {dropped:?}", k + 1);
        assert!(n < 3_300, "span {}: its own drops only: {dropped:?}", k + 1);
    }
    let targets = text.lines().filter(|l| l.starts_with("Rate: --rate-stages, mean target ")).count();
    assert_eq!(targets, 4, "{text}");
}

/// The refusals name both options and what to do; a bad stage is named.
#[test]
fn refusals_name_the_options() {
    let refused = |args: &[&str]| {
        let out = common::wirebench().args(args).arg("run").output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--time=5"]);
    assert!(e.contains("--time with --rate-stages") && e.contains("drop --time"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--rate=7"]);
    assert!(e.contains("--rate=7 with --rate-stages") && e.contains("--rate-stages=7:SECONDS"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--events=70"]);
    assert!(e.contains("--events=70 with --rate-stages") && e.contains("drop --events"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5,20:x"]);
    assert!(e.contains("stage 2 is '20:x'"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5,20"]);
    assert!(e.contains("stage 2 is '20'"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:0"]);
    assert!(e.contains("last 0 seconds"), "{e}");
    let e = refused(&["oltp_point_select", "--rate-stages=10:5", "--threads=1,2"]);
    assert!(e.contains("a --threads list with --rate-stages"), "{e}");
}

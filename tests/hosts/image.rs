//! deploy/Containerfile built and run with podman, as a user of the
//! Kubernetes Job would build and run it. No registry can be pulled from
//! here, so the bases are made on this host: Debian bookworm root
//! filesystems from the Debian mirror apt uses (debootstrap), the build base
//! with gcc and make and this host's Rust toolchain copied in (standing for
//! rust:1-bookworm), the runtime base trimmed as Debian's slim image is;
//! both `podman import`ed and given as the build arguments. Three
//! containers of the image then run the shards of one run against the test
//! MariaDB (host network), and the image merges their JSON results and
//! their `--hdr-log`s.
//!
//! podman runs with runc (crun refuses this machine's hybrid cgroups) and
//! `default_ulimits = []` (a container may not set its own rlimits here),
//! through a containers.conf of the test's own in CONTAINERS_CONF, and
//! keeps its images in storage of the test's own, removed at the end.

use crate::common::{self, text};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use common::{ScratchDir, TestServer};
use serde_json::Value;

const SUITE: &str = "bookworm";
const BUILD_BASE: &str = "localhost/wirebench-test-build:base";
const RUNTIME_BASE: &str = "localhost/wirebench-test-runtime:base";
const IMAGE: &str = "localhost/wirebench-test:image";
/// Its own database, apart from `sbtest` and from shards.rs's tables.
const DATABASE: &str = "sbtest_image";
/// What the build base adds to minbase: what the vendored LuaJIT and ring
/// build with, and certificates for cargo should it have to fetch a crate.
const BUILD_PACKAGES: &str = "gcc,libc6-dev,make,ca-certificates";
/// Left out of the runtime base, as Debian's slim images leave them out.
const NOT_IN_SLIM: [&str; 6] =
    ["var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale"];

/// The programs the test runs, or `None` (the test is skipped, after one
/// line saying why) where one is missing or this is not root; with
/// WIREBENCH_REQUIRE_SERVER=1, as in CI, that fails the test instead.
fn tools_present() -> Option<()> {
    let path = std::env::var("PATH").unwrap_or_default() + ":/usr/sbin:/sbin";
    let missing: Vec<&str> = ["podman", "runc", "debootstrap"]
        .into_iter()
        .filter(|tool| !path.split(':').any(|dir| Path::new(dir).join(tool).is_file()))
        .collect();
    let is_root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let message = if !missing.is_empty() {
        format!("no {}: apt-get install podman runc debootstrap (scripts/test.sh does)", missing.join(", "))
    } else if !is_root {
        "the image test runs debootstrap and podman's storage as root".to_owned()
    } else {
        return Some(());
    };
    common::unavailable(&message);
    None
}

/// `command`'s output, which must be a success.
fn succeeded(command: &mut Command) -> Output {
    let output = command.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}\n{}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    output
}

/// Waits for `child`, whose output goes to `log`; a failure shows the log's end.
fn finished(mut child: Child, log: &Path) {
    let status = child.wait().unwrap();
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = output.lines().rev().take(60).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    assert!(status.success(), "{} ({status}), its last lines:\n{}", log.display(), tail.join("\n"));
}

/// podman with the test's containers.conf and storage.
struct Podman {
    dir: PathBuf,
}

impl Podman {
    fn new(scratch: &Path) -> Podman {
        let dir = scratch.join("podman");
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let conf = format!(
            "[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = \"runc\"\ntmp_dir = \"{}\"\n",
            dir.join("tmp").display()
        );
        std::fs::write(dir.join("containers.conf"), conf).unwrap();
        Podman { dir }
    }

    fn command(&self) -> Command {
        let mut command = Command::new("podman");
        command
            .env("CONTAINERS_CONF", self.dir.join("containers.conf"))
            .arg("--root")
            .arg(self.dir.join("storage"))
            .arg("--runroot")
            .arg(self.dir.join("run"));
        command
    }

    /// A container of the image on the host's network, given `args`.
    fn run(&self, args: &[String]) -> Command {
        let mut command = self.command();
        command.args(["run", "--rm", "--network=host"]).arg(IMAGE).args(args);
        command
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        // The storage goes with the scratch directory once nothing in it is in use.
        let _ = self.command().args(["rm", "--all", "--force"]).output();
        let _ = self.command().args(["rmi", "--all", "--force"]).output();
    }
}

/// The mirror apt takes bookworm's packages from
/// (`WIREBENCH_DEBIAN_MIRROR` overrides it).
fn debian_mirror() -> String {
    if let Ok(mirror) = std::env::var("WIREBENCH_DEBIAN_MIRROR") {
        return mirror;
    }
    let output = succeeded(Command::new("apt-get").args([
        "indextargets",
        "--no-release-info",
        "Identifier: Packages",
        "--format",
        "$(REPO_URI) $(RELEASE)",
    ]));
    let targets = text(&output.stdout);
    let found = targets.lines().find_map(|line| line.strip_suffix(&format!(" {SUITE}")));
    let message = format!("apt has no source for {SUITE}: set WIREBENCH_DEBIAN_MIRROR to a Debian mirror's URL");
    found.unwrap_or_else(|| panic!("{message}\n{targets}")).to_owned()
}

/// debootstrap of a minbase bookworm with `include`d packages into `root`,
/// started; its output in `root`.log.
fn start_debootstrap(root: &Path, include: Option<&str>, mirror: &str) -> (Child, PathBuf) {
    let log = root.with_extension("log");
    let mut command = Command::new("debootstrap");
    command.arg("--variant=minbase");
    if let Some(packages) = include {
        command.arg(format!("--include={packages}"));
    }
    command.arg(SUITE).arg(root).arg(mirror).stdin(Stdio::null());
    let out = std::fs::File::create(&log).unwrap();
    let child = command.stdout(out.try_clone().unwrap()).stderr(out).spawn().unwrap();
    (child, log)
}

/// cargo and rustc of the toolchain running this test, with their
/// libraries, copied to /usr/local/rust in `root`.
fn copy_toolchain(root: &Path) {
    let sysroot = text(&succeeded(Command::new("rustc").args(["--print", "sysroot"])).stdout).trim().to_owned();
    let sysroot = Path::new(&sysroot);
    // A distribution's rustc has /usr for its sysroot: not a toolchain to copy.
    let copyable =
        sysroot.join("bin/cargo").is_file() && sysroot.join("lib/rustlib").is_dir() && sysroot != Path::new("/usr");
    assert!(
        copyable,
        "{}: not a rustup toolchain (bin/cargo, lib/rustlib) to copy into the build base",
        sysroot.display()
    );
    let target = root.join("usr/local/rust");
    std::fs::create_dir_all(target.join("bin")).unwrap();
    succeeded(
        Command::new("cp")
            .arg("-a")
            .arg(sysroot.join("bin/cargo"))
            .arg(sysroot.join("bin/rustc"))
            .arg(target.join("bin")),
    );
    succeeded(Command::new("cp").arg("-a").arg(sysroot.join("lib")).arg(&target));
}

/// `root` (less NOT_IN_SLIM) imported as the image `name`, with the
/// `ENV` lines `env`.
fn import(podman: &Podman, root: &Path, name: &str, env: &[&str]) {
    let mut tar = Command::new("tar");
    tar.arg("-C").arg(root).args(NOT_IN_SLIM.map(|path| format!("--exclude=./{path}"))).args(["-c", "."]);
    let mut tar = tar.stdout(Stdio::piped()).spawn().unwrap();
    let mut import = podman.command();
    import.arg("import");
    for line in env {
        import.arg("--change").arg(format!("ENV {line}"));
    }
    import.args(["-", name]).stdin(tar.stdout.take().unwrap());
    let output = import.output().unwrap();
    assert!(tar.wait().unwrap().success(), "tar of {}", root.display());
    assert!(output.status.success(), "podman import {name}: {}", text(&output.stderr));
}

/// The two bases, made in `scratch` and imported.
fn make_bases(podman: &Podman, scratch: &Path) {
    let mirror = debian_mirror();
    let (build_root, runtime_root) = (scratch.join("build-root"), scratch.join("runtime-root"));
    // Two at once: each waits on the network and dpkg as much as on a core.
    let build = start_debootstrap(&build_root, Some(BUILD_PACKAGES), &mirror);
    let runtime = start_debootstrap(&runtime_root, None, &mirror);
    finished(build.0, &build.1);
    finished(runtime.0, &runtime.1);
    copy_toolchain(&build_root);
    let path =
        "PATH=/usr/local/rust/bin:/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    import(podman, &build_root, BUILD_BASE, &[path, "CARGO_HOME=/usr/local/cargo"]);
    import(podman, &runtime_root, RUNTIME_BASE, &[]);
}

/// `podman build -f deploy/Containerfile` from the local bases. The
/// crates come from this host's cargo registry, mounted where the build
/// base's CARGO_HOME keeps them (cargo may still fetch one it lacks).
fn build_image(podman: &Podman, scratch: &Path) {
    let log = scratch.join("build.log");
    let mut build = podman.command();
    build.args(["build", "-f", "deploy/Containerfile", "--network=host", "-t", IMAGE]);
    build.arg(format!("--build-arg=BUILD_IMAGE={BUILD_BASE}")).arg(format!("--build-arg=RUNTIME_IMAGE={RUNTIME_BASE}"));
    let home = std::env::var_os("CARGO_HOME").map(PathBuf::from);
    let registry =
        home.or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo"))).map(|h| h.join("registry"));
    if let Some(registry) = registry.filter(|r| r.is_dir()) {
        build.arg(format!("--volume={}:/usr/local/cargo/registry", registry.display()));
    }
    build.arg(".").current_dir(env!("CARGO_MANIFEST_DIR")).stdin(Stdio::null());
    let out = std::fs::File::create(&log).unwrap();
    let child = build.stdout(out.try_clone().unwrap()).stderr(out).spawn().unwrap();
    finished(child, &log);
}

/// The image is the runtime base plus the binary and its `sysbench` link,
/// run as a numeric non-root user; its size in bytes.
fn check_image(podman: &Podman) -> u64 {
    let diff = text(&succeeded(podman.command().args(["diff", IMAGE, RUNTIME_BASE])).stdout);
    let mut added: Vec<&str> = diff.lines().filter_map(|l| l.strip_prefix("A ")).collect();
    added.sort_unstable();
    assert_eq!(added, ["/usr/local/bin/sysbench", "/usr/local/bin/wirebench"], "{diff}");
    let format = "{{.Config.User}} {{json .Config.Entrypoint}} {{.Size}}";
    let inspect = text(&succeeded(podman.command().args(["image", "inspect", "--format", format, IMAGE])).stdout);
    let fields: Vec<&str> = inspect.split_whitespace().collect();
    assert_eq!(fields[..2], ["65532:65532", r#"["wirebench"]"#], "{inspect}");
    let version = succeeded(podman.run(&[]).args(["--version"]));
    assert!(text(&version.stdout).starts_with("wirebench "), "{}", text(&version.stdout));
    fields[2].parse().unwrap()
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// bulk_insert's `args` as `sysbench` (the link in the image), which
/// says so in its banner.
fn as_sysbench(podman: &Podman, args: &[String]) {
    let mut command = podman.command();
    command.args(["run", "--rm", "--network=host", "--entrypoint=sysbench", IMAGE]).args(args);
    let output = succeeded(&mut command);
    assert!(text(&output.stdout).starts_with("sysbench 1.0.20 (wirebench "), "{}", text(&output.stdout));
}

/// Three containers, each a shard of `args`'s run, all starting at one
/// instant; their JSON results in `dir`/shard-I.json, and their
/// `--hdr-log`s, which they write as the Job's pods do, to `dir` mounted
/// as /results (writable by all, as the Job's emptyDir), shard-I.hdr.
fn run_shards(podman: &Podman, args: &[String], dir: &Path) {
    std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let start_at = format!("--start-at={:.3}", unix_now() + 5.0);
    let children: Vec<(Child, PathBuf)> = (0..3)
        .map(|shard| {
            let mut command = podman.command();
            command.args(["run", "--rm", "--network=host"]).arg(format!("--volume={}:/results", dir.display()));
            command.arg(IMAGE).args(args).arg(format!("--hdr-log=/results/shard-{shard}.hdr"));
            command.arg(format!("--shard={shard}/3")).args([&start_at, "--format=json", "run"]);
            let log = dir.join(format!("shard-{shard}.err"));
            command.stdout(std::fs::File::create(dir.join(format!("shard-{shard}.json"))).unwrap());
            (command.stderr(std::fs::File::create(&log).unwrap()).stdin(Stdio::null()).spawn().unwrap(), log)
        })
        .collect();
    for (child, log) in children {
        finished(child, &log);
    }
}

/// A shard's JSON result says which shard it ran; its final result.
fn shard_result(dir: &Path, shard: u64) -> Value {
    let result = std::fs::read_to_string(dir.join(format!("shard-{shard}.json"))).unwrap();
    let last: Value =
        serde_json::from_str(result.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {result}"));
    assert_eq!(last["run"]["shard"]["index"], shard, "{result}");
    assert_eq!(last["run"]["shard"]["count"], 3, "{result}");
    last
}

/// `wirebench merge` of the shards' `extension` files in a container,
/// `dir` mounted read-only.
fn merge_in_image(podman: &Podman, dir: &Path, extension: &str) -> String {
    let mut command = podman.command();
    command.args(["run", "--rm"]).arg(format!("--volume={}:/results:ro", dir.display())).args([IMAGE, "merge"]);
    command.args((0..3).map(|shard| format!("/results/shard-{shard}.{extension}")));
    text(&succeeded(&mut command).stdout)
}

/// The number after `label` in a report.
fn reported(report: &str, label: &str) -> u64 {
    let line =
        report.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}\n{report}"));
    line.trim_start()[label.len()..].split_whitespace().next().unwrap().parse().unwrap()
}

fn rows_in_tables(server: &TestServer) -> u64 {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut conn =
            wirebench::client::Connection::connect(&server.options(server.tcp()).database(DATABASE)).await.unwrap();
        let sql =
            "SELECT (SELECT COUNT(*) FROM sbtest1) + (SELECT COUNT(*) FROM sbtest2) + (SELECT COUNT(*) FROM sbtest3)";
        let response = conn.query(sql).await.unwrap();
        common::rows(&response)[0][0].as_deref().unwrap().parse().unwrap()
    })
}

/// The image built from local bases holds the binary alone, answers as
/// `sysbench` too, and three containers of it run the shards of a
/// bulk_insert run of exactly 600 rows, which another merges: the shards'
/// transactions, the merged report and the server's rows all say 600, and
/// the merged `--hdr-log`s, written by the containers' user to a mounted
/// volume, hold the latencies the results count.
#[test]
fn image_from_local_bases_runs_shards_that_merge() {
    let Some(server) = TestServer::find_beside_others() else { return };
    let Some(()) = tools_present() else { return };
    let scratch = ScratchDir::new("image");
    let podman = Podman::new(&scratch.0);
    let started = Instant::now();
    make_bases(&podman, &scratch.0);
    let bases_s = started.elapsed().as_secs();
    build_image(&podman, &scratch.0);
    let build_s = started.elapsed().as_secs() - bases_s;
    let size = check_image(&podman);
    let mut args = server.login_args(DATABASE);
    args.extend(["bulk_insert", "--threads=3"].map(String::from));
    let with = |extra: &str| [args.clone(), vec![extra.to_owned()]].concat();
    as_sysbench(&podman, &with("cleanup"));
    as_sysbench(&podman, &with("prepare"));
    let shards = scratch.0.join("shards");
    std::fs::create_dir(&shards).unwrap();
    run_shards(&podman, &[args.clone(), ["--events=600", "--time=0"].map(String::from).to_vec()].concat(), &shards);
    let results: Vec<Value> = (0..3).map(|shard| shard_result(&shards, shard)).collect();
    let transactions: Vec<u64> = results.iter().map(|r| r["counters"]["transactions"].as_u64().unwrap()).collect();
    assert_eq!(transactions, [200, 200, 200]);
    // bulk_insert times each connection's INSERT, not each row.
    let latencies: u64 = results.iter().map(|r| r["latency_ms"]["count"].as_u64().unwrap()).sum();
    let merged = merge_in_image(&podman, &shards, "json");
    assert!(merged.starts_with("Merged 3 of 3 shards of run "), "{merged}");
    assert_eq!(reported(&merged, "total number of events:"), 600, "{merged}");
    let logs = merge_in_image(&podman, &shards, "hdr");
    assert!(logs.starts_with("Merged 3 of 3 shards' --hdr-log files of run "), "{logs}");
    assert_eq!(reported(&logs, "events:"), latencies, "the logs hold every latency the results count: {logs}");
    assert_eq!(rows_in_tables(&server), 600);
    as_sysbench(&podman, &with("cleanup"));
    eprintln!(
        "image test: bases {bases_s} s, build {build_s} s, runs {} s; image {:.1} MB",
        started.elapsed().as_secs() - bases_s - build_s,
        size as f64 / 1e6
    );
}

/// The Job's image is `@IMAGE@`, and its comment builds the image with
/// deploy/Containerfile, pushes it and puts its name in.
#[test]
fn job_manifest_shows_how_its_image_is_built() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("deploy/kubernetes/wirebench-job.yaml")).unwrap();
    let images: Vec<&str> = manifest.lines().filter(|l| l.trim_start().starts_with("image:")).collect();
    assert_eq!(images, [r#"          image: "@IMAGE@""#]);
    let comment: Vec<&str> = manifest.lines().filter_map(|l| l.strip_prefix("#   ")).collect();
    assert!(comment.contains(&"podman build -f deploy/Containerfile -t $IMAGE ."), "{comment:#?}");
    assert!(comment.contains(&"podman push $IMAGE"), "{comment:#?}");
    let apply = comment.iter().find(|l| l.contains("kubectl apply")).unwrap();
    assert!(apply.contains(r#"-e "s|@IMAGE@|$IMAGE|""#), "{apply}");
    assert!(root.join("deploy/Containerfile").is_file());
}

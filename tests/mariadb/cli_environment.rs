//! What the command line takes from the process around it: the cores it
//! may run on, its environment, option files, the terminal, and its own
//! argument list (which must not show a password to `ps`). Each test runs
//! the wirebench binary; the two that log in need the test MariaDB.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use common::{Ran, ScratchDir};

use common::WIREBENCH;

fn stderr(out: &Ran) -> String {
    out.stderr.clone()
}

#[test]
fn cpus_outside_the_affinity_are_refused_for_runs_and_the_null_server() {
    let outside = (common::allowed_cpus().iter().max().unwrap() + 1).to_string();
    let cpus = format!("--cpus={outside}");
    let run = common::run_wirebench(&["oltp_read_write", "--mysql-dry-run", "--time=1", &cpus, "run"]);
    let message = stderr(&run);
    assert_eq!(run.code, Some(1), "{message}");
    assert!(
        message.contains(&format!("--cpus: this process may not run on cpu {outside}; it may run on cpus ")),
        "{message}"
    );
    assert!(!&run.stdout.contains("Threads started"), "refused before the run starts");

    let server = common::run_wirebench(&["null-server", "--listen=127.0.0.1:0", &cpus]);
    let message = stderr(&server);
    assert_eq!(server.code, Some(1), "{message}");
    assert!(message.contains(&format!("cannot run on cpu {outside}: this process may run on cpus")), "{message}");
}

/// `ps` and /proc/PID/cmdline show `--mysql-password=xxxxxx` while the run
/// goes on, as the mysql client hides its `--password`.
#[test]
fn the_password_is_hidden_from_ps() {
    let secret = "s3cr3t-in-argv";
    let mut child = common::wirebench()
        .args(["oltp_point_select", "--mysql-dry-run", "--time=30", "--report-interval=1", "run"])
        .arg(format!("--mysql-password={secret}"))
        .arg(format!("--pgsql_password={secret}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("Threads started!") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout ended before the run started");
    }
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", child.id())).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let args: Vec<String> = cmdline.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    let masked = "x".repeat(secret.len());
    assert!(args.contains(&format!("--mysql-password={masked}")), "{args:?}");
    assert!(args.contains(&format!("--pgsql_password={masked}")), "{args:?}");
    assert!(!String::from_utf8_lossy(&cmdline).contains(secret), "{args:?}");
    assert!(args.contains(&"--time=30".to_owned()), "other arguments stay: {args:?}");
}

/// `--mysql-password` without a value and no controlling terminal (a
/// cron job, `setsid`): one line saying what to do instead.
#[test]
fn a_bare_password_without_a_terminal_is_refused() {
    let out = common::run(
        Command::new("setsid")
            .args(["-w", WIREBENCH, "oltp_point_select", "--mysql-password", "--mysql-host=127.0.0.1", "cleanup"])
            .stdin(Stdio::null()),
    );
    let message = stderr(&out);
    assert_eq!(out.code, Some(1), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with(
            "wirebench: --mysql-password has no value, so the password is asked for on the terminal, and there is \
             none (cannot open /dev/tty"
        ),
        "{message}"
    );
}

/// MariaDB checks the password before the database: a login refused the
/// database (1044, no access; 1049, unknown) had the right password, one
/// refused with 1045 had not. So these log in without touching any table.
const NO_SUCH_DB: &str = "--mysql-db=wirebench_no_such_db";

fn logged_in(stderr: &str) -> bool {
    let past_the_password = stderr.contains("ERROR 1044") || stderr.contains("ERROR 1049");
    assert!(past_the_password || stderr.contains("ERROR 1045"), "{stderr}");
    past_the_password
}

/// The real thing: `MYSQL_PWD` and a `~/.my.cnf` give the login; the
/// notes say so; the command line still wins.
#[test]
fn my_cnf_and_mysql_pwd_log_in_to_mariadb() {
    let Some(server) = common::TestServer::find() else { return };
    let home = ScratchDir::new("env-home");
    home.write(".my.cnf", &format!("[client]\nhost={}\nport={}\n[wirebench]\nuser=sbtest\n", server.host, server.port));
    let login = |pwd: &str, extra: &[&str]| {
        let mut command = common::wirebench();
        command.args(["oltp_point_select", NO_SUCH_DB]).args(extra).arg("cleanup");
        common::run(command.env("HOME", &home.0).env("MYSQL_PWD", pwd)).stderr
    };
    let message = login("sbtest", &[]);
    assert!(logged_in(&message), "{message}");
    assert!(message.contains("gives --mysql-user=sbtest (line 5), --mysql-host="), "{message}");
    assert!(message.contains("the environment gives --mysql-password (hidden) (MYSQL_PWD)"), "{message}");
    assert!(!logged_in(&login("wrong", &[])));
    assert!(logged_in(&login("wrong", &["--mysql-password=sbtest"])), "the command line wins");
}

/// `--mysql-password` alone asks on the terminal (a pty from script(1)),
/// echo off, and the typed password logs in.
#[test]
fn a_bare_password_is_asked_for_on_the_terminal_without_echo() {
    let Some(server) = common::TestServer::find() else { return };
    let command = format!(
        "{WIREBENCH} oltp_point_select --no-defaults --mysql-host={} --mysql-port={} --mysql-user=sbtest \
         --mysql-password {NO_SUCH_DB} cleanup",
        server.host, server.port
    );
    let mut child = Command::new("script")
        // --echo always: the pty echoes what is typed unless wirebench
        // turns that off (script's default turns it off itself when its
        // stdin is not a terminal).
        .args(["-q", "-e", "--echo", "always", "-c", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut terminal = child.stdout.take().unwrap();
    let mut shown = Vec::new();
    let mut byte = [0u8];
    while !shown.ends_with(b"Enter password: ") {
        assert_eq!(terminal.read(&mut byte).unwrap(), 1, "no prompt: {}", String::from_utf8_lossy(&shown));
        shown.push(byte[0]);
    }
    child.stdin.take().unwrap().write_all(b"sbtest\n").unwrap();
    terminal.read_to_end(&mut shown).unwrap();
    let _ = child.wait();
    let shown = String::from_utf8_lossy(&shown);
    assert!(logged_in(&shown), "{shown}");
    assert!(!shown.contains("Enter password: sbtest"), "the password was echoed: {shown}");
}

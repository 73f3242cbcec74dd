//! A Lua script on standard input, as sysbench 1.0.20 reads one when no
//! test is named (`sysbench [options] < my.lua`, or `-` for the name):
//! its top level runs; with a command after `-` (which sysbench ignores)
//! the command runs as the same script's from a file does. The run
//! against MariaDB uses database sbtest_lua, as tests/mariadb/lua_mariadb.rs;
//! skipped without a server unless WIREBENCH_REQUIRE_SERVER=1.

use crate::common::{self, text};

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use common::TestServer;

const STOCK_DIR: &str = "/usr/share/sysbench";

/// wirebench with `args`, `input` on its standard input.
fn with_stdin(args: &[String], input: &[u8]) -> Output {
    let mut child = common::wirebench()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wirebench starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    // A refusal may come before the script is read: a closed pipe is fine.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().expect("wirebench ends")
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// No test named: the script's top level runs and nothing else, with
/// `sysbench.cmdline.script_path` nil and the command as given after `-`.
#[test]
fn the_top_level_of_a_script_on_stdin_runs() {
    let script = b"print('top', sysbench.cmdline.script_path, sysbench.cmdline.command, sysbench.tid)\n";
    let output = with_stdin(&args(&["--verbosity=0"]), script);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(text(&output.stdout), "top\tnil\tnil\t0\n");
    let output = with_stdin(&args(&["--verbosity=0", "-", "frob"]), b"print(sysbench.cmdline.command)\n");
    // A command the script does not have is refused as a file's would be.
    assert!(!output.status.success());
    assert_eq!(text(&output.stdout), "frob\n");
    assert!(text(&output.stderr).contains("unknown command 'frob' for <stdin>"), "{output:?}");
}

/// What goes wrong with a script on stdin is said in one line, naming the
/// script as sysbench does (`stdin:LINE:` in Lua's messages, `<stdin>`).
#[test]
fn a_bad_script_on_stdin_is_refused_in_one_line() {
    let cases: [(&[&str], &[u8], &str); 7] = [
        (&[], b"", "no test named and standard input is empty: name a test"),
        (&["-", "run"], b"  \n", "no test named and standard input is empty"),
        (&[], b"print('hi' \n", "stdin:2: ')' expected (to close '(' at line 1) near '<eof>'"),
        (&[], b"\nerror('boom')\n", "stdin:2: boom"),
        (&["-", "run"], b"x = 1\n", "cannot find the event() function in <stdin>"),
        (&["--events=5", "run"], b"function event() end\n", "'run' is a command, with no test named before it"),
        (&["-", "run", "extra"], b"function event() end\n", "unexpected argument 'extra'"),
    ];
    for (words, input, expected) in cases {
        let output = with_stdin(&args(words), input);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{words:?}: {output:?}");
        assert!(stderr.contains(expected), "{words:?} {:?}: {stderr}", text(input));
        assert_eq!(stderr.trim_end().lines().count(), 1, "{words:?}: one line, got {stderr:?}");
    }
}

/// A stock script sent on stdin (`- run`) runs as the same script given by
/// its path does: the same counts with the same seed.
#[test]
fn a_script_on_stdin_counts_as_from_its_file() {
    let Some(server) = TestServer::find() else { return };
    let script = Path::new(STOCK_DIR).join("oltp_read_only.lua");
    let Ok(source) = std::fs::read(&script) else {
        common::unavailable(&format!("no {} (apt-get install sysbench)", script.display()));
        return;
    };
    let mut options = server.login_args("sbtest_lua");
    options.extend(args(&["--tables=2", "--table-size=300", "--threads=2", "--rand-seed=7"]));
    let from_file = |words: &[&str]| {
        let mut line = vec![script.display().to_string(), "--lua".to_owned()];
        line.extend(options.iter().cloned());
        line.extend(args(words));
        with_stdin(&line, b"")
    };
    let ok = |output: Output, what: &str| {
        assert!(output.status.success(), "{what}: {output:?}");
        text(&output.stdout)
    };
    ok(from_file(&["cleanup"]), "cleanup");
    ok(from_file(&["prepare"]), "prepare");
    let file_report = ok(from_file(&["--events=40", "run"]), "run from the file");
    let mut line = options.clone();
    line.extend(args(&["--events=40", "-", "run"]));
    let stdin_report = ok(with_stdin(&line, &source), "run from stdin");
    ok(from_file(&["cleanup"]), "cleanup");
    let counts = |report: &str| -> Vec<String> {
        report
            .lines()
            .filter(|l| ["read:", "write:", "other:", "total:", "transactions:"].iter().any(|k| l.contains(k)))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(counts(&stdin_report).len(), 5, "{stdin_report}");
    assert_eq!(counts(&stdin_report), counts(&file_report), "stdin:\n{stdin_report}\nfile:\n{file_report}");
    assert!(stdin_report.contains("transactions:                        40"), "{stdin_report}");
}

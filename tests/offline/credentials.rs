//! The login from where the mysql client finds it: the command line, then
//! option files (`~/.my.cnf`, `--defaults-file`, `--defaults-extra-file`,
//! `!include`, `!includedir`), then `MYSQL_PWD`, `MYSQL_HOST`,
//! `MYSQL_TCP_PORT`, `MYSQL_UNIX_PORT`; a note for whatever they supply,
//! never a password in a message. Parsed with injected sources (no real
//! environment, home or terminal), so nothing here depends on the machine.

use crate::common;

use std::ffi::OsString;
use std::path::PathBuf;

use common::ScratchDir;
use wirebench::cli::{parse, parse_with, Bench, CliError, CredentialSources, Invocation, TerminalError};

/// What the injected terminal "types".
const TYPED: &str = "typed at the terminal";
const SECRET: &str = "s3cr3t-never-shown";

fn typing(_prompt: &str) -> Result<String, TerminalError> {
    Ok(TYPED.to_owned())
}

fn no_terminal(_prompt: &str) -> Result<String, TerminalError> {
    Err(TerminalError::Unavailable(std::io::Error::from_raw_os_error(6)))
}

fn sources(env: &[(&'static str, &str)], home: Option<&ScratchDir>) -> CredentialSources {
    CredentialSources {
        env: env.iter().map(|&(name, value)| (name, value.to_owned())).collect(),
        home: home.map(|dir| dir.0.clone()),
        ask_password: typing,
    }
}

fn args(words: &str) -> Vec<OsString> {
    words.split_whitespace().map(OsString::from).collect()
}

fn bench_with(words: &str, sources: &CredentialSources) -> Bench {
    match parse_with(args(words), sources) {
        Ok(Invocation::Bench(bench)) => *bench,
        other => panic!("{words}: {other:?}"),
    }
}

fn refused_with(words: &str, sources: &CredentialSources) -> String {
    match parse_with(args(words), sources) {
        Err(err) => err.to_string(),
        Ok(ok) => panic!("{words}: accepted: {ok:?}"),
    }
}

fn notes(bench: &Bench) -> String {
    bench.notes.join("\n")
}

#[test]
fn without_sources_a_command_line_means_what_it_means_to_sysbench() {
    let home = ScratchDir::new("cred-ignored");
    home.write(".my.cnf", "[client]\nuser=alice\n");
    let b = match parse(args("oltp_read_write run")).unwrap() {
        Invocation::Bench(b) => b,
        other => panic!("{other:?}"),
    };
    assert_eq!((b.mysql.user.as_str(), b.mysql.password.as_str()), ("sbtest", ""));
    assert!(b.notes.is_empty(), "{:?}", b.notes);
}

#[test]
fn environment_fills_what_the_command_line_leaves() {
    let env =
        [("MYSQL_PWD", SECRET), ("MYSQL_HOST", "db1"), ("MYSQL_TCP_PORT", "3307"), ("MYSQL_UNIX_PORT", "/x.sock")];
    let b = bench_with("oltp_read_write run", &sources(&env, None));
    assert_eq!(b.mysql.password, SECRET);
    assert_eq!(b.mysql.servers.hosts, ["db1"]);
    assert_eq!(b.mysql.servers.ports, [3307]);
    assert_eq!(b.mysql.servers.localhost_socket, None, "db1 is not localhost: the socket does not apply");
    let text = notes(&b);
    assert!(
        text.contains("the environment gives --mysql-host=db1 (MYSQL_HOST), --mysql-port=3307 (MYSQL_TCP_PORT)"),
        "{text}"
    );
    assert!(text.contains("--mysql-password (hidden) (MYSQL_PWD)"), "{text}");
    assert!(!text.contains(SECRET), "{text}");

    let b =
        bench_with("oltp_read_write run --mysql-password=cli --mysql-host=db2 --mysql-port=4000", &sources(&env, None));
    assert_eq!((b.mysql.password.as_str(), b.mysql.servers.hosts[0].as_str()), ("cli", "db2"));
    assert_eq!(b.mysql.servers.ports, [4000]);
    assert!(b.notes.is_empty(), "the command line set everything the environment has: {:?}", b.notes);

    let local = bench_with("oltp_read_write run", &sources(&[("MYSQL_UNIX_PORT", "/x.sock")], None));
    assert_eq!(local.mysql.servers.localhost_socket, Some(PathBuf::from("/x.sock")));
    assert!(notes(&local).contains("the socket of host localhost, /x.sock (MYSQL_UNIX_PORT)"), "{:?}", local.notes);

    // An empty password counts as none, as libmariadb reads it.
    let b = bench_with("oltp_read_write run --mysql-password=", &sources(&[("MYSQL_PWD", SECRET)], None));
    assert_eq!(b.mysql.password, SECRET);

    let err = refused_with("oltp_read_write run", &sources(&[("MYSQL_TCP_PORT", "33o6")], None));
    assert_eq!(err, "environment variable MYSQL_TCP_PORT: not a port from 1 to 65535; unset it or fix it");
}

#[test]
fn my_cnf_groups_client_and_wirebench_win_over_the_environment() {
    let home = ScratchDir::new("cred-home");
    home.write(
        ".my.cnf",
        &format!(
            "# the mysql client's file\n[mysqld]\nuser=mysql\n[client]\nuser = alice\npassword = \"{SECRET}\" # quoted\n\
             ssl-ca=/ca.pem\n[wirebench]\nhost=db9\nloose-unknown=1\n"
        ),
    );
    let env = [("MYSQL_PWD", "from-env"), ("MYSQL_HOST", "db1")];
    let b = bench_with("oltp_read_write run --mysql-db=test", &sources(&env, Some(&home)));
    assert_eq!((b.mysql.user.as_str(), b.mysql.password.as_str(), b.mysql.db.as_str()), ("alice", SECRET, "test"));
    assert_eq!(b.mysql.servers.hosts, ["db9"]);
    let text = notes(&b);
    let file = home.0.join(".my.cnf");
    assert!(
        text.contains(&format!(
            "option file {} gives --mysql-user=alice (line 5), --mysql-host=db9 (line 9), --mysql-password (hidden) \
             (line 6) (sysbench reads no option file",
            file.display()
        )),
        "{text}"
    );
    assert!(!text.contains(SECRET) && !text.contains("the environment"), "{text}");

    let plain = bench_with("oltp_read_write run --no-defaults", &sources(&[], Some(&home)));
    assert_eq!((plain.mysql.user.as_str(), plain.mysql.password.as_str()), ("sbtest", ""));
    assert!(plain.notes.is_empty(), "{:?}", plain.notes);
}

#[test]
fn defaults_file_alone_extra_file_after_and_includes() {
    let home = ScratchDir::new("cred-files");
    home.write(".my.cnf", "[client]\nuser=from-home\nport=3001\n");
    let only = home.write("only.cnf", "[client]\nport=3002\n");
    let b = bench_with(&format!("oltp_read_write run --defaults-file={}", only.display()), &sources(&[], Some(&home)));
    assert_eq!((b.mysql.user.as_str(), b.mysql.servers.ports[0]), ("sbtest", 3002), "only that file");

    let conf_d = home.0.join("conf.d");
    std::fs::create_dir(&conf_d).unwrap();
    std::fs::write(conf_d.join("20-b.cnf"), "[client]\nport=3020\n").unwrap();
    std::fs::write(conf_d.join("10-a.cnf"), "[client]\nport=3010\ndatabase=from-dir\n").unwrap();
    std::fs::write(conf_d.join("ignored.txt"), "[client]\nport=9999\n").unwrap();
    let included = home.write("included.cnf", "[wirebench]\nuser=from-include\n");
    let extra = home.write(
        "extra.cnf",
        &format!("!include {}\n!includedir {}\n[client]\nhost=127.0.0.1\n", included.display(), conf_d.display()),
    );
    let b = bench_with(
        &format!("oltp_read_write run --defaults-extra-file={}", extra.display()),
        &sources(&[], Some(&home)),
    );
    assert_eq!(b.mysql.user, "from-include", "the extra file is read after ~/.my.cnf");
    assert_eq!(b.mysql.servers.ports, [3020], "!includedir reads *.cnf by name");
    assert_eq!(b.mysql.db, "from-dir");
    assert_eq!(b.mysql.servers.hosts, ["127.0.0.1"]);

    let err = refused_with(
        &format!("oltp_read_write run --no-defaults --defaults-file={}", only.display()),
        &sources(&[], None),
    );
    assert!(err.contains("--no-defaults reads no option file"), "{err}");
    let err = refused_with("oltp_read_write run --defaults-file=/nonexistent/my.cnf", &sources(&[], None));
    assert!(err.starts_with("option file /nonexistent/my.cnf: cannot read it"), "{err}");
    let looping = home.write("loop.cnf", "");
    std::fs::write(&looping, format!("!include {}\n", looping.display())).unwrap();
    let err = refused_with(&format!("oltp_read_write run --defaults-file={}", looping.display()), &sources(&[], None));
    assert!(err.contains("nested more than 10 deep"), "{err}");
}

#[test]
fn option_file_refusals_name_the_file_and_line_never_the_password() {
    let dir = ScratchDir::new("cred-bad");
    for (text, needle) in [
        (format!("password={SECRET}\n"), "line 1: an option before any [group]: put it under [client]"),
        (
            "[wirebench]\nthreads=4\n".to_owned(),
            "line 2: [wirebench] takes user, password, host, port, socket and database",
        ),
        ("[client]\nport=abc\n".to_owned(), "line 2: port: not a port from 1 to 65535"),
        (format!("[client]\npassword=\"{SECRET}\n"), "line 2: no closing \" quote"),
        ("[client]\nuser\n".to_owned(), "line 2: user: needs a value"),
        ("[client\n".to_owned(), "line 1: no ']'"),
    ] {
        let path = dir.write("bad.cnf", &text);
        let err = refused_with(&format!("oltp_read_write run --defaults-file={}", path.display()), &sources(&[], None));
        assert!(err.starts_with(&format!("option file {}: ", path.display())), "{err}");
        assert!(err.contains(needle), "{text:?}: {err}");
        assert!(!err.contains(SECRET) && !err.contains('\n'), "{err}");
    }
}

/// An error in an included file names that file and its line, once.
#[test]
fn an_error_in_an_included_file_names_that_file() {
    let dir = ScratchDir::new("cred-include-bad");
    let inner = dir.write("inner.cnf", "[client]\nport=none\n");
    let outer = dir.write("outer.cnf", &format!("[client]\n!include {}\n", inner.display()));
    let err = refused_with(&format!("oltp_read_write run --defaults-file={}", outer.display()), &sources(&[], None));
    assert_eq!(err, format!("option file {}: line 2: port: not a port from 1 to 65535", inner.display()));
    let missing = dir.write("dir.cnf", "!includedir /nonexistent/conf.d\n");
    let err = refused_with(&format!("oltp_read_write run --defaults-file={}", missing.display()), &sources(&[], None));
    assert!(
        err.starts_with(&format!("option file {}: line 1: !includedir /nonexistent/conf.d: ", missing.display())),
        "{err}"
    );
}

#[test]
fn a_world_writable_option_file_is_ignored_as_the_mysql_client_does() {
    use std::os::unix::fs::PermissionsExt;
    let home = ScratchDir::new("cred-writable");
    let path = home.write(".my.cnf", "[client]\nuser=mallory\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let b = bench_with("oltp_read_write run", &sources(&[], Some(&home)));
    assert_eq!(b.mysql.user, "sbtest");
    assert!(notes(&b).contains("is writable by anyone") && notes(&b).contains("ignored"), "{:?}", b.notes);
}

#[test]
fn a_bare_password_is_asked_for_on_the_terminal() {
    let b = bench_with("oltp_read_write --mysql-password run", &sources(&[("MYSQL_PWD", "env")], None));
    assert_eq!(b.mysql.password, TYPED);
    let b = bench_with("--mysql-password oltp_read_write run", &sources(&[], None));
    assert_eq!(b.mysql.password, TYPED);
    let home = ScratchDir::new("cred-ask");
    home.write(".my.cnf", "[client]\npassword\n");
    let b = bench_with("oltp_read_write run", &sources(&[], Some(&home)));
    assert_eq!(b.mysql.password, TYPED);
    // Nothing to log in to: nothing asked.
    let b = bench_with("oltp_read_write --mysql-password --mysql-dry-run run", &sources(&[], None));
    assert_eq!(b.mysql.password, "");

    let mut none = sources(&[], None);
    none.ask_password = no_terminal;
    let err = refused_with("oltp_read_write --mysql-password run", &none);
    assert!(err.starts_with("--mysql-password has no value, so the password is asked for on the terminal, and there is none (cannot open /dev/tty"), "{err}");
}

#[test]
fn a_password_is_never_repeated_in_a_message() {
    for line in [
        format!("oltp_read_write --mysql-password {SECRET} run"),
        format!("oltp_read_write run --mysql-password {SECRET}"),
        format!("--mysql_password {SECRET} oltp_read_write run"),
    ] {
        let err = refused_with(&line, &sources(&[], None));
        assert!(!err.contains(SECRET), "{line}: {err}");
        assert!(err.contains("=PASSWORD") || err.contains("unexpected argument"), "{line}: {err}");
    }
    let b = bench_with(&format!("oltp_read_write run --pgsql-password={SECRET}"), &sources(&[], None));
    assert!(notes(&b).contains("--pgsql-password=(hidden): ignored"), "{:?}", b.notes);
    assert!(!notes(&b).contains(SECRET));

    use std::os::unix::ffi::OsStringExt;
    let mut bad = format!("--mysql-password={SECRET}").into_bytes();
    bad.push(0xff);
    let err = parse(vec![OsString::from("oltp_read_write"), OsString::from_vec(bad), OsString::from("run")]);
    let err = match err {
        Err(e @ CliError::NotUnicode(_)) => e.to_string(),
        other => panic!("{other:?}"),
    };
    assert!(!err.contains(SECRET) && err.contains("--mysql-password=(hidden)"), "{err}");
}

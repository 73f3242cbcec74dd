//! Rules of the test files themselves (tests/README.md): a test waits for
//! an event, never for a sleep to have been long enough, so every sleep
//! left says why it is no wait (`// sleep: ...` on its line or the two
//! above: a server slow or deaf on purpose, two signals sent apart, the
//! poll inside `common::wait_until`); and the binary under test is run
//! through `common` only, where its command line, timeout and captured
//! output are handled once.

use std::path::{Path, PathBuf};

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// Every Rust file under tests/, but the interop servers' own projects.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() && path != tests_dir().join("servers") {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&tests_dir(), &mut files);
    files.sort();
    let name = |path: &Path| path.strip_prefix(tests_dir()).unwrap().display().to_string();
    files.iter().map(|path| (name(path), std::fs::read_to_string(path).unwrap())).collect()
}

/// A sleep a test may keep, with its reason; more than this many is a
/// sign that sleeps are creeping back as waits.
const MOST_SLEEPS: usize = 18;

#[test]
fn every_sleep_says_why_it_is_no_wait() {
    let mut reasons = Vec::new();
    let mut unexplained = Vec::new();
    for (file, source) in sources() {
        let lines: Vec<&str> = source.lines().collect();
        for (n, line) in lines.iter().enumerate() {
            // Split, or this line would be one.
            let calls = [concat!("::", "sleep("), concat!("::", "sleep;"), concat!("::{", "sleep")];
            if !calls.iter().any(|call| line.contains(call)) {
                continue;
            }
            let said = lines[n.saturating_sub(2)..=n].iter().find_map(|l| l.split("// sleep: ").nth(1));
            match said {
                Some(reason) => reasons.push(format!("{file}:{}: {reason}", n + 1)),
                None => unexplained.push(format!("{file}:{}: {}", n + 1, line.trim())),
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "a sleep used as a wait: wait for the event instead (a line: common::StdoutWatch; a file, a \
         counter, a port: common::wait_until; an exit: common::exit_within), or say on the line or \
         above it why it is no wait (`// sleep: ...`):\n{}",
        unexplained.join("\n")
    );
    eprintln!("{} sleeps, each with its reason:\n{}", reasons.len(), reasons.join("\n"));
    assert!(reasons.len() <= MOST_SLEEPS, "{} sleeps (at most {MOST_SLEEPS}):\n{}", reasons.len(), reasons.join("\n"));
}

#[test]
fn the_binary_runs_through_common_only() {
    // Split, or these lines would be found.
    let (helper, binary) = (concat!("fn ", "wirebench"), concat!("CARGO_BIN_EXE_", "wirebench"));
    let mut found = Vec::new();
    for (file, source) in sources().into_iter().filter(|(file, _)| !file.starts_with("common/")) {
        for (n, line) in source.lines().enumerate() {
            let defines = line.split(helper).nth(1).is_some_and(|rest| rest.starts_with(['(', '<', '_']));
            if defines || line.contains(binary) {
                found.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "run the binary under test with common::wirebench() (a Command), common::run_wirebench (to its end, \
         as text: common::Ran) or common::run_within (with a time limit), and name a file's own helper for \
         what it adds (its login, its test):\n{}",
        found.join("\n")
    );
}

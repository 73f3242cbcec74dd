//! Every test file builds: with `autotests = false` (Cargo.toml) a file under
//! tests/ that no `[[test]]` target reaches through its `mod` lines would
//! never compile nor run, silently. The interop servers of tests/servers/
//! are projects of their own, built by scripts/test.sh.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `path` of every `[[test]]` target of Cargo.toml.
fn test_targets() -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let mut targets = Vec::new();
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if let Some(path) = line.strip_prefix("path = ").filter(|_| in_test) {
            targets.push(repo().join(path.trim_matches('"')));
        }
    }
    targets
}

/// The files a module file declares with `mod name;` (after an optional
/// `#[path = "..."]` line), resolved as rustc does: beside a crate root,
/// main.rs or mod.rs, else in the folder named after the file.
fn declared_modules(file: &Path, is_root: bool) -> Vec<PathBuf> {
    let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_str().unwrap();
    let beside = is_root || stem == "mod" || stem == "main";
    let children = if beside { dir.to_path_buf() } else { dir.join(stem) };
    let mut modules = Vec::new();
    let mut path_attribute = None;
    for line in source.lines().map(str::trim) {
        if let Some(path) = line.strip_prefix("#[path = \"").and_then(|rest| rest.strip_suffix("\"]")) {
            path_attribute = Some(dir.join(path));
            continue;
        }
        let declared =
            line.strip_prefix("pub ").unwrap_or(line).strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declared {
            let file = path_attribute.take().unwrap_or_else(|| {
                let flat = children.join(format!("{name}.rs"));
                if flat.exists() {
                    flat
                } else {
                    children.join(name).join("mod.rs")
                }
            });
            modules.push(file);
        }
        path_attribute = None;
    }
    modules
}

/// Every .rs file some target compiles.
fn reachable() -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<(PathBuf, bool)> = test_targets().into_iter().map(|root| (root, true)).collect();
    while let Some((file, is_root)) = todo.pop() {
        let file = file.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if seen.insert(file.clone()) {
            todo.extend(declared_modules(&file, is_root).into_iter().map(|module| (module, false)));
        }
    }
    seen
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path.canonicalize().unwrap());
        }
    }
}

#[test]
fn every_test_file_is_in_a_test_target() {
    let reachable = reachable();
    let servers = repo().join("tests/servers").canonicalize().unwrap();
    let mut files = Vec::new();
    rust_files(&repo().join("tests"), &mut files);
    let orphans: Vec<_> = files.iter().filter(|f| !f.starts_with(&servers) && !reachable.contains(*f)).collect();
    assert!(
        orphans.is_empty(),
        "these files are in no test binary, so they never build: {orphans:#?}\n\
         add a `mod` line for each to the main.rs of the group whose needs it has \
         (tests/README.md), or a [[test]] target to Cargo.toml"
    );
}

#[test]
fn the_guard_sees_the_groups() {
    let reachable = reachable();
    for file in
        ["tests/offline/tree.rs", "tests/common/mod.rs", "tests/scripted/planted/mod.rs", "tests/alloc/engine.rs"]
    {
        let file = repo().join(file).canonicalize().unwrap();
        assert!(reachable.contains(&file), "{} not reached: {reachable:#?}", file.display());
    }
}

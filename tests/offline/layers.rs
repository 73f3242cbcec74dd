//! The one-way layers (docs/architecture.md): which of the crate's modules each
//! module may import. A new `use crate::...` that breaks the order fails
//! here, naming the file; nothing below the run orchestration imports the
//! command line, and no two modules import each other. Within a folder,
//! sibling files import each other without a cycle too; no two types and
//! no two free functions under src/ share a name (a reader could confuse
//! them). File names may repeat across folders: a folder qualifies its
//! files (`uring/tasks.rs`, `tokio_backend/tasks.rs`), as in tokio and hyper.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the modules it may import.
const ALLOWED: &[(&str, &[&str])] = &[
    (
        "run",
        &[
            "capture",
            "cli",
            "client",
            "driver",
            "lua",
            "rand",
            "replay",
            "results",
            "server_stats",
            "stats",
            "transport",
            "watch",
            "workload",
        ],
    ),
    (
        "cli",
        &[
            "capture",
            "client",
            "driver",
            "fuzz",
            "lua",
            "rand",
            "replay",
            "results",
            "server_stats",
            "transport",
            "watch",
            "workload",
        ],
    ),
    // Lua workloads: beside the driver, using its limits and ignored errors.
    ("lua", &["client", "driver", "rand", "stats"]),
    ("driver", &["client", "rand", "stats", "transport", "workload"]),
    // `wirebench replay`: the capture's reader feeding the driver's loops.
    ("replay", &["driver", "stats"]),
    ("fuzz", &["client", "rand", "workload"]),
    ("workload", &["rand"]),
    ("client", &["transport"]),
    ("null_server", &["transport"]),
    // --server-stats: its own connection, beside the driver.
    ("server_stats", &["client"]),
    ("results", &["server_stats", "stats"]),
    // --metrics-listen, --metrics-push, --web, --report-html: fed by run.
    ("watch", &["results", "server_stats", "stats"]),
    ("transport", &[]),
    // `capture import|info`: the wirebench-capture crate's format and imports, files and output.
    ("capture", &[]),
    ("stats", &[]),
    ("rand", &[]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The crate modules `text` names: `crate::x` paths and `use crate::{x, y}`.
fn imported_modules(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut found = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            found.extend(group.split(',').map(|item| ident(item.trim())).filter(|m| !m.is_empty()));
        } else {
            found.insert(ident(rest));
        }
    }
    found
}

/// The top-level module a file of `src/` belongs to (`driver` for
/// `src/driver/uring/mod.rs`, `rand` for `src/rand/mod.rs`); `None` for the crate
/// roots.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (module != "lib" && module != "main").then(|| module.to_owned())
}

#[test]
fn layers_import_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let Some(module) = module_of(&src, file) else { continue };
        let Some(may) = allowed.get(module.as_str()) else {
            broken.push(format!("{}: module {module} is not in tests/offline/layers.rs's table", file.display()));
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for imported in imported_modules(&text) {
            if imported != module && allowed.contains_key(imported.as_str()) && !may.contains(&imported.as_str()) {
                broken.push(format!("{} imports crate::{imported}, which {module} may not import", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "layering broken (docs/architecture.md):\n{}", broken.join("\n"));
}

/// The table itself has no cycle: a module never reaches itself.
#[test]
fn the_layer_table_has_no_cycle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    for &start in allowed.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = allowed[start].to_vec();
        while let Some(module) = stack.pop() {
            assert_ne!(module, start, "{start} can reach itself");
            if seen.insert(module) {
                stack.extend(allowed.get(module).copied().unwrap_or_default());
            }
        }
    }
}

#[test]
fn imports_are_found_in_every_form() {
    let text = "use crate::cli::Bench;\nuse crate::{driver, rand::Rng};\nfn f() { crate::stats::x(); }";
    let found: Vec<String> = imported_modules(text).into_iter().collect();
    assert_eq!(found, ["cli", "driver", "rand", "stats"]);
}

/// What opens a socket, an event loop or a runtime: only the driver (and
/// the client, for logging in) may; a script's states wait on the driver's
/// loops (README, "One engine").
const LOOP_MAKERS: &[&str] = &[
    "epoll_create",
    "epoll_wait",
    "libc::poll(",
    "libc::socket(",
    "IoUring",
    "io_uring",
    "tokio::runtime",
    "Runtime::new",
    "block_on",
    "TcpStream",
    "UnixStream",
    "std::net",
    "mio::",
];

/// Nothing under src/lua opens a socket or an event loop of its own.
#[test]
fn the_script_layer_has_no_loop_of_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lua");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(!files.is_empty());
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for maker in LOOP_MAKERS.iter().filter(|m| code.contains(*m)) {
                found.push(format!("{}:{}: {maker}", file.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "src/lua must leave sockets and loops to the driver:\n{}", found.join("\n"));
}

/// The check above finds what it looks for.
#[test]
fn loop_makers_are_found() {
    let line = "let ring = io_uring::IoUring::new(8)?;";
    assert!(LOOP_MAKERS.iter().any(|m| line.contains(m)));
}

/// Every `.rs` file under src/, as its path relative to src/.
fn source_files() -> (PathBuf, Vec<PathBuf>) {
    crate_files("src")
}

/// The Rust files under `dir` (relative to the repository), sorted,
/// relative to it.
fn crate_files(dir: &str) -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut relative: Vec<PathBuf> = files.iter().map(|f| f.strip_prefix(&src).unwrap().to_owned()).collect();
    relative.sort();
    (src, relative)
}

/// The code of a file: comment lines and trailing comments dropped.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        let line = match line.find(" //") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The names `find` finds in the code of each Rust file under `dir`, each
/// with where it stands (`file:line`).
fn definitions_in(dir: &str, find: fn(&str) -> Vec<(String, usize)>) -> BTreeMap<String, Vec<String>> {
    let (src, files) = crate_files(dir);
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        for (name, line) in find(&code_of(&text)) {
            by_name.entry(name).or_default().push(format!("{}:{line}", file.display()));
        }
    }
    by_name
}

/// The names that stand in more than one place (but `exempt`), a line
/// each with their places.
fn names_used_twice(by_name: BTreeMap<String, Vec<String>>, exempt: &[&str]) -> Vec<String> {
    by_name
        .into_iter()
        .filter(|(name, at)| at.len() > 1 && !exempt.contains(&name.as_str()))
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect()
}

/// The types a file defines (struct, enum, union, trait, and type aliases
/// outside impl blocks), with their line numbers.
fn defined_types(text: &str) -> Vec<(String, usize)> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let mut rest = trimmed;
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                rest = rest.get(rest.find(')').map_or(0, |at| at + 1)..).unwrap_or_default().trim_start();
            }
        }
        for keyword in ["struct ", "enum ", "union ", "trait ", "type "] {
            if let Some(after) = rest.strip_prefix(keyword) {
                // An associated type (`type Item = ...` in an impl) is no definition.
                if keyword == "type " && line.starts_with(' ') && !trimmed.starts_with("pub") {
                    continue;
                }
                let name = ident(after);
                if !name.is_empty() {
                    found.push((name, n + 1));
                }
            }
        }
    }
    found
}

/// Each type name means one thing in its crate: no two type definitions
/// under src/ (or under protocol/src/) share a name, tests' included.
#[test]
fn no_two_types_share_a_name() {
    for dir in ["src", "protocol/src"] {
        let shared = names_used_twice(definitions_in(dir, defined_types), &[]);
        assert!(
            shared.is_empty(),
            "type names defined twice under {dir}/ (rename one for what it is):\n{}",
            shared.join("\n")
        );
    }
}

/// The free functions a file defines at its top level (methods and test
/// functions are indented), with their line numbers.
fn defined_free_functions(text: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut rest = line;
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                rest = rest.get(rest.find(')').map_or(0, |at| at + 1)..).unwrap_or_default().trim_start();
            }
        }
        for qualifier in ["async ", "const ", "unsafe ", "extern \"C\" "] {
            rest = rest.strip_prefix(qualifier).unwrap_or(rest);
        }
        if let Some(after) = rest.strip_prefix("fn ") {
            let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            found.push((name, n + 1));
        }
    }
    found
}

/// Each free function's name means one thing in the crate: no two files
/// under src/ define a top-level function of the same name. The one
/// exception is `workload`, each built-in test's constructor in its own
/// file (workload/*.rs), which is one role.
#[test]
fn no_two_free_functions_share_a_name() {
    let shared = names_used_twice(definitions_in("src", defined_free_functions), &["workload"]);
    assert!(
        shared.is_empty(),
        "free functions defined twice under src/ (rename one for what it does):\n{}",
        shared.join("\n")
    );
}

#[test]
fn free_functions_are_found() {
    let text =
        "fn a() {}\npub(crate) async fn b() {}\npub unsafe extern \"C\" fn c() {}\nimpl X {\n    fn method() {}\n}";
    let names: Vec<String> = defined_free_functions(text).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["a", "b", "c"]);
}

#[test]
fn type_definitions_are_found() {
    let text = "pub struct A;\nenum B { X }\npub(crate) trait C {}\ntype D = u8;\nimpl Iterator for A {\n    type Item = u8;\n}\n    pub(super) union E { a: u8 }";
    let names: Vec<String> = defined_types(text).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["A", "B", "C", "D", "E"]);
}

/// The module path of a file of src/: `["driver", "uring", "tasks"]`
/// for `driver/uring/tasks.rs`, `["driver", "uring"]` for
/// `driver/uring/mod.rs`, `[]` for lib.rs.
fn module_path(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file.iter().map(|p| p.to_str().unwrap().to_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap();
    if !["mod", "lib", "main"].contains(&stem) {
        parts.push(stem.to_owned());
    }
    parts
}

/// Every path `text` names through `crate::`, `super::` or `self::`, made
/// absolute from the module `here`, with `{a, b::c}` groups expanded.
fn crate_paths(text: &str, here: &[String]) -> Vec<Vec<String>> {
    fn expand(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        let mut rest = rest;
        loop {
            let ident: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if ident.is_empty() {
                if let Some(group) = rest.strip_prefix('{') {
                    let mut depth = 0;
                    let mut start = 0;
                    for (at, c) in group.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => {
                                expand(group[start..at].trim(), path.clone(), out);
                                return;
                            }
                            '}' => depth -= 1,
                            ',' if depth == 0 => {
                                expand(group[start..at].trim(), path.clone(), out);
                                start = at + 1;
                            }
                            _ => {}
                        }
                    }
                }
                break;
            }
            rest = &rest[ident.len()..];
            if ident != "self" {
                path.push(ident);
            }
            match rest.strip_prefix("::") {
                Some(after) => rest = after,
                None => break,
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in text.match_indices(start) {
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_' || bytes[at - 1] == b':') {
                continue;
            }
            let mut base: Vec<String> = match start {
                "crate::" => Vec::new(),
                _ => here.to_vec(),
            };
            let mut rest = &text[at + start.len()..];
            if start == "super::" {
                base.pop();
                while let Some(after) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = after;
                }
            }
            expand(rest, base, &mut out);
        }
    }
    out
}

/// A file's code before its tests module (clippy's
/// `items_after_test_module` keeps that last).
fn without_tests(code: &str) -> String {
    let starts = ["#[cfg(test)]\nmod ", "#[cfg(test)]\npub(crate) mod ", "#[cfg(test)]\npub(super) mod "];
    match starts.iter().filter_map(|start| code.find(start)).min() {
        Some(at) => code[..at].to_owned(),
        None => code.to_owned(),
    }
}

/// The modules declared `#[cfg(test)]` (test helpers, test-only files).
fn test_only_modules(src: &Path, files: &[PathBuf]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.windows(2) {
            let declared = pair[1].trim_start();
            let declared = declared.strip_prefix("pub(crate) ").unwrap_or(declared);
            if pair[0].trim() == "#[cfg(test)]" {
                if let Some(name) = declared.strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';')) {
                    let mut path = module_path(file);
                    path.push(name.to_owned());
                    found.push(path);
                }
            }
        }
    }
    found
}

/// Sibling modules of each folder of src/ import each other without a
/// cycle: two files that need each other share something that belongs in
/// a third place. An import of an item the folder's mod.rs re-exports
/// counts as an import of the module it comes from.
#[test]
fn sibling_modules_import_without_a_cycle() {
    let (src, files) = source_files();
    // Each folder's modules (the module paths one level under it), and the
    // names its root re-exports or imports from them.
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(f)).collect();
    let mut through_root: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        if !["mod.rs", "lib.rs"].contains(&name) {
            continue;
        }
        let folder = module_path(file);
        let code = code_of(&std::fs::read_to_string(src.join(file)).unwrap());
        for line in code.lines() {
            let Some(at) = line.find("use ") else { continue };
            let head = line[..at].trim();
            if !(head.is_empty() || head.starts_with("pub")) {
                continue;
            }
            let used = line[at + 4..].trim_end_matches(';').trim();
            let used = used.strip_prefix("self::").unwrap_or(used);
            let child: String = used.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let mut child_path = folder.clone();
            child_path.push(child.clone());
            if !modules.contains(&child_path) {
                continue;
            }
            for path in crate_paths(&format!("self::{used}"), &folder) {
                if let Some(item) = path.last().filter(|_| path.len() > folder.len() + 1) {
                    through_root.insert((folder.clone(), item.clone()), child.clone());
                }
            }
        }
    }
    // Edges between siblings, per folder; test code (a file's tests
    // module, a test-only module) may use its siblings' test helpers.
    let test_only = test_only_modules(&src, &files);
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let here = module_path(file);
        if test_only.iter().any(|t| here.starts_with(t)) {
            continue;
        }
        let code = without_tests(&code_of(&std::fs::read_to_string(src.join(file)).unwrap()));
        for path in crate_paths(&code, &here) {
            let common = here.iter().zip(&path).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (here.get(common), path.get(common)) else { continue };
            let folder = here[..common].to_vec();
            let mut to_module = folder.clone();
            to_module.push(to.clone());
            let to = if modules.contains(&to_module) {
                to.clone()
            } else if let Some(module) = through_root.get(&(folder.clone(), to.clone())) {
                module.clone()
            } else {
                continue;
            };
            if *from != to {
                edges.entry(folder).or_default().entry(from.clone()).or_default().insert(to);
            }
        }
    }
    let mut cycles = Vec::new();
    for (folder, graph) in &edges {
        for start in graph.keys() {
            // A path back to `start`, found depth first.
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, trail)) = stack.pop() {
                for next in graph.get(&node).into_iter().flatten() {
                    if next == start {
                        let mut cycle = trail.clone();
                        cycle.push(start.clone());
                        // Each cycle once: from its smallest module.
                        if trail.iter().all(|m| m >= start) {
                            cycles.push(format!("src/{}: {}", folder.join("/"), cycle.join(" -> ")));
                        }
                    } else if seen.insert(next.clone()) {
                        let mut longer = trail.clone();
                        longer.push(next.clone());
                        stack.push((next.clone(), longer));
                    }
                }
            }
        }
    }
    assert!(cycles.is_empty(), "sibling modules that import each other (move what they share):\n{}", cycles.join("\n"));
}

#[test]
fn crate_paths_are_resolved_from_the_module() {
    let here: Vec<String> = ["run", "steps"].map(String::from).to_vec();
    let text = "use super::{output::{Console, Level}, RunError};\nuse crate::cli::Bench;\nsuper::super::x::y();";
    let paths: Vec<String> = crate_paths(text, &here).iter().map(|p| p.join("::")).collect();
    assert_eq!(paths, ["cli::Bench", "run::output::Console", "run::output::Level", "run::RunError", "x::y"]);
}

/// The names a module root's top comment (`//!`) gives in backticks as
/// files of its folder: `name.rs` or `name/`, with no path before them.
fn file_map(text: &str) -> BTreeSet<String> {
    let comment: String = text.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n");
    let mut named = BTreeSet::new();
    for quoted in comment.split('`').skip(1).step_by(2) {
        let plain =
            quoted.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.' || c == '/');
        let file = quoted.strip_suffix(".rs").is_some_and(|stem| !stem.is_empty() && !stem.contains(['/', '.']));
        let folder = quoted.strip_suffix('/').is_some_and(|stem| !stem.is_empty() && !stem.contains(['/', '.']));
        if plain && (file || folder) {
            named.insert(quoted.to_owned());
        }
    }
    named
}

/// The top comment of each folder's mod.rs (lib.rs for src/) names every
/// file and module folder in it, and nothing that is not there: the file
/// map a newcomer reads first stays true.
#[test]
fn each_folders_map_names_its_files() {
    let (src, files) = source_files();
    let mut wrong = Vec::new();
    for root in files.iter().filter(|f| f.ends_with("mod.rs") || f.as_os_str() == "lib.rs") {
        let folder = src.join(root).parent().unwrap().to_owned();
        let mut present = BTreeSet::new();
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if path.is_dir() && path.join("mod.rs").exists() {
                present.insert(format!("{name}/"));
            } else if name.ends_with(".rs") && name != "mod.rs" && name != "lib.rs" {
                present.insert(name);
            }
        }
        let named = file_map(&std::fs::read_to_string(src.join(root)).unwrap());
        for missing in present.difference(&named) {
            wrong.push(format!("src/{}: does not name `{missing}`", root.display()));
        }
        for stale in named.difference(&present) {
            wrong.push(format!("src/{}: names `{stale}`, which is not in its folder", root.display()));
        }
    }
    assert!(wrong.is_empty(), "file maps in the top comments of mod.rs and lib.rs:\n{}", wrong.join("\n"));
}

#[test]
fn file_maps_are_read_from_the_top_comment_only() {
    let text = "//! - `a.rs`: one; `b/`: two, beside `src/main.rs` and `x.y.rs`\n//! `c.rs`\n\n//! `d.rs`\nfn f() {}";
    let named: Vec<String> = file_map(text).into_iter().collect();
    assert_eq!(named, ["a.rs", "b/", "c.rs"]);
}

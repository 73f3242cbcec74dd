//! The one-way layers (docs/architecture.md): which of the crate's modules each
//! module may import. A new `use crate::...` that breaks the order fails
//! here, naming the file; nothing below the run orchestration imports the
//! command line, and no two modules import each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the modules it may import.
const ALLOWED: &[(&str, &[&str])] = &[
    ("run", &["cli", "client", "driver", "lua", "rand", "results", "server_stats", "stats", "transport", "workload"]),
    ("cli", &["client", "driver", "fuzz", "lua", "rand", "results", "server_stats", "transport", "workload"]),
    // Lua workloads: beside the driver, using its limits and ignored errors.
    ("lua", &["client", "driver", "rand", "stats"]),
    ("driver", &["client", "rand", "stats", "transport", "workload"]),
    ("fuzz", &["client", "rand", "workload"]),
    ("workload", &["rand"]),
    ("client", &["transport"]),
    ("null_server", &["transport"]),
    // --server-stats: its own connection, beside the driver.
    ("server_stats", &["client"]),
    ("results", &["server_stats", "stats"]),
    ("transport", &[]),
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
/// `src/driver/uring.rs`, `rand` for `src/rand.rs`); `None` for the crate
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
            broken.push(format!("{}: module {module} is not in tests/layers.rs's table", file.display()));
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

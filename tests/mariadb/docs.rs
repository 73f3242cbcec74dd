//! The manual is tested like the code: README.md and the book under docs/
//! (docs/README.md is its index).
//!
//! - Every relative link resolves: the file or folder exists inside the
//!   repository, and a `#anchor` names a heading of the target by GitHub's
//!   rules (lowercase, punctuation dropped, spaces to `-`, a repeated
//!   heading's slug gets `-1`, `-2`, ...). Links in code (fenced, indented
//!   or inline) are text, not links.
//! - Every chapter under docs/ is reachable from docs/README.md, and the
//!   README links the index.
//! - Every `docs/....md` that the source names (`wirebench --help`, the
//!   refusals that point at a chapter) exists, and `--help` ends with the
//!   manual's path.
//! - The README's quick start, its three commands against one's own server
//!   as they are written there, runs against the test server; so does
//!   docs/shards.md's example on one host.
//! - No example writes over the repository's files, every `cargo test
//!   --test NAME` names a test target, docs/search.md's durations are its
//!   defaults', the files the manual names by path exist, and it speaks
//!   of no reference the reader lacks.
//!
//! The checker is tried on a scratch tree with broken links first, so a
//! checker that finds nothing cannot pass for one that found everything
//! right.

use crate::common;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};

use common::{text, ScratchDir, TestServer};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// GitHub's anchor for a heading's text: inline markup goes (backticks,
/// emphasis, a link's target), then lowercase, then every character that is
/// not a letter, a digit, `-`, `_` or a space goes, then spaces become `-`.
fn slug(heading: &str) -> String {
    let text = strip_link_targets(heading);
    text.chars()
        .filter(|c| !matches!(c, '`' | '*'))
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// `[text](target)` becomes `text`.
fn strip_link_targets(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(close) = rest.find("](") {
        let Some(end) = rest[close..].find(')') else { break };
        out.push_str(&rest[..close]);
        rest = &rest[close + end + 1..];
    }
    out.push_str(rest);
    out.replace('[', "")
}

/// A Markdown file's lines that are prose: fenced and indented code blocks
/// are blanked (kept as empty lines, so line numbers hold).
fn prose_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut in_indented = false;
    let mut previous_blank = true;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(open) = &fence {
            if indent <= 3
                && trimmed.starts_with(open.as_str())
                && trimmed.trim_start_matches(open.as_str()).trim().is_empty()
            {
                fence = None;
            }
            out.push(String::new());
            continue;
        }
        if indent <= 3 && (trimmed.starts_with("```") || trimmed.starts_with("~~~")) {
            let marker = trimmed.chars().next().unwrap_or('`');
            let run: String = trimmed.chars().take_while(|&c| c == marker).collect();
            fence = Some(run);
            out.push(String::new());
            previous_blank = false;
            continue;
        }
        let blank = trimmed.is_empty();
        if !blank && indent >= 4 && (previous_blank || in_indented) {
            in_indented = true;
            out.push(String::new());
            previous_blank = false;
            continue;
        }
        if !blank {
            in_indented = false;
        }
        previous_blank = blank;
        out.push(line.to_owned());
    }
    out
}

/// A line without its inline code spans (`` `x` ``, ``` `` x `` ```).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + run..];
        let closing = "`".repeat(run);
        match after.find(closing.as_str()) {
            Some(end) => rest = &after[end + run..],
            None => {
                out.push_str(&rest[start..start + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The headings' anchors, as GitHub numbers repeated ones.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for line in prose_lines(text) {
        let Some(heading) = heading_text(&line) else { continue };
        let base = slug(&heading);
        let count = seen.entry(base.clone()).or_insert(0);
        out.insert(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
        *count += 1;
    }
    out
}

/// An ATX heading's text (`## Title ##` gives `Title`).
fn heading_text(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim().to_owned())
}

/// The targets of the links in a file's prose, with their line numbers:
/// inline links and images (`[text](target "title")`) and reference
/// definitions (`[name]: target`).
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in prose_lines(text).iter().enumerate() {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((i + 1, target.trim_matches(|c| c == '<' || c == '>').to_owned()));
            rest = &after[end..];
        }
        let trimmed = line.trim_start();
        if let Some(close) = trimmed.strip_prefix('[').and_then(|r| r.find("]:")) {
            let target = trimmed[close + 3..].split_whitespace().next().unwrap_or("");
            out.push((i + 1, target.to_owned()));
        }
    }
    out
}

/// `a/b/../c` as `a/c`, without touching the file system; `None` when
/// `..` leads above the start (outside the repository).
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// The broken links of `files` (paths relative to `root`), one message
/// each: `file:line: target: what is wrong`.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut anchor_cache: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    for file in files {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
        for (line, target) in links(&text) {
            let at = format!("{}:{line}: {target}", file.display());
            if target.is_empty() {
                problems.push(format!("{at}: an empty link"));
                continue;
            }
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path_part, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path_part.is_empty() {
                file.clone()
            } else if path_part.starts_with('/') {
                problems.push(format!("{at}: an absolute path; link relative to the file"));
                continue;
            } else {
                let parent = file.parent().unwrap_or(Path::new(""));
                match normalize(&parent.join(path_part)) {
                    Some(path) => path,
                    None => {
                        problems.push(format!("{at}: leads outside the repository"));
                        continue;
                    }
                }
            };
            let full = root.join(&resolved);
            if !full.exists() {
                problems.push(format!("{at}: {} does not exist", resolved.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if full.extension().and_then(|e| e.to_str()) != Some("md") {
                problems.push(format!("{at}: an anchor into a file that is not Markdown"));
                continue;
            }
            let known = anchor_cache.entry(resolved.clone()).or_insert_with(|| {
                anchors(&std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {}: {e}", full.display())))
            });
            if !known.contains(anchor) {
                let mut near: Vec<_> = known.iter().filter(|a| a.starts_with(&anchor[..anchor.len().min(4)])).collect();
                near.sort();
                problems.push(format!(
                    "{at}: no heading of {} has the anchor #{anchor} (near: {near:?})",
                    resolved.display()
                ));
            }
        }
    }
    problems
}

/// The Markdown files under `dir` (relative to `root`), sorted.
fn markdown_under(root: &Path, dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().and_then(|e| e.to_str()) == Some("md") {
                out.push(path.strip_prefix(root).expect("under root").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The Markdown files reachable from `start` through relative links.
fn reachable(root: &Path, start: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::from([start.to_path_buf()]);
    let mut queue = VecDeque::from([start.to_path_buf()]);
    while let Some(file) = queue.pop_front() {
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else { continue };
        for (_, target) in links(&text) {
            let path_part = target.split('#').next().unwrap_or("");
            if path_part.is_empty() || target.contains("://") || !path_part.ends_with(".md") {
                continue;
            }
            let Some(next) = normalize(&file.parent().unwrap_or(Path::new("")).join(path_part)) else { continue };
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    seen
}

/// README.md and the book.
fn manual_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    files.extend(markdown_under(&repo(), "docs"));
    files
}

#[test]
fn slugs_follow_githubs_rules() {
    assert_eq!(slug("How a loop waits for answers"), "how-a-loop-waits-for-answers");
    assert_eq!(
        slug("Runs across many client hosts: `--shard` and `--start-at`"),
        "runs-across-many-client-hosts---shard-and---start-at"
    );
    assert_eq!(slug("What's in it? (and why)"), "whats-in-it-and-why");
    assert_eq!(slug("sysbench 0.4 and 0.5 command lines"), "sysbench-04-and-05-command-lines");
    assert_eq!(slug("The engine's options"), "the-engines-options");
    assert_eq!(slug("snake_case and **bold** [a link](x.md)"), "snake_case-and-bold-a-link");
    let repeated = anchors("# Title\n## Notes\n```\n## Not a heading\n```\n## Notes\n    ## indented code\n## Notes\n");
    let expected: HashSet<String> = ["title", "notes", "notes-1", "notes-2"].iter().map(|s| s.to_string()).collect();
    assert_eq!(repeated, expected);
}

/// The checker on a scratch tree whose links are broken in each way it
/// must catch, beside links that are fine and links in code that are not
/// links at all.
#[test]
fn the_checker_finds_broken_links() {
    let dir = ScratchDir::new("docs-checker");
    std::fs::create_dir_all(dir.0.join("docs")).expect("mkdir docs");
    std::fs::create_dir_all(dir.0.join("src/driver")).expect("mkdir src");
    dir.write("src/driver/mod.rs", "");
    dir.write(
        "README.md",
        "# Tool\n\nSee [the book](docs/README.md), [usage](docs/usage.md#options), \
         [the driver](src/driver/mod.rs), [the folder](src/driver/).\n\n\
         Broken: [gone](docs/gone.md), [bad anchor](docs/usage.md#nope), [here](#tool), [not here](#nowhere).\n\n\
         ```\n[in a fence](nowhere.md)\n```\n\n    [indented code](nowhere.md)\n\nInline `[code](nowhere.md)` too.\n\n\
         [outside](../../etc/passwd) and [web](https://example.com/x.md)\n",
    );
    dir.write("docs/README.md", "# Book\n\n1. [Usage](usage.md)\n");
    dir.write("docs/usage.md", "# Usage\n\n## Options\n\n## Options\n\n[second](#options-1) [third](#options-2)\n");
    dir.write("docs/orphan.md", "# Nobody links here\n");
    let files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("docs/README.md"),
        PathBuf::from("docs/orphan.md"),
        PathBuf::from("docs/usage.md"),
    ];
    let problems = broken_links(&dir.0, &files);
    let culprits: Vec<&str> = problems.iter().map(|p| p.split(": ").nth(1).unwrap_or("")).collect();
    assert_eq!(
        culprits,
        ["docs/gone.md", "docs/usage.md#nope", "#nowhere", "../../etc/passwd", "#options-2"],
        "{problems:#?}"
    );
    let reached = reachable(&dir.0, Path::new("docs/README.md"));
    assert!(reached.contains(Path::new("docs/usage.md")));
    assert!(!reached.contains(Path::new("docs/orphan.md")));
}

#[test]
fn every_link_of_the_manual_resolves() {
    let problems = broken_links(&repo(), &manual_files());
    assert!(problems.is_empty(), "broken links in the manual:\n{}", problems.join("\n"));
}

#[test]
fn every_chapter_is_reachable_from_the_index() {
    let index = Path::new("docs/README.md");
    let reached = reachable(&repo(), index);
    let orphans: Vec<_> =
        markdown_under(&repo(), "docs").into_iter().filter(|chapter| !reached.contains(chapter)).collect();
    assert!(orphans.is_empty(), "chapters no link from docs/README.md leads to: {orphans:?}");
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    assert!(
        links(&readme).iter().any(|(_, target)| target == "docs/README.md"),
        "README.md must link the manual's index, docs/README.md"
    );
}

/// The front door stays a front door.
#[test]
fn the_readme_is_at_most_250_lines() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines: move the detail into a chapter under docs/");
}

/// Each `docs/NAME.md` that the source names (help texts, refusals that
/// point at a chapter) exists.
#[test]
fn chapters_named_in_the_source_exist() {
    let mut named = BTreeSet::new();
    let mut stack = vec![repo().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let mut rest = text.as_str();
            while let Some(at) = rest.find("docs/") {
                let tail = &rest[at..];
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_')))
                    .unwrap_or(tail.len());
                let name = tail[..end].trim_end_matches('.');
                if name.ends_with(".md") {
                    named.insert((name.to_owned(), path.strip_prefix(repo()).expect("in repo").to_path_buf()));
                }
                rest = &tail[end.max(1)..];
            }
        }
    }
    assert!(named.len() >= 5, "the refusals point at chapters: found only {named:?}");
    let missing: Vec<_> = named.iter().filter(|(name, _)| !repo().join(name).is_file()).collect();
    assert!(missing.is_empty(), "the source names chapters that do not exist: {missing:?}");
}

/// The code of the manual: its code blocks and inline code spans, each
/// with its file and line.
fn manual_code() -> Vec<(String, usize, String)> {
    let mut code = Vec::new();
    for file in manual_files() {
        let text = std::fs::read_to_string(repo().join(&file)).expect("read the manual");
        let prose = prose_lines(&text);
        for (i, (line, prose)) in text.lines().zip(&prose).enumerate() {
            let name = file.display().to_string();
            if prose.is_empty() && !line.trim().is_empty() {
                code.push((name, i + 1, line.to_owned()));
                continue;
            }
            let mut spans = line.split('`').skip(1).step_by(2);
            code.extend(spans.by_ref().map(|span| (name.clone(), i + 1, span.to_owned())));
        }
    }
    code
}

/// An example run from a checkout writes where the reader works, never
/// over the repository's own files (a chart, a log, a result).
#[test]
fn no_example_writes_into_the_repository() {
    let writes = ["--chart=docs/", "--hdr-log=docs/", "> docs/", ">docs/", "--chart=src/", "> README"];
    let found: Vec<String> = manual_code()
        .into_iter()
        .filter(|(_, _, code)| writes.iter().any(|w| code.contains(w)))
        .map(|(file, line, code)| format!("{file}:{line}: {}", code.trim()))
        .collect();
    assert!(found.is_empty(), "examples that would overwrite the repository's files:\n{}", found.join("\n"));
}

/// The manual speaks of what its reader can see: not of the project's own
/// reference reports ("seed 002"), which are not in the repository.
#[test]
fn the_manual_names_no_private_reference() {
    let mut found = Vec::new();
    for file in manual_files() {
        let text = std::fs::read_to_string(repo().join(&file)).expect("read the manual");
        for (i, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            let seed = lower.match_indices("seed ").any(|(at, _)| lower[at + 5..].starts_with('0'));
            if seed {
                found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "say what the reader can see instead:\n{}", found.join("\n"));
}

/// Every file of this repository the manual names by its path (a test,
/// a source file, a script) is there: moved tests leave no stale names.
#[test]
fn the_files_the_manual_names_exist() {
    let roots = ["tests/", "src/", "protocol/src/", "scripts/", "benches/"];
    let mut missing = Vec::new();
    for file in manual_files() {
        let text = std::fs::read_to_string(repo().join(&file)).expect("read the manual");
        for (i, line) in text.lines().enumerate() {
            let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-')));
            for word in words.map(|w| w.trim_end_matches('.')) {
                let named =
                    roots.iter().any(|r| word.starts_with(r)) && [".rs", ".sh"].iter().any(|e| word.ends_with(e));
                if named && !repo().join(word).is_file() {
                    missing.push(format!("{}:{}: {word}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(missing.is_empty(), "the manual names files that are not there:\n{}", missing.join("\n"));
}

/// Every `cargo test --test NAME` the manual gives names a test target of
/// Cargo.toml (the groups of tests/README.md), not a file of a group.
#[test]
fn the_manuals_test_commands_name_test_targets() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).expect("Cargo.toml");
    let mut targets: Vec<&str> = Vec::new();
    let mut table = "";
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line;
        } else if let (Some(name), "[[test]]") = (line.strip_prefix("name = "), table) {
            targets.push(name.trim_matches('"'));
        }
    }
    assert!(targets.contains(&"mariadb"), "{targets:?}");
    let mut unknown = Vec::new();
    for (file, line, code) in manual_code().into_iter().filter(|(_, _, code)| code.contains("cargo test")) {
        let mut words = code.split_whitespace();
        while let Some(word) = words.next() {
            if word == "--test" {
                let name = words.next().unwrap_or("");
                if !targets.contains(&name) {
                    unknown.push(format!("{file}:{line}: --test {name}"));
                }
            }
        }
    }
    assert!(unknown.is_empty(), "no such test target (one of {targets:?}):\n{}", unknown.join("\n"));
}

/// docs/search.md's durations are the defaults' arithmetic: a step's
/// warm-up, measured time and pause, and the confirmation, as
/// `wirebench --help` lists their defaults.
#[test]
fn the_search_chapter_states_the_defaults_durations() {
    let output = common::wirebench().arg("--help").output().expect("wirebench runs");
    let help = text(&output.stdout);
    let default = |option: &str| -> u64 {
        let line = help.lines().find(|l| l.trim_start().starts_with(&format!("--{option}="))).unwrap_or_else(|| {
            panic!("--{option} in --help:\n{help}");
        });
        let value = line.split("[").nth(1).and_then(|v| v.split(']').next()).unwrap_or_else(|| panic!("{line}"));
        value.parse().unwrap_or_else(|_| panic!("{line}"))
    };
    let (warmup, time, pause) = (default("search-warmup"), default("search-time"), default("search-pause"));
    let (confirm, steps) = (default("search-confirm-time"), default("search-steps"));
    let (step, confirmation) = (warmup + time + pause, warmup + confirm + pause);
    let chapter = std::fs::read_to_string(repo().join("docs/search.md")).expect("docs/search.md");
    let chapter = chapter.split_whitespace().collect::<Vec<_>>().join(" ");
    for stated in [
        format!(
            "each step runs {step} s ({warmup} s of `--search-warmup`, {time} s of `--search-time`, {pause} s of \
             `--search-pause`), the confirmation {confirmation} s (`--search-confirm-time={confirm}`), and a search \
             takes up to {steps} steps"
        ),
        format!("{} s ({} × {step} s + {confirmation} s)", 9 * step + confirmation, 9),
        format!("{} s ({} × {step} s + {confirmation} s)", (steps - 1) * step + confirmation, steps - 1),
    ] {
        assert!(chapter.contains(&stated), "docs/search.md should say: {stated}");
    }
}

/// `wirebench --help` ends by saying where the manual is, and that file
/// exists.
#[test]
fn help_ends_with_the_manual() {
    let output = common::wirebench().arg("--help").output().expect("wirebench runs");
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).expect("UTF-8 help");
    let last = help.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    assert!(last.contains("docs/README.md"), "the help's last line does not name the manual: {last:?}");
    assert!(repo().join("docs/README.md").is_file());
}

/// The README's quick start: the three commands of its code block (a
/// `prepare`, a `run`, a `cleanup`) as they are written there, with the
/// connection options replaced by the test server's (database
/// sbtest_quickstart), the run's `--time` cut to 3 s and its
/// `--report-interval` to 1 s; they must succeed and the run must print
/// sysbench's report. A cleanup goes first, for tables a failed run left.
#[test]
fn the_readme_quick_start_runs() {
    let commands = quick_start_commands();
    let Some(server) = TestServer::find() else { return };
    let login = server.login_args("sbtest_quickstart");
    let connection =
        ["--mysql-host=", "--mysql-port=", "--mysql-socket=", "--mysql-user=", "--mysql-password=", "--mysql-db="];
    let args_of = |words: &[String]| -> Vec<String> {
        let mut args: Vec<String> = words[1..]
            .iter()
            .filter(|w| !connection.iter().any(|c| w.starts_with(c)))
            .map(|w| {
                if w.starts_with("--time=") {
                    "--time=3".to_owned()
                } else if w.starts_with("--report-interval=") {
                    "--report-interval=1".to_owned()
                } else {
                    w.clone()
                }
            })
            .collect();
        let command = args.pop().expect("a command");
        args.extend(login.iter().cloned());
        args.push(command);
        args
    };
    let run = |args: &[String]| {
        let output = common::wirebench().args(args).output().expect("wirebench runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "wirebench {} failed ({}): {stdout}\n{stderr}\n(a server started by an older scripts/mariadb.sh lacks \
             database sbtest_quickstart: run scripts/mariadb.sh start again)",
            args.join(" "),
            output.status
        );
        stdout
    };
    run(&args_of(&commands[2]));
    let prepared = run(&args_of(&commands[0]));
    assert!(prepared.contains("Creating table 'sbtest1'"), "{prepared}");
    let report = run(&args_of(&commands[1]));
    for line in
        ["SQL statistics:", "transactions:", "queries:", "General statistics:", "Latency (ms):", "Threads fairness:"]
    {
        assert!(report.contains(line), "the quick start's run printed no '{line}':\n{report}");
    }
    assert!(report.contains("[ 1s ] thds:"), "no interim line:\n{report}");
    run(&args_of(&commands[2]));
}

/// The `wirebench ...` commands of the README's "Quick start" code block
/// against one's own server, each as words: prepare, run, cleanup.
fn quick_start_commands() -> Vec<Vec<String>> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let mut commands = Vec::new();
    for text in fenced_commands(section(&readme, "## Quick start")) {
        assert!(!text.contains(['"', '\'', '$']), "quote the quick start's commands without shell syntax: {text}");
        commands.push(text.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
    }
    let verbs: Vec<&str> = commands.iter().map(|c| c.last().map_or("", String::as_str)).collect();
    assert_eq!(verbs, ["prepare", "run", "cleanup"], "the quick start's wirebench commands: {commands:?}");
    commands
}

/// The part of a Markdown `text` under `heading` (a whole line), up to the
/// next heading of level 2.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text.find(&format!("\n{heading}\n")).unwrap_or_else(|| panic!("no '{heading}' section"));
    let section = &text[start + 1..];
    &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)]
}

/// The `wirebench ...` commands of the fenced code blocks of `section`,
/// each on one line (continuation lines joined), comments dropped.
fn fenced_commands(section: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_fence = false;
    let mut current = String::new();
    for line in section.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            continue;
        }
        let line = line.trim();
        if current.is_empty() && !line.starts_with("wirebench ") {
            continue;
        }
        let (text, continued) = match line.strip_suffix('\\') {
            Some(text) => (text, true),
            None => (line, false),
        };
        current.push_str(text);
        current.push(' ');
        if !continued {
            commands.push(current.split(" #").next().unwrap_or("").trim().to_owned());
            current.clear();
        }
    }
    commands
}

/// docs/shards.md's example on one host, as written there: `prepare`, two
/// shards started in the background with one `--start-at` (five seconds
/// ahead, as its `START=` line says), then `merge`, with the test server's
/// connection options added. Every merged line holds both shards: their
/// threads, and the sum of their transactions in that interval; each
/// shard wrote an interval for each `--report-interval` of `--time`, its
/// last one too, though shard 0 samples the server (`--format=json`
/// turns `--server-stats` on) before it starts, and so starts late.
#[test]
fn the_shards_example_on_one_host_merges_whole_lines() {
    let shards_md = std::fs::read_to_string(repo().join("docs/shards.md")).expect("docs/shards.md");
    let example = section(&shards_md, "## Trying it on one host");
    assert!(example.contains("START=$(( $(date +%s) + 5 ))\nfor i in 0 1; do\n"), "{example}");
    let commands = fenced_commands(example);
    assert_eq!(commands.len(), 3, "prepare, a shard's run, merge: {commands:?}");
    let Some(server) = TestServer::find() else { return };
    let dir = ScratchDir::new("docs-shards");
    let login = server.login_args("sbtest");
    let with_login = |command: &str, shell: &dyn Fn(&str) -> String| -> Vec<String> {
        let mut words: Vec<String> = command.split_whitespace().skip(1).map(shell).collect();
        // `> FILE`, `2> FILE` and `&` are the shell's.
        while let Some(at) = words.iter().position(|w| w == ">" || w == "2>") {
            words.drain(at..at + 2);
        }
        words.retain(|w| w != "&");
        let verb = words.pop().expect("a command");
        words.extend(login.iter().cloned());
        words.push(verb);
        words
    };
    let run = |args: &[String]| {
        let output = common::wirebench().args(args).current_dir(&dir.0).output().expect("wirebench runs");
        assert!(output.status.success(), "wirebench {}: {}", args.join(" "), text(&output.stderr));
        text(&output.stdout)
    };
    let table = with_login(&commands[0].replace(" prepare", " cleanup"), &|w| w.to_owned());
    run(&table);
    run(&with_login(&commands[0], &|w| w.to_owned()));
    let start = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 5;
    let shards: Vec<_> = (0..2)
        .map(|i| {
            let args =
                with_login(&commands[1], &|w| w.replace("$i", &i.to_string()).replace("$START", &start.to_string()));
            let file = std::fs::File::create(dir.0.join(format!("shard-{i}.json"))).unwrap();
            common::wirebench().args(&args).stdout(file).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for (i, shard) in shards.into_iter().enumerate() {
        let output = shard.wait_with_output().unwrap();
        assert!(output.status.success(), "shard {i}: {}", text(&output.stderr));
    }
    let merge_args: Vec<String> = commands[2].split_whitespace().skip(1).map(str::to_owned).collect();
    let merged = common::wirebench().args(&merge_args).current_dir(&dir.0).output().expect("merge runs");
    let (report, notes) = (text(&merged.stdout), text(&merged.stderr));
    assert!(merged.status.success(), "{notes}");
    let lines: Vec<&str> = report.lines().filter(|l| l.starts_with("[ ")).collect();
    assert_eq!(lines.len(), 3, "an interim line every 2 s of 6:\n{report}");
    for (k, line) in lines.iter().enumerate() {
        assert!(line.contains(" thds: 4 "), "a line short of a shard: {line}\n{report}");
        // On a loaded machine a shard may truly start more than 50 ms late:
        // merge names it, and marks its first line, no other.
        let Some(mark) = line.split(" (partial: ").nth(1) else { continue };
        let late = (0..2).any(|i| {
            mark.starts_with(&format!("shard {i}/2 ran ")) && notes.contains(&format!("shard {i}/2 started "))
        });
        assert!(k == 0 && late, "a line marked partial with no late start: {line}\n{notes}");
    }
    let intervals = |name: &str| -> Vec<u64> {
        let file = std::fs::read_to_string(dir.0.join(name)).unwrap();
        let lines = file.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
        lines.filter(|l| l["type"] == "interval").map(|l| l["counters"]["transactions"].as_u64().unwrap()).collect()
    };
    let (first, second) = (intervals("shard-0.json"), intervals("shard-1.json"));
    assert!(first.len() == 3 && second.len() == 3, "each shard's intervals: {first:?} {second:?}");
    let merged = run(&[&["merge".to_owned(), "--format=json".to_owned()], &merge_args[1..]].concat());
    let merged: Vec<u64> = merged
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["type"] == "interval")
        .map(|l| l["counters"]["transactions"].as_u64().unwrap())
        .collect();
    let sums: Vec<u64> = first.iter().zip(&second).map(|(a, b)| a + b).collect();
    assert_eq!(merged, sums, "each merged interval is both shards' of the same interval");
}

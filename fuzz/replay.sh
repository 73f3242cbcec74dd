#!/bin/sh
# The test suite's fuzz check: builds every target and runs each input of
# its corpus once (-runs=0); fails, naming each, if a target crashes,
# panics or fails an assertion on one of them.
#
#   fuzz/replay.sh              # every target
#   fuzz/replay.sh login auth   # some of them
#
# It builds with plain cargo and the coverage flags cargo-fuzz passes,
# without AddressSanitizer and at opt-level 1, into fuzz/target/replay:
# the protocol crate forbids unsafe code, so ASan finds nothing there that
# the replay would miss, and this way the check needs neither cargo-fuzz
# (a `cargo install` on a fresh machine) nor nightly flags, and builds
# faster than `cargo fuzz build`'s release profile. Campaigns and findings
# use `cargo fuzz` as README.md says.
set -eu
cd "$(dirname "$0")"

# cargo-fuzz's coverage flags, debug assertions and overflow checks on.
# With --target the flags reach the targets but not the build scripts.
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4\
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters\
 -Cllvm-args=-sanitizer-coverage-pc-table\
 -Cllvm-args=-sanitizer-coverage-trace-compares\
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
export RUSTFLAGS CARGO_PROFILE_DEV_OPT_LEVEL=1 CARGO_PROFILE_DEV_DEBUG=0
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --quiet --locked --bins --target "$host" --target-dir target/replay

bins=target/replay/$host/debug
# The names of Cargo.toml's [[bin]] sections.
targets=${*:-$(awk '/^\[/ { in_bin = ($0 == "[[bin]]") } in_bin && /^name = / { gsub(/"/, "", $3); print $3 }' Cargo.toml)}
failed=
for t in $targets; do
    [ -x "$bins/$t" ] || { echo "replay: no fuzz target named $t (see Cargo.toml)" >&2; exit 1; }
    [ -d "corpus/$t" ] || { echo "replay: fuzz target $t has no corpus/$t" >&2; exit 1; }
    # A failing input is copied to target/replay/<target>-crash-<sha1>.
    if ! "$bins/$t" "corpus/$t" -runs=0 -artifact_prefix="target/replay/$t-" >"target/replay/$t.log" 2>&1; then
        echo "replay: fuzz target $t fails on one input of its corpus; the end of its output:" >&2
        tail -n 30 "target/replay/$t.log" >&2
        failed="$failed $t"
    fi
done
[ -z "$failed" ] || { echo "replay: failed:$failed; replay one with RUSTC_BOOTSTRAP=1 cargo fuzz run <target> <input> (README.md)" >&2; exit 1; }
echo "replay: $(echo "$targets" | wc -w) targets replayed their corpus" >&2

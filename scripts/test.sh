#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine to a verdict:
#
#   scripts/test.sh [extra cargo test arguments]
#
# Installs what is missing (build tools, MariaDB, Rust), starts the throwaway
# MariaDB server (scripts/mariadb.sh), checks the formatting (`cargo fmt
# --check`) and the lints (`cargo clippy -D warnings`) before anything
# slow, runs `cargo test --workspace` against the server with
# WIREBENCH_REQUIRE_SERVER=1 (so a test that cannot reach the server fails
# instead of skipping), then builds the fuzz targets and replays their
# corpus once. A server this script started is stopped at the end; one that
# was already running is left running. Exits non-zero on any failure.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

MARIADB=$REPO/scripts/mariadb.sh
STARTED_SERVER=0

finish() {
    local status=$?
    trap - EXIT
    if [ "$STARTED_SERVER" -eq 1 ]; then
        step "stopping the MariaDB server this run started"
        "$MARIADB" stop || status=1
    fi
    if [ "$status" -eq 0 ]; then
        step "all tests passed"
    else
        step "FAILED (exit status $status)"
    fi
    exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "installing what is needed"
need_build_tools
need_mariadb
# The parity tests run sysbench itself and read its Lua scripts.
need sysbench sysbench
# tests/mariadb/results_output.rs renders a --chart SVG in headless Chromium. On a
# fresh Debian 12 it adds 148 packages (198 MB to fetch, 692 MB unpacked)
# to the rest of this list; measured on the 2-core VM: 2 s to fetch from
# its mirror, 14 s to unpack, then dpkg's configure step; the screenshot
# itself takes about 1 s.
need chromium chromium
# tests/scripted/fuzz_planted.rs and tests/mariadb/fuzz_mariadb_crash.rs run the Python 3
# scripts `wirebench fuzz-replay --emit=python` writes (standard library only).
need python3 python3
# tests/hosts/shards.rs runs deploy/ssh/run-shards.sh over real ssh: it starts
# its own sshd (/usr/sbin/sshd, on a free port of 127.0.0.1, with keys it
# makes) and never uses the system's ssh service, which the package may
# start on port 22 or policy-rc.d may deny.
need openssh-server sshd
need openssh-client ssh ssh-keygen
# tests/hosts/image.rs builds deploy/Containerfile with podman (which runs its
# containers with runc: crun refuses this machine's hybrid cgroups) from
# bases it makes with debootstrap from the Debian mirror apt uses.
need podman podman
need runc runc
need debootstrap debootstrap
# tests/scripted/interop_servers.rs runs a test server on node-mysql2's server API
# (tests/servers/node_mysql2, its version pinned in package-lock.json).
need nodejs node
need npm npm
install_needed
ensure_rust

# Incremental state would double the size of target/ for a one-shot build.
export CARGO_INCREMENTAL=0

# The lints first: they fail in seconds where the tests take minutes.
step "cargo fmt --check"
cargo fmt --all --check ||
    { say "the code is not formatted as rustfmt.toml says: run \`cargo fmt --all\` and commit the result"; exit 1; }
step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings ||
    { say "clippy found the problems above: fix them, then check with \`cargo clippy --workspace --all-targets -- -D warnings\` (an #[allow(clippy::...)] only where the lint is wrong for that spot, with a one-line reason)"; exit 1; }

step "interop test servers (tests/servers/)"
# npm ci only when node_modules lacks the pinned mysql2; the msql-srv server
# is its own cargo project (not a workspace member), built where the test
# looks for it.
if ! grep -qs '"version": "3.24.5"' tests/servers/node_mysql2/node_modules/mysql2/package.json; then
    npm ci --prefix tests/servers/node_mysql2 --no-audit --no-fund
fi
cargo build --quiet --locked --manifest-path tests/servers/msql_srv/Cargo.toml --target-dir target/interop-servers

step "MariaDB test server"
if "$MARIADB" status 2>/dev/null; then
    say "reusing the server that is already running; it will be left running"
    "$MARIADB" start
else
    STARTED_SERVER=1
    "$MARIADB" start
fi
eval "$("$MARIADB" env)"
export WIREBENCH_REQUIRE_SERVER=1
say "WIREBENCH_TEST_HOST=$WIREBENCH_TEST_HOST WIREBENCH_TEST_PORT=$WIREBENCH_TEST_PORT"
say "WIREBENCH_TEST_SOCKET=$WIREBENCH_TEST_SOCKET WIREBENCH_REQUIRE_SERVER=1"

say "disk before the build: $(df -h --output=avail "$REPO" | tail -1 | tr -d ' ') free"
step "cargo test --workspace $*"
cargo test --workspace "$@"
say "disk after the tests: $(df -h --output=avail "$REPO" | tail -1 | tr -d ' ') free, target/ $(du -sh "$REPO/target" | cut -f1)"

step "fuzz targets"
if [ -d "$REPO/fuzz" ]; then
    if ! cargo fuzz --version >/dev/null 2>&1; then
        say "installing cargo-fuzz (cargo install cargo-fuzz --locked)"
        cargo install cargo-fuzz --locked
    fi
    # cargo-fuzz needs nightly-only flags (-Zsanitizer); RUSTC_BOOTSTRAP lets
    # the stable toolchain accept them.
    say "building the fuzz targets (RUSTC_BOOTSTRAP=1 cargo fuzz build, in fuzz/)"
    (cd "$REPO/fuzz" && RUSTC_BOOTSTRAP=1 cargo fuzz build)
    # Every input the campaign kept runs once more: a decoder change that
    # panics on one of them fails here (fuzz/README.md, "The campaign").
    say "replaying each target's corpus once (fuzz/corpus/<target>/, -runs=0)"
    for target in $(cd "$REPO/fuzz" && RUSTC_BOOTSTRAP=1 cargo fuzz list); do
        (cd "$REPO/fuzz" && RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "corpus/$target" -- -runs=0 >/dev/null 2>&1) ||
            { say "fuzz target $target fails on its corpus: RUSTC_BOOTSTRAP=1 cargo fuzz run $target corpus/$target -- -runs=0 (in fuzz/) shows which input"; exit 1; }
    done
else
    say "no fuzz/ directory yet; skipping the fuzz target build"
fi

#!/usr/bin/env bash
# The whole test suite, from a fresh Debian machine to a verdict:
#
#   scripts/test.sh [extra cargo test arguments]
#
# Installs what is missing (build tools, MariaDB, Rust), starts two
# throwaway MariaDB servers (scripts/mariadb.sh: the test server, and a
# second one in its directory's second/ on the next port), checks the
# formatting (`cargo fmt --check`) and the lints (`cargo clippy -D
# warnings`) before anything slow, runs the tests group by group
# (tests/README.md) against the servers with WIREBENCH_REQUIRE_SERVER=1 and
# WIREBENCH_REQUIRE_URING=1 (so a test that cannot reach the server, a tool
# or io_uring fails instead of skipping), and builds the fuzz targets and
# replays their corpus once (beside the rest, fuzz/replay.sh). A server
# this script started is stopped at the end; one that was already running
# is left running. Exits non-zero on any failure.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

MARIADB=$REPO/scripts/mariadb.sh
STARTED_SERVER=0
STARTED_SECOND_SERVER=0
declare -A BACKGROUND=()

finish() {
    local status=$?
    trap - EXIT
    # The background builds, when the run ends before their turn.
    local pid
    for pid in "${BACKGROUND[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ "$STARTED_SERVER" -eq 1 ]; then
        step "stopping the MariaDB server this run started"
        "$MARIADB" stop || status=1
    fi
    if [ "$STARTED_SECOND_SERVER" -eq 1 ]; then
        step "stopping the second MariaDB server this run started"
        second_server stop || status=1
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

# The integration test binaries of the workspace's packages, as "folder
# name path" lines (the package's folder: . or protocol), from cargo's build
# messages (the build above made them).
test_binaries() {
    cargo test --workspace --no-run --message-format=json "$@" 2>/dev/null | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        folder = os.path.relpath(os.path.dirname(m["manifest_path"]))
        print(folder, m["target"]["name"], m["executable"])
'
}

# The second test server: a data directory inside the first's (so that
# .gitignore and .dockerignore cover it) and the next port.
second_server() {
    local dir=${WIREBENCH_MARIADB_DIR:-$REPO/.wirebench-mariadb}
    WIREBENCH_MARIADB_DIR=$dir/second WIREBENCH_TEST_PORT=$((${WIREBENCH_TEST_PORT:-3407} + 1)) "$MARIADB" "$@"
}

# Runs the named test groups one after another, each binary's output into
# $LOGS/<group>.log; stops at the first that fails.
lane() {
    local group
    for group in "$@"; do
        local binary=${BINARY[$group]:?"no test binary named $group in Cargo.toml"}
        local started=$SECONDS
        if ! "$binary" "${TEST_ARGS[@]}" >"$LOGS/$group.log" 2>&1; then
            say "test group $group FAILED; its output:"
            cat "$LOGS/$group.log"
            return 1
        fi
        say "test group $group: $(grep '^test result:' "$LOGS/$group.log") ($((SECONDS - started)) s)"
    done
}

# `lane`, with the second server as the test server.
lane_on_second_server() (
    eval "$SECOND_SERVER_ENV"
    lane "$@"
)

# The order fails fast: unit tests and the offline group first (seconds).
# Then four lanes side by side (WIREBENCH_TEST_LANES=1 runs them one after
# another): the mariadb group, whose tests count the server's statements
# (Com_select, Questions), with the others that use the test server's
# sbtest; the sysbench group, which recreates sbtest's tables, on the
# second server; hosts, whose databases are its own, on the second server
# too; the groups that need no server. The rates group last, alone, as it
# measures rates.
run_tests() {
    local cargo_args=() folder name path
    TEST_ARGS=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do cargo_args+=("$1"); shift; done
    [ $# -gt 0 ] && shift && TEST_ARGS=("$@")
    declare -gA BINARY=()
    local protocol_tests=()
    while read -r folder name path; do
        case $folder in
            .) BINARY[$name]=$path ;;
            protocol) protocol_tests+=("$path") ;;
            *) say "test binary $name of the package in $folder/: scripts/test.sh does not know the package"; return 1 ;;
        esac
    done < <(test_binaries "${cargo_args[@]}")
    LOGS=$(mktemp -d)
    step "unit tests, doc tests, the protocol crate's tests"
    cargo test --workspace --lib --bins "${cargo_args[@]}" -- "${TEST_ARGS[@]}"
    cargo test --workspace --doc "${cargo_args[@]}" -- "${TEST_ARGS[@]}"
    # From the workspace's build: `cargo test -p wirebench-protocol` alone
    # would build the dependencies again with other features.
    for path in "${protocol_tests[@]}"; do "$path" "${TEST_ARGS[@]}"; done
    step "test groups (tests/README.md; each group's output in $LOGS)"
    lane offline
    local with_server=(mariadb alloc_driver_backends child_rss)
    local without_server=(scripted alloc_engine alloc_null_server)
    if [ "${WIREBENCH_TEST_LANES:-4}" = 1 ]; then
        # One lane: every group alone, as when a timing test is in doubt.
        lane "${with_server[@]}" && lane_on_second_server sysbench hosts && lane "${without_server[@]}" || return 1
    else
        local lanes=() failed=0 pid
        lane "${with_server[@]}" &
        lanes+=($!)
        lane_on_second_server sysbench &
        lanes+=($!)
        # hosts' one timing check is generous; its image build takes what
        # CPU the other lanes leave.
        (renice -n 10 -p "$BASHPID" >/dev/null && lane_on_second_server hosts) &
        lanes+=($!)
        lane "${without_server[@]}" &
        lanes+=($!)
        for pid in "${lanes[@]}"; do wait "$pid" || failed=1; done
        [ "$failed" -eq 0 ] || return 1
    fi
    # A thread per test: its light tests run side by side (tests/README.md).
    RUST_TEST_THREADS=16 lane rates
    local group
    for group in "${!BINARY[@]}"; do
        [ -s "$LOGS/$group.log" ] || { say "test group $group is in Cargo.toml but not in scripts/test.sh's lanes"; return 1; }
    done
}

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
# tests/scripted/metrics_prometheus.rs checks --metrics-listen's text with
# promtool, and scrapes and receives --metrics-push with a throwaway
# Prometheus of its own (its own port and data directory; a service the
# package may start is left alone). watch_page.rs opens the live page and
# the HTML report in the Chromium above.
need prometheus prometheus promtool
# tests/scripted/fuzz_planted.rs and tests/mariadb/fuzz_mariadb_crash.rs run the Python 3
# scripts `wirebench fuzz-replay --emit=python` writes (standard library only).
need python3 python3
# tests/mariadb/record.rs records a Python application on mysql-connector-python
# (from PyPI, in a venv of its own below): Debian's python3 makes a venv with
# python3-venv.
python3 -c "import ensurepip" 2>/dev/null || NEEDED_PACKAGES+=(python3-venv)
# tests/sysbench/ps_mode.rs reads the statements wirebench and sysbench send
# from an strace of each.
need strace strace
# tests/mariadb/capture_import.rs captures a sysbench run with tcpdump and
# counts its commands with tshark's MySQL dissector (install_needed runs
# apt-get with DEBIAN_FRONTEND=noninteractive: tshark's debconf question
# about non-root capture takes its default).
need tcpdump tcpdump
need tshark tshark
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

# Two builds with target directories of their own start now, niced, to use
# the cores the workspace's builds leave idle (their last crates compile
# one at a time): the msql-srv interop server, built where
# tests/scripted/interop_servers.rs looks for it, and the fuzz targets
# with their corpus replay (fuzz/replay.sh). Each is waited for at the
# end, for its verdict; the interop test that needs the msql-srv server
# runs the same cargo build, which waits on the build directory's lock
# and then finds the server built.
BACKGROUND_LOGS=$(mktemp -d)
in_background() {
    local name=$1
    shift
    nice -n 10 "$@" >"$BACKGROUND_LOGS/$name.log" 2>&1 &
    BACKGROUND[$name]=$!
}
wait_for_background() {
    local name=$1 what=$2
    wait "${BACKGROUND[$name]}" ||
        { say "$what FAILED; its output:"; cat "$BACKGROUND_LOGS/$name.log" >&2; exit 1; }
}
in_background msql_srv cargo build --quiet --locked --manifest-path tests/servers/msql_srv/Cargo.toml \
    --target-dir target/interop-servers
[ -d "$REPO/fuzz" ] || die "no fuzz/ directory: the fuzz targets are part of the test suite"
in_background fuzz "$REPO/fuzz/replay.sh"

# The lints first: they fail in seconds where the tests take minutes.
step "cargo fmt --check"
cargo fmt --all --check ||
    { say "the code is not formatted as rustfmt.toml says: run \`cargo fmt --all\` and commit the result"; exit 1; }
step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings ||
    { say "clippy found the problems above: fix them, then check with \`cargo clippy --workspace --all-targets -- -D warnings\` (an #[allow(clippy::...)] only where the lint is wrong for that spot, with a one-line reason)"; exit 1; }

step "interop test servers (tests/servers/)"
# npm ci only when node_modules lacks the pinned mysql2.
if ! grep -qs '"version": "3.24.5"' tests/servers/node_mysql2/node_modules/mysql2/package.json; then
    npm ci --prefix tests/servers/node_mysql2 --no-audit --no-fund
fi

step "mysql-connector-python (tests/mariadb/record.rs)"
# A venv of its own under target/, the connector's version pinned; made once.
PYTHON_VENV=$REPO/target/python-venv
if ! "$PYTHON_VENV/bin/python" -c 'import mysql.connector' 2>/dev/null; then
    python3 -m venv "$PYTHON_VENV"
    "$PYTHON_VENV/bin/pip" install --quiet --disable-pip-version-check mysql-connector-python==26.10.0
fi
export WIREBENCH_TEST_PYTHON=$PYTHON_VENV/bin/python

step "MariaDB test servers"
if "$MARIADB" status 2>/dev/null; then
    say "reusing the server that is already running; it will be left running"
else
    STARTED_SERVER=1
fi
"$MARIADB" start
if second_server status >/dev/null 2>&1; then
    say "reusing the second server that is already running; it will be left running"
else
    STARTED_SECOND_SERVER=1
fi
second_server start
SECOND_SERVER_ENV=$(second_server env)
eval "$("$MARIADB" env)"
export WIREBENCH_REQUIRE_SERVER=1
say "WIREBENCH_TEST_HOST=$WIREBENCH_TEST_HOST WIREBENCH_TEST_PORT=$WIREBENCH_TEST_PORT"
say "WIREBENCH_TEST_SOCKET=$WIREBENCH_TEST_SOCKET WIREBENCH_REQUIRE_SERVER=1"
say "the second server (sysbench and hosts groups): $(echo "$SECOND_SERVER_ENV" | sed -n 's/^export WIREBENCH_TEST_PORT=/port /p')"

say "disk before the build: $(df -h --output=avail "$REPO" | tail -1 | tr -d ' ') free"
# The io_uring tests fail rather than skip where the kernel refuses the ring
# (set WIREBENCH_REQUIRE_URING=0 to let them skip on such a kernel).
export WIREBENCH_REQUIRE_URING=${WIREBENCH_REQUIRE_URING:-1}
step "building the tests (cargo test --workspace --no-run $*)"
cargo test --workspace --no-run "$@"
run_tests "$@"
wait_for_background msql_srv "the msql-srv interop server's build (cargo build --manifest-path tests/servers/msql_srv/Cargo.toml)"
say "disk after the tests: $(df -h --output=avail "$REPO" | tail -1 | tr -d ' ') free, target/ $(du -sh "$REPO/target" | cut -f1)"

step "fuzz targets"
# Every input the campaign kept runs once more: a decoder change that
# panics on one of them fails here (fuzz/README.md, "The check").
wait_for_background fuzz "fuzz/replay.sh (the fuzz targets built, each corpus replayed)"
say "$(tail -n 1 "$BACKGROUND_LOGS/fuzz.log")"

#!/usr/bin/env bash
# From a fresh Debian machine to a benchmark result:
#
#   scripts/quickstart.sh [extra benchmark options, e.g. --threads=64 --time=30]
#
# Installs what is missing (build tools, Rust, MariaDB, sysbench), builds
# wirebench, starts the throwaway MariaDB server (scripts/mariadb.sh) and runs
# oltp_point_select against it with wirebench: cleanup, prepare, then a short
# run. The command line is sysbench's; BENCH=sysbench runs sysbench instead,
# for comparison. The server is left running; stop it with
# scripts/mariadb.sh stop.
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$REPO"

if [ "${BENCH:-wirebench}" = sysbench ]; then BENCH=(sysbench); else BENCH=("$REPO/target/release/wirebench"); fi

MARIADB=$REPO/scripts/mariadb.sh

step "installing what is needed"
need_build_tools
need_mariadb
need sysbench sysbench
install_needed
ensure_rust

step "building wirebench (cargo build --release)"
cargo build --release
say "built $REPO/target/release/wirebench"

step "MariaDB server"
"$MARIADB" start
eval "$("$MARIADB" env)"

TEST=oltp_point_select
OPTIONS=(
    --db-driver=mysql
    --mysql-host="$WIREBENCH_TEST_HOST"
    --mysql-port="$WIREBENCH_TEST_PORT"
    --mysql-user=sbtest
    --mysql-password=sbtest
    --mysql-db=sbtest
    --tables=1
    --table-size=100000
    --threads=8
    --time=5
    --report-interval=1
    "$@"
)

step "benchmark: ${BENCH[*]} $TEST ${OPTIONS[*]} cleanup, prepare, run"
"${BENCH[@]}" "$TEST" "${OPTIONS[@]}" cleanup
"${BENCH[@]}" "$TEST" "${OPTIONS[@]}" prepare
"${BENCH[@]}" "$TEST" "${OPTIONS[@]}" run

step "done"
say "the MariaDB server is still running on $WIREBENCH_TEST_HOST:$WIREBENCH_TEST_PORT for more runs"
say "stop it with: scripts/mariadb.sh stop"

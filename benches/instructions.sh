#!/usr/bin/env bash
# Client instructions per query, counted by callgrind: repeatable to the
# instruction whatever else the machine is doing, so a change to the hot
# path can be judged on a noisy VM where timings move by 10%.
#
#   benches/instructions.sh [--wirebench=PATH]... [--events=N]
#
# For each wirebench binary (default target/release/wirebench; give
# --wirebench several times to compare builds) and each backend (io_uring,
# epoll) and pipeline depth (1, 8): oltp_point_select over 16 connections
# to the null server's unix socket, run once with N and once with 3N events
# under valgrind --tool=callgrind; the difference divided by 2N is the
# cost of one query (set-up and shutdown cancel out). The null server runs
# outside valgrind, pinned to the last core.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v valgrind >/dev/null || { echo "instructions: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }

binaries=()
events=100000
for arg in "$@"; do
    case $arg in
        --wirebench=*) binaries+=("${arg#--wirebench=}") ;;
        --events=*) events=${arg#--events=} ;;
        *) echo "instructions: unknown argument $arg (--wirebench=PATH, --events=N)" >&2; exit 1 ;;
    esac
done
cargo build --release --quiet
[ ${#binaries[@]} -gt 0 ] || binaries=(target/release/wirebench)

dir=$(mktemp -d)
server=target/release/wirebench
last_core=$(( $(nproc) - 1 ))
"$server" null-server --socket="$dir/null.sock" --cpus="$last_core" 2>/dev/null &
server_pid=$!
trap 'kill -INT $server_pid 2>/dev/null; wait $server_pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -S "$dir/null.sock" ] && break; sleep 0.05; done

# Instructions of one run of `$1` with `$2` events and the rest as options.
instructions() {
    local binary=$1 count=$2
    shift 2
    valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" "$binary" oltp_point_select \
        --mysql-socket="$dir/null.sock" --mysql-user=x --mysql-password=y --tables=1 --table-size=10000 \
        --threads=16 --events="$count" --time=0 --cpus=0 "$@" run 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-40s %-6s %-9s %s\n' binary io pipeline "instructions/query"
for binary in "${binaries[@]}"; do
    for io in uring epoll; do
        for pipeline in 1 8; do
            one=$(instructions "$binary" "$events" --io="$io" --pipeline="$pipeline")
            three=$(instructions "$binary" $((3 * events)) --io="$io" --pipeline="$pipeline")
            printf '%-40s %-6s %-9s %d\n' "$binary" "$io" "$pipeline" $(( (three - one) / (2 * events) ))
        done
    done
done

#!/bin/sh
# Runs one wirebench shard per host over ssh, all starting their events
# at the same instant, gathers each shard's JSON result (stdout) and
# report and messages (stderr) into a directory, then merges the results
# into the whole run's report.
#
#   deploy/ssh/run-shards.sh -o results/ -d 30 client1 client2 client3 -- \
#       oltp_read_write --mysql-host=db1 --threads=192 --time=60 run
#
# Host i runs `wirebench ARGS --shard=i/N --start-at=T --format=json`, T
# being now plus -d seconds (default 20: enough for ssh and the
# connections), into DIR/shard-i.json and DIR/shard-i.err. Then, here,
# `wirebench merge DIR/shard-*.json` writes DIR/merged.txt (and prints
# it). WIREBENCH names the program on the hosts (default: wirebench on
# their PATH), WIREBENCH_LOCAL the one here that merges (default:
# wirebench), WIREBENCH_SSH the ssh command (default: ssh -o
# BatchMode=yes).
set -eu

out=shards
delay=20
while getopts o:d: flag; do
    case $flag in
        o) out=$OPTARG ;;
        d) delay=$OPTARG ;;
        *) echo "usage: $0 [-o DIR] [-d SECONDS] HOST... -- WIREBENCH-ARGS..." >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

hosts=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    hosts="$hosts $1"
    shift
done
if [ $# -eq 0 ] || [ -z "$hosts" ]; then
    echo "$0: give the hosts, then -- and wirebench's arguments" >&2
    exit 2
fi
shift

count=$(echo $hosts | wc -w)
start_at=$(( $(date +%s) + delay ))
mkdir -p "$out"

# Each argument quoted for the remote shell.
quoted=""
for arg in "$@"; do
    quoted="$quoted '$(printf '%s' "$arg" | sed "s/'/'\\\\''/g")'"
done

index=0
pids=""
for host in $hosts; do
    ${WIREBENCH_SSH:-ssh -o BatchMode=yes} "$host" \
        "${WIREBENCH:-wirebench}$quoted --shard=$index/$count --start-at=$start_at --format=json" \
        >"$out/shard-$index.json" 2>"$out/shard-$index.err" &
    pids="$pids $!"
    index=$((index + 1))
done

status=0
index=0
for pid in $pids; do
    if ! wait "$pid"; then
        echo "$0: shard $index failed: see $out/shard-$index.err" >&2
        status=1
    fi
    index=$((index + 1))
done
if [ $status -ne 0 ]; then
    exit $status
fi

# The shards' files are in; merge them here (wirebench merge sorts them by
# shard index and names any that is absent).
set --
index=0
while [ $index -lt $count ]; do
    set -- "$@" "$out/shard-$index.json"
    index=$((index + 1))
done
if ! "${WIREBENCH_LOCAL:-wirebench}" merge "$@" >"$out/merged.txt"; then
    echo "$0: merging failed; run: wirebench merge $out/shard-*.json" >&2
    exit 1
fi
cat "$out/merged.txt"

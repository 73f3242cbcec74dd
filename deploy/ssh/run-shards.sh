#!/bin/sh
# Runs one wirebench shard per host over ssh, all starting their events
# at the same instant, and gathers each shard's report (stdout) and
# messages (stderr) into a directory.
#
#   deploy/ssh/run-shards.sh -o results/ -d 30 client1 client2 client3 -- \
#       oltp_read_write --mysql-host=db1 --threads=192 --time=60 run
#
# Host i runs `wirebench ARGS --shard=i/N --start-at=T`, T being now plus
# -d seconds (default 20: enough for ssh and the connections). WIREBENCH
# names the program on the hosts (default: wirebench on their PATH),
# WIREBENCH_SSH the ssh command (default: ssh -o BatchMode=yes).
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
        "${WIREBENCH:-wirebench}$quoted --shard=$index/$count --start-at=$start_at" \
        >"$out/shard-$index.out" 2>"$out/shard-$index.err" &
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
exit $status

#!/bin/bash
# Regenerates one trace file of sysbench 1.0.20 running a sysbench 0.5 script
# as 1.0.20's own source tree keeps it (tests/include/oltp_legacy/), under
# strace, decoded by ../sysbench/decode.py.
#   SYSBENCH_SRC=DIR gen.sh NAME SCRIPT ARGS...   traces `sysbench DIR/tests/include/oltp_legacy/SCRIPT ARGS --threads=1 run`
#   CMD=prepare gen.sh ...                         traces prepare instead (drop the tables first)
# SYSBENCH_SRC is a checkout of sysbench 1.0.20, or a bare clone (the scripts
# are then taken from its tag 1.0.20). The header line names the script as
# --test=tests/include/oltp_legacy/SCRIPT, the 0.5 way the tests parse it.
# Server: WIREBENCH_TEST_HOST/PORT, user sbtest/sbtest, database sbtest.
set -e
cd "$(dirname "$0")"
name=$1; shift; script=$1; shift
src=${SYSBENCH_SRC:?SYSBENCH_SRC: a sysbench 1.0.20 source tree or bare clone}
dir=$(mktemp -d)
if [ -d "$src/tests/include/oltp_legacy" ]; then
    cp "$src"/tests/include/oltp_legacy/*.lua "$dir"
else
    for f in $(git -C "$src" ls-tree --name-only 1.0.20 tests/include/oltp_legacy/); do
        git -C "$src" show "1.0.20:$f" > "$dir/$(basename "$f")"
    done
fi
SB="sysbench --mysql-host=${WIREBENCH_TEST_HOST:-127.0.0.1} --mysql-port=${WIREBENCH_TEST_PORT:-3306} \
--mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest"
cmd=${CMD:-run}
trace=$(mktemp)
strace -f -xx -s 1000000 -e trace=sendto,recvfrom -o "$trace" $SB "$dir/$script" "$@" --threads=1 $cmd >/dev/null
{ echo "# sysbench 1.0.20 running its copy of the 0.5 script against MariaDB 10.11, traced with strace:"
  echo "# sysbench --test=tests/include/oltp_legacy/$script $* --threads=1 $cmd"
  echo "# (Q: COM_QUERY text, E: an execute of a prepared statement; the 0.5 scripts bind INT, not BIGINT)"
  ../sysbench/decode.py "$trace" ${MODE:-full}; } > "$name.txt"
rm -rf "$trace" "$dir"
wc -l "$name.txt"

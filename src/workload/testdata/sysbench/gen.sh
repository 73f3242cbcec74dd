#!/bin/bash
# Regenerates one trace file: runs the real sysbench 1.0.20 under strace and
# decodes the commands it sends (decode.py).
#   gen.sh NAME TEST ARGS...        traces `sysbench TEST ARGS --threads=1 run`
#   CMD=prepare gen.sh ...          traces prepare instead (drop the tables first)
#   MODE=hash                       writes length + SHA-1 of each query
# Server: WIREBENCH_TEST_HOST/PORT, user sbtest/sbtest, database $DB (sbtest).
set -e
cd "$(dirname "$0")"
name=$1; shift; test=$1; shift
SB="sysbench --mysql-host=${WIREBENCH_TEST_HOST:-127.0.0.1} --mysql-port=${WIREBENCH_TEST_PORT:-3306} \
--mysql-user=sbtest --mysql-password=sbtest --mysql-db=${DB:-sbtest}"
cmd=${CMD:-run}
trace=$(mktemp)
strace -f -xx -s 1000000 -e trace=sendto,recvfrom -o "$trace" $SB $test "$@" --threads=1 $cmd >/dev/null
{ echo "# sysbench 1.0.20 against MariaDB 10.11, traced with strace:"
  echo "# sysbench $test $* --threads=1 $cmd"
  echo "# (BEGIN, which sysbench prepares on MariaDB, is written as the COM_QUERY wirebench sends)"
  ./decode.py "$trace" ${MODE:-full} | sed 's/^E\tBEGIN$/Q\tBEGIN/'; } > $name.txt
rm -f "$trace"
wc -l $name.txt

#!/bin/bash
# Regenerates one trace file of the real sysbench 0.4.12 (`--test=oltp`, its
# built-in test) under strace, decoded by ../sysbench/decode.py.
#   SYSBENCH04=BINARY gen.sh NAME ARGS...   traces `sysbench --test=oltp ARGS --num-threads=1 run`
#   CMD=prepare gen.sh ...                   traces prepare instead (drop the table first)
# BINARY: sysbench 0.4.12 built from the 0.4 branch of akopytov/sysbench
# (./autogen.sh; ./configure --with-mysql-includes=/usr/include/mariadb
# --with-mysql-libs=/usr/lib/x86_64-linux-gnu; make, then link sysbench/
# against -lmariadb instead of -lmysqlclient_r).
# Without --seed-rng or --init-rng, 0.4 draws from an unseeded lrand48():
# one thread sends the same values on every run. Left out of the trace: the
# `SHOW TABLE STATUS LIKE 'sbtest'` with which 0.4 asks for the engine
# before a run (wirebench takes it from --mysql-table-engine). 0.4 prepares
# BEGIN, LOCK TABLES and UNLOCK TABLES, which MariaDB accepts; they are
# written as the COM_QUERY text wirebench sends.
# Server: WIREBENCH_TEST_HOST/PORT, user sbtest/sbtest, database sbtest.
set -e
cd "$(dirname "$0")"
name=$1; shift
SB="${SYSBENCH04:?SYSBENCH04: a sysbench 0.4.12 binary} --mysql-host=${WIREBENCH_TEST_HOST:-127.0.0.1} \
--mysql-port=${WIREBENCH_TEST_PORT:-3306} --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest"
cmd=${CMD:-run}
trace=$(mktemp)
strace -f -xx -s 1000000 -e trace=sendto,recvfrom -o "$trace" $SB --test=oltp "$@" --num-threads=1 $cmd >/dev/null
{ echo "# sysbench 0.4.12 against MariaDB 10.11, traced with strace:"
  echo "# sysbench --test=oltp $* --num-threads=1 $cmd"
  echo "# (Q: COM_QUERY text, E: an execute of a prepared statement; 0.4 seeds nothing: one thread draws the same values every run)"
  ../sysbench/decode.py "$trace" ${MODE:-full} | grep -v "^Q	SHOW TABLE STATUS LIKE" \
    | sed -E 's/^E\t(BEGIN|LOCK TABLES [^\t]*|UNLOCK TABLES)$/Q\t\1/'; } > "$name.txt"
rm -f "$trace"
wc -l "$name.txt"

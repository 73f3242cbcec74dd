#!/usr/bin/env bash
# A throwaway MariaDB server for wirebench's tests and benchmarks.
#
#   scripts/mariadb.sh start|stop|restart|status|env
#
# The server is private to this checkout: its own data directory, its own
# port on 127.0.0.1 and a unix socket inside the data directory. It is started
# with --no-defaults, so no /etc/mysql or ~/.my.cnf setting leaks in, and it
# never uses the system's mariadb.service.
#
# Settings (environment):
#   WIREBENCH_MARIADB_DIR   directory holding data, socket, pid and logs
#                           (default: <repo>/.wirebench-mariadb)
#   WIREBENCH_TEST_PORT     TCP port on 127.0.0.1 (default: 3407)
#   WIREBENCH_MARIADB_ARGS  extra mariadbd options, appended last
#   WIREBENCH_MARIADB_START_TIMEOUT  seconds to wait for the server (default: 120)
#
# Accounts: database sbtest; users sbtest and sbtest_ed (password "sbtest",
# from 'localhost' = the socket and from '%' = TCP) with all privileges on
# sbtest.*; sbtest authenticates with mysql_native_password, sbtest_ed with
# ed25519. The administrator is the OS user running this script, through the
# unix_socket plugin on the socket.
#
# TLS: the data directory's tls/ holds a test CA (ca.pem, also as cacert.pem,
# the name sysbench 1.0.20 reads), a server certificate for 127.0.0.1 and
# localhost, and a client certificate (client-cert.pem, client-key.pem), made
# with openssl on the first start; other-ca.pem is a CA that signed nothing
# here. So a run started in that directory finds what `--mysql-ssl=on` wants.
# Users sbtest_tls (REQUIRE SSL) and sbtest_x509 (REQUIRE X509), password
# "sbtest", have all privileges on sbtest.* and sbtest_tls.*; so has sbtest
# on sbtest_tls.*. `env` exports the directory as WIREBENCH_TEST_TLS_DIR.
# Databases sbtest_wl and sbtest_pipeline (all privileges for sbtest) are
# for tests that need sysbench tables of their own, apart from the ones in
# sbtest (sbtest_pipeline: tests/mariadb/pipeline_transactions.rs); sbtest_fuzz is
# for fuzzing the test server by hand (`wirebench fuzz --mysql-db=sbtest_fuzz`,
# docs/fuzzing.md; tests/mariadb/fuzz_servers.rs only replays into it).
# Databases sbtest_tpcc and sbtest_tpcc_ref are tests/sysbench/lua_tpcc.rs's:
# sysbench-tpcc's tables, and a copy of them for sysbench itself.
# Database sbtest_quickstart is tests/mariadb/docs.rs's: the README's quick start
# runs there. Database sbtest_search is tests/rates/search.rs's (a capacity search
# on tables of its own). Databases sbtest_shards and sbtest_image are
# tests/hosts/'s: its two files run their shards at the same time. Database
# sbtest_capture is tests/mariadb/capture_import.rs's (a sysbench run captured);
# sbtest_record is tests/mariadb/record.rs's (applications recorded through
# record); sbtest_replay is tests/mariadb/replay_clients.rs's (captures of real
# clients replayed).
set -euo pipefail
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HOST=127.0.0.1
PORT=${WIREBENCH_TEST_PORT:-3407}
DIR=${WIREBENCH_MARIADB_DIR:-$REPO/.wirebench-mariadb}
case $DIR in
    /*) ;;
    *) DIR=$PWD/$DIR ;;
esac
DATADIR=$DIR/data
SOCKET=$DIR/mariadbd.sock
PIDFILE=$DIR/mariadbd.pid
ERRLOG=$DIR/error.log
INSTALL_LOG=$DIR/install-db.log
INITIALIZED=$DIR/.initialized
TLS_DIR=$DIR/tls
START_TIMEOUT=${WIREBENCH_MARIADB_START_TIMEOUT:-120}
STOP_TIMEOUT=60
ADMIN_USER=$(id -un)
MAX_CONNECTIONS=12000
OPEN_FILES=65535

case $PORT in
    '' | *[!0-9]*) die "WIREBENCH_TEST_PORT must be a port number, got '$PORT'" ;;
esac

usage() {
    cat >&2 <<EOF
usage: scripts/mariadb.sh start|stop|restart|status|env

  start    install MariaDB if needed, create the data directory, start the
           server on $HOST:$PORT and create the test accounts
  stop     shut the server down
  restart  stop, then start
  status   say whether the server runs, and its version (exit 3 when not)
  env      print 'export WIREBENCH_TEST_...' lines: eval "\$(scripts/mariadb.sh env)"

data directory: $DIR
EOF
}

# Pid of our mariadbd when it is alive, else nothing (and status 1).
server_pid() {
    local pid
    [ -r "$PIDFILE" ] || return 1
    pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
    case $pid in '' | *[!0-9]*) return 1 ;; esac
    kill -0 "$pid" 2>/dev/null || return 1
    # A reused pid belonging to another program is not our server.
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] || return 1
    echo "$pid"
}

# SQL as the administrator over the socket; --no-defaults keeps a user's
# ~/.my.cnf out.
admin_sql() {
    mariadb --no-defaults --protocol=socket --socket="$SOCKET" --user="$ADMIN_USER" \
        --batch --skip-column-names --connect-timeout=5 -e "$1"
}

answers() { admin_sql 'SELECT 1' >/dev/null 2>&1; }

port_in_use() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

error_log_tail() {
    if [ -s "$ERRLOG" ]; then
        printf -- '--- last lines of %s ---\n' "$ERRLOG" >&2
        tail -n 30 "$ERRLOG" >&2
        printf -- '---\n' >&2
    fi
}

ensure_installed() {
    need_mariadb
    need openssl openssl
    if [ "${#NEEDED_PACKAGES[@]}" -gt 0 ]; then
        step "installing MariaDB"
        install_needed
    fi
    have mariadbd || die "mariadbd is still missing after installing mariadb-server"
}

# Creates the system tables once; a directory left half-made by an interrupted
# run is thrown away and made again (it holds nothing worth keeping).
ensure_datadir() {
    if [ -e "$INITIALIZED" ] && [ -d "$DATADIR/mysql" ]; then
        say "using existing data directory $DATADIR"
        return
    fi
    if [ -e "$DATADIR" ]; then
        say "removing incomplete data directory $DATADIR"
        rm -rf "$DATADIR"
    fi
    mkdir -p "$DATADIR" "$DIR/tmp"
    say "creating data directory $DATADIR with mariadb-install-db (log: $INSTALL_LOG)"
    local args=(--no-defaults --datadir="$DATADIR" --skip-test-db
        --auth-root-authentication-method=socket --auth-root-socket-user="$ADMIN_USER")
    # mariadbd refuses to run as root unless told to. Running as root (rather
    # than chown-ing to the mysql user) also works when the checkout sits in a
    # directory the mysql user cannot enter, as /root does.
    [ "$(id -u)" -eq 0 ] && args+=(--user=root)
    if ! mariadb-install-db "${args[@]}" >"$INSTALL_LOG" 2>&1; then
        tail -n 30 "$INSTALL_LOG" >&2
        die "mariadb-install-db failed; full log in $INSTALL_LOG"
    fi
    touch "$INITIALIZED"
}

# The test PKI, made once; a directory left half-made is made again. Every
# certificate is valid for 100 years so that a kept data directory never
# expires under the tests.
ensure_certificates() {
    if [ -e "$TLS_DIR/.complete" ]; then
        return
    fi
    have openssl || die "openssl is missing; it makes the rig's TLS certificates (apt-get install openssl)"
    say "creating a test CA and server/client certificates in $TLS_DIR"
    rm -rf "$TLS_DIR"
    mkdir -p "$TLS_DIR"
    local days=36500 log=$TLS_DIR/openssl.log
    (
        set -e
        cd "$TLS_DIR"
        ca() { # ca NAME SUBJECT
            openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1-key.pem" -out "$1.pem" -days $days \
                -subj "$2" -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
        }
        leaf() { # leaf NAME SUBJECT EXTENSIONS SERIAL
            openssl req -newkey rsa:2048 -nodes -keyout "$1-key.pem" -out "$1.csr" -subj "$2"
            printf '%s\n' "$3" >"$1.ext"
            openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -set_serial "$4" -days $days \
                -extfile "$1.ext" -out "$1-cert.pem"
            rm -f "$1.csr" "$1.ext"
        }
        ca ca '/CN=wirebench test CA'
        ca other-ca '/CN=wirebench other CA'
        leaf server /CN=localhost "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost" 1001
        leaf client /CN=sbtest_x509 "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth" 1002
        cp ca.pem cacert.pem
        rm -f other-ca-key.pem
    ) >"$log" 2>&1 || {
        cat "$log" >&2
        die "making the test certificates failed (log: $log)"
    }
    chmod 644 "$TLS_DIR"/*.pem
    touch "$TLS_DIR/.complete"
}

server_args() {
    SERVER_ARGS=(--no-defaults
        --datadir="$DATADIR"
        --tmpdir="$DIR/tmp"
        --socket="$SOCKET"
        --pid-file="$PIDFILE"
        --log-error="$ERRLOG"
        --bind-address="$HOST"
        --port="$PORT"
        --skip-name-resolve
        # 10k-connection tests need thousands of connections, each a file
        # descriptor; back_log absorbs a burst of connects.
        --max-connections="$MAX_CONNECTIONS"
        --open-files-limit="$OPEN_FILES"
        --back-log=4096
        # Negative tests abort handshakes on purpose; never block 127.0.0.1.
        --max-connect-errors=1000000000
        --max-prepared-stmt-count=1048576
        # Lets tests send payloads over 16 MiB, which split into several packets.
        --max-allowed-packet=1G
        --innodb-buffer-pool-size=512M
        --innodb-log-file-size=256M
        --innodb-flush-log-at-trx-commit=2
        --character-set-server=utf8mb4
        --collation-server=utf8mb4_general_ci
        --ssl-ca="$TLS_DIR/ca.pem"
        --ssl-cert="$TLS_DIR/server-cert.pem"
        --ssl-key="$TLS_DIR/server-key.pem")
    [ "$(id -u)" -eq 0 ] && SERVER_ARGS+=(--user=root)
    if [ -n "${WIREBENCH_MARIADB_ARGS:-}" ]; then
        local extra
        read -r -a extra <<<"$WIREBENCH_MARIADB_ARGS"
        SERVER_ARGS+=("${extra[@]}")
    fi
    return 0
}

raise_open_files_limit() {
    # As root, mariadbd raises its own limit to --open-files-limit; otherwise
    # it can only reach the hard limit, so lift the soft one as far as allowed.
    ulimit -Hn "$OPEN_FILES" 2>/dev/null || true
    ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true
}

wait_until_ready() {
    local pid=$1 waited=0
    while ! answers; do
        if ! kill -0 "$pid" 2>/dev/null; then
            error_log_tail
            die "mariadbd exited during startup (see above; full log in $ERRLOG)"
        fi
        if [ "$waited" -ge "$START_TIMEOUT" ]; then
            error_log_tail
            kill -TERM "$pid" 2>/dev/null || true
            die "mariadbd (pid $pid) did not answer on $SOCKET within ${START_TIMEOUT}s; stopped it (full log in $ERRLOG)"
        fi
        sleep 1
        waited=$((waited + 1))
    done
    WAITED=$waited
}

# Idempotent: run after every start, so a data directory made by an older
# version of this script gets every account, and altered passwords are reset.
provision() {
    say "ensuring databases sbtest, sbtest_tls, sbtest_wl, sbtest_pipeline, sbtest_fuzz, sbtest_lua, sbtest_tpcc, sbtest_tpcc_ref, sbtest_quickstart, sbtest_search, sbtest_shards, sbtest_image, sbtest_capture, sbtest_record, sbtest_replay; users sbtest (mysql_native_password), sbtest_ed (ed25519), sbtest_tls (REQUIRE SSL) and sbtest_x509 (REQUIRE X509), password 'sbtest', from 'localhost' and '%'"
    local plugin
    plugin=$(admin_sql "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ed25519'")
    if [ -z "$plugin" ]; then
        say "installing the ed25519 authentication plugin"
        admin_sql "INSTALL SONAME 'auth_ed25519'"
    fi
    local sql="CREATE DATABASE IF NOT EXISTS sbtest; CREATE DATABASE IF NOT EXISTS sbtest_tls;
CREATE DATABASE IF NOT EXISTS sbtest_wl; CREATE DATABASE IF NOT EXISTS sbtest_pipeline;
CREATE DATABASE IF NOT EXISTS sbtest_fuzz; CREATE DATABASE IF NOT EXISTS sbtest_lua;
CREATE DATABASE IF NOT EXISTS sbtest_tpcc; CREATE DATABASE IF NOT EXISTS sbtest_tpcc_ref;
CREATE DATABASE IF NOT EXISTS sbtest_quickstart; CREATE DATABASE IF NOT EXISTS sbtest_search;
CREATE DATABASE IF NOT EXISTS sbtest_shards; CREATE DATABASE IF NOT EXISTS sbtest_image;
CREATE DATABASE IF NOT EXISTS sbtest_capture; CREATE DATABASE IF NOT EXISTS sbtest_record;
CREATE DATABASE IF NOT EXISTS sbtest_replay;" host user
    for host in localhost %; do
        sql+="
CREATE USER IF NOT EXISTS 'sbtest'@'$host';
ALTER USER 'sbtest'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('sbtest');
GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest'@'$host';
CREATE USER IF NOT EXISTS 'sbtest_ed'@'$host';
ALTER USER 'sbtest_ed'@'$host' IDENTIFIED VIA ed25519 USING PASSWORD('sbtest');
GRANT ALL PRIVILEGES ON sbtest.* TO 'sbtest_ed'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_tls\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_wl\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_pipeline\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_fuzz\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_lua\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_tpcc\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_tpcc\\_ref\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_quickstart\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_search\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_shards\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_image\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_capture\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_record\`.* TO 'sbtest'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_replay\`.* TO 'sbtest'@'$host';"
        for user in sbtest_tls:SSL sbtest_x509:X509; do
            sql+="
CREATE USER IF NOT EXISTS '${user%%:*}'@'$host';
ALTER USER '${user%%:*}'@'$host' IDENTIFIED VIA mysql_native_password USING PASSWORD('sbtest') REQUIRE ${user#*:};
GRANT ALL PRIVILEGES ON sbtest.* TO '${user%%:*}'@'$host';
GRANT ALL PRIVILEGES ON \`sbtest\\_tls\`.* TO '${user%%:*}'@'$host';"
        done
    done
    admin_sql "$sql" || die "creating the test accounts failed"
}

describe() {
    local pid=$1 info
    info=$(admin_sql "SELECT CONCAT('MariaDB ', VERSION(), ', max_connections=', @@max_connections, ', open_files_limit=', @@open_files_limit)" 2>/dev/null) ||
        info="version unknown: the server does not answer on $SOCKET"
    say "running: pid $pid, $HOST:$PORT, socket $SOCKET"
    say "         $info"
}

cmd_start() {
    mkdir -p "$DIR"
    # One start/stop at a time per data directory. The lock fd is closed for
    # mariadbd below, or the server would hold the lock for its whole life.
    exec 9>"$DIR/.lock"
    flock -w 300 9 || die "another scripts/mariadb.sh holds $DIR/.lock"

    local pid
    if pid=$(server_pid); then
        say "already running (pid $pid); not starting another"
        wait_until_ready "$pid"
        ensure_certificates
        if [ "$(admin_sql 'SELECT @@have_ssl')" != YES ]; then
            say "warning: this server runs without TLS (started by an older scripts/mariadb.sh?); restart it for the TLS tests: scripts/mariadb.sh restart"
        fi
        provision
        describe "$pid"
        return
    fi

    ensure_installed
    step "starting the throwaway MariaDB server"
    if [ -e "$PIDFILE" ]; then
        say "removing stale pid file $PIDFILE (its process is gone)"
        rm -f "$PIDFILE"
    fi
    if port_in_use; then
        die "something else already listens on $HOST:$PORT; choose another port with WIREBENCH_TEST_PORT"
    fi
    # sun_path holds 108 bytes including the terminating NUL.
    if [ "${#SOCKET}" -gt 107 ]; then
        die "socket path $SOCKET is longer than 107 bytes; set WIREBENCH_MARIADB_DIR to a shorter directory"
    fi
    ensure_datadir
    ensure_certificates
    mkdir -p "$DIR/tmp"
    server_args
    raise_open_files_limit

    say "starting mariadbd --no-defaults on $HOST:$PORT, socket $SOCKET (log: $ERRLOG)"
    # setsid: a terminal's Ctrl-C or the end of a CI step must not reach it.
    setsid mariadbd "${SERVER_ARGS[@]}" </dev/null >>"$ERRLOG" 2>&1 9>&- &
    pid=$!
    wait_until_ready "$pid"
    say "server answers after ${WAITED}s"
    provision
    describe "$(server_pid || echo "$pid")"
    say "started; for the tests: eval \"\$(scripts/mariadb.sh env)\"; to stop: scripts/mariadb.sh stop"
}

cmd_stop() {
    [ -d "$DIR" ] || {
        say "not running (no $DIR); nothing to stop"
        return
    }
    exec 9>"$DIR/.lock"
    flock -w 300 9 || die "another scripts/mariadb.sh holds $DIR/.lock"

    local pid waited=0
    if ! pid=$(server_pid); then
        say "not running; nothing to stop"
        rm -f "$PIDFILE"
        return
    fi
    say "shutting down mariadbd (pid $pid) with mariadb-admin shutdown"
    if ! timeout "$STOP_TIMEOUT" mariadb-admin --no-defaults --protocol=socket --socket="$SOCKET" \
        --user="$ADMIN_USER" --connect-timeout=5 shutdown >/dev/null 2>&1; then
        # SIGTERM makes mariadbd shut down cleanly too.
        say "mariadb-admin shutdown failed; sending SIGTERM"
        kill -TERM "$pid" 2>/dev/null || true
    fi
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$waited" -ge "$STOP_TIMEOUT" ]; then
            say "still running after ${STOP_TIMEOUT}s; killing it (SIGKILL)"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 1
            break
        fi
        sleep 1
        waited=$((waited + 1))
    done
    rm -f "$PIDFILE"
    say "stopped (data kept in $DATADIR; remove $DIR for a fresh server)"
}

cmd_status() {
    local pid
    if pid=$(server_pid); then
        describe "$pid"
        return 0
    fi
    say "not running (data directory: $DIR)"
    return 3
}

cmd_env() {
    printf 'export WIREBENCH_TEST_HOST=%q\n' "$HOST"
    printf 'export WIREBENCH_TEST_PORT=%q\n' "$PORT"
    printf 'export WIREBENCH_TEST_SOCKET=%q\n' "$SOCKET"
    printf 'export WIREBENCH_TEST_TLS_DIR=%q\n' "$TLS_DIR"
    server_pid >/dev/null || say "warning: the server is not running; start it with scripts/mariadb.sh start"
}

case ${1:-} in
    start) cmd_start ;;
    stop) cmd_stop ;;
    restart)
        cmd_stop
        exec 9>&-
        cmd_start
        ;;
    status) cmd_status ;;
    env) cmd_env ;;
    -h | --help | help) usage ;;
    *)
        usage
        exit 2
        ;;
esac

//! Every option name wirebench knows, grouped as sysbench groups them, with
//! its value kind, default and help line (the help output and the
//! "did you mean" suggestions come from these tables).

/// How sysbench reads an option's value (`sb_arg_type_t`). The Lua scripts'
/// numeric options are doubles in sysbench; wirebench takes whole numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `--name`, `--name=on|off|true|false|1|0`.
    Bool,
    Int,
    /// A number with an optional K, M, G or T suffix.
    Size,
    Double,
    String,
    /// Comma-separated.
    List,
    File,
}

impl Kind {
    /// The `=N` part of a help line, as `sb_print_options` writes it.
    pub(crate) fn format(self) -> &'static str {
        match self {
            Kind::Bool => "[=on|off]",
            Kind::Int | Kind::Double => "=N",
            Kind::Size => "=SIZE",
            Kind::String => "=STRING",
            Kind::List => "=[LIST,...]",
            Kind::File => "=FILENAME",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct OptDef {
    /// Spelled as sysbench spells it (dashes for the C options, underscores
    /// for the Lua ones); `-` and `_` are interchangeable when matching.
    pub name: &'static str,
    pub kind: Kind,
    pub default: Option<&'static str>,
    pub help: &'static str,
}

const fn opt(name: &'static str, kind: Kind, default: Option<&'static str>, help: &'static str) -> OptDef {
    OptDef { name, kind, default, help }
}

use Kind::{Bool, Double, File, Int, List, Size};
const STRING: Kind = Kind::String;

/// sysbench 1.0.20's general options (`general_args` in sysbench.c),
/// including the deprecated aliases it still accepts.
pub(crate) const GENERAL: &[OptDef] = &[
    opt(
        "threads",
        Int,
        Some("1"),
        "number of threads to use; a list (1,2,4,8) runs one step per value, a sweep, ended by a table",
    ),
    opt("events", Int, Some("0"), "limit for total number of events"),
    opt("time", Int, Some("10"), "limit for total execution time in seconds"),
    opt(
        "forced-shutdown",
        STRING,
        Some("off"),
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
    ),
    opt("thread-stack-size", Size, Some("64K"), "size of stack per thread"),
    opt("rate", Int, Some("0"), "average transactions rate. 0 for unlimited rate"),
    opt(
        "report-interval",
        Int,
        Some("0"),
        "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports",
    ),
    opt(
        "report-checkpoints",
        List,
        Some(""),
        "dump full statistics and reset all counters at specified points in time. The argument is a list of \
         comma-separated values representing the amount of time in seconds elapsed from start of test when report \
         checkpoint(s) must be performed. Report checkpoints are off by default.",
    ),
    opt("debug", Bool, Some("off"), "print more debugging info"),
    opt("validate", Bool, Some("off"), "perform validation checks where possible"),
    opt("help", Bool, Some("off"), "print help and exit"),
    opt("version", Bool, Some("off"), "print version and exit"),
    opt("config-file", File, None, "File containing command line options"),
    opt("tx-rate", Int, Some("0"), "deprecated alias for --rate"),
    opt("max-requests", Int, Some("0"), "deprecated alias for --events"),
    opt("max-time", Int, Some("0"), "deprecated alias for --time"),
    opt("num-threads", Int, Some("1"), "deprecated alias for --threads"),
];

/// `--test=NAME`: deprecated in 1.0.20 but accepted; not in its help.
pub(crate) const TEST_OPTION: OptDef = opt("test", STRING, None, "test to run (deprecated: name it without --test)");

pub(crate) const RAND: &[OptDef] = &[
    opt("rand-type", STRING, Some("special"), "random numbers distribution {uniform,gaussian,special,pareto,zipfian}"),
    opt("rand-spec-iter", Int, Some("12"), "number of iterations used for numbers generation"),
    opt("rand-spec-pct", Int, Some("1"), "percentage of values to be treated as 'special' (for special distribution)"),
    opt("rand-spec-res", Int, Some("75"), "percentage of 'special' values to use (for special distribution)"),
    opt(
        "rand-seed",
        Int,
        Some("0"),
        "seed for random number generator. When 0, the current time is used as a RNG seed.",
    ),
    opt("rand-pareto-h", Double, Some("0.2"), "parameter h for pareto distribution"),
];

pub(crate) const LOG: &[OptDef] = &[
    opt("verbosity", Int, Some("3"), "verbosity level {5 - debug, 0 - only critical messages}"),
    opt(
        "percentile",
        Int,
        Some("95"),
        "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations",
    ),
    opt("histogram", Bool, Some("off"), "print latency histogram in report"),
];

pub(crate) const DB: &[OptDef] = &[
    opt("db-driver", STRING, Some("mysql"), "specifies database driver to use (only mysql)"),
    opt("db-ps-mode", STRING, Some("auto"), "prepared statements usage mode {auto, disable}"),
    opt("db-debug", Bool, Some("off"), "print database-specific debug information"),
];

pub(crate) const MYSQL: &[OptDef] = &[
    opt("mysql-host", List, Some("localhost"), "MySQL server host"),
    opt("mysql-port", List, Some("3306"), "MySQL server port"),
    opt("mysql-socket", List, None, "MySQL socket"),
    opt("mysql-user", STRING, Some("sbtest"), "MySQL user"),
    opt("mysql-password", STRING, Some(""), "MySQL password"),
    opt("mysql-db", STRING, Some("sbtest"), "MySQL database name"),
    opt(
        "mysql-ssl",
        Bool,
        Some("off"),
        "use SSL connections. on: TLS required, with client-key.pem, client-cert.pem and cacert.pem from the current \
         directory where present (as sysbench 1.0.20); also DISABLED, PREFERRED, REQUIRED, VERIFY_CA (the server \
         certificate must be signed by --mysql-ssl-ca) or VERIFY_IDENTITY (and name the host), as sysbench master",
    ),
    opt(
        "mysql-ssl-cipher",
        STRING,
        Some(""),
        "use specific cipher for SSL connections: OpenSSL names separated by ':', e.g. ECDHE-RSA-AES128-GCM-SHA256 or \
         TLS_AES_256_GCM_SHA384; only the named ones are offered",
    ),
    opt("mysql-compression", Bool, Some("off"), "use compression"),
    opt("mysql-debug", Bool, Some("off"), "trace all client library calls"),
    opt("mysql-ignore-errors", List, Some("1213,1020,1205"), "list of errors to ignore, or \"all\""),
    opt(
        "mysql-dry-run",
        Bool,
        Some("off"),
        "Dry run, pretend that all MySQL client API calls are successful without executing them",
    ),
];

/// wirebench's own `--mysql-*` options: what libmysqlclient offers and
/// sysbench 1.0.20 does not (timeouts, the server's RSA key).
pub(crate) const MYSQL_WIREBENCH: &[OptDef] = &[
    opt(
        "mysql-server-public-key-path",
        STRING,
        None,
        "the server's RSA public key (PEM) for caching_sha2_password and sha256_password over unencrypted TCP (as \
         libmysqlclient's --server-public-key-path)",
    ),
    opt(
        "mysql-get-server-public-key",
        Bool,
        Some("off"),
        "over unencrypted TCP, ask the server for its RSA public key and trust it (as libmysqlclient's \
         --get-server-public-key); off: such a login fails unless the key is given",
    ),
    opt(
        "mysql-connect-timeout",
        Int,
        Some("30"),
        "seconds a connection may take to connect and log in, 0 for no limit (libmysqlclient's \
         MYSQL_OPT_CONNECT_TIMEOUT; wirebench's option, by default --thread-init-timeout)",
    ),
    opt(
        "mysql-read-timeout",
        Int,
        Some("600"),
        "seconds each wait for the server's answer may last before the connection is lost (client error 2013), \
         0 for no limit (libmysqlclient's MYSQL_OPT_READ_TIMEOUT; wirebench's option; the default is run's: \
         the commands that create and drop tables wait without limit)",
    ),
    opt(
        "mysql-write-timeout",
        Int,
        Some("600"),
        "seconds each wait to send to the server may last before the connection is lost (client error 2006), \
         0 for no limit (libmysqlclient's MYSQL_OPT_WRITE_TIMEOUT; wirebench's option; the default is run's: \
         the commands that create and drop tables wait without limit)",
    ),
];

/// sysbench's PostgreSQL driver options: accepted and ignored, as the
/// driver is always mysql here.
pub(crate) const PGSQL: &[OptDef] = &[
    opt("pgsql-host", STRING, Some("localhost"), "PostgreSQL server host"),
    opt("pgsql-port", Int, Some("5432"), "PostgreSQL server port"),
    opt("pgsql-user", STRING, Some("sbtest"), "PostgreSQL user"),
    opt("pgsql-password", STRING, Some(""), "PostgreSQL password"),
    opt("pgsql-db", STRING, Some("sbtest"), "PostgreSQL database name"),
];

/// Options that appeared in sysbench after 1.0.20 (master / 1.1), which
/// wirebench accepts although 1.0.20 refuses them.
pub(crate) const MASTER: &[OptDef] = &[
    opt(
        "warmup-time",
        Int,
        Some("0"),
        "execute events for this many seconds with statistics disabled before the actual benchmark run",
    ),
    opt("thread-init-timeout", Int, Some("30"), "wait time in seconds for worker threads to initialize"),
    opt("rand-zipfian-exp", Double, Some("0.8"), "shape parameter (exponent, theta) for the Zipfian distribution"),
    opt("mysql-ssl-key", STRING, None, "path name of the client private key file"),
    opt("mysql-ssl-cert", STRING, None, "path name of the client public key certificate file"),
    opt("mysql-ssl-ca", STRING, None, "path name of the CA file"),
    opt("create_table_options", STRING, Some(""), "Extra CREATE TABLE options"),
];

/// wirebench's own engine options.
pub(crate) const ENGINE: &[OptDef] = &[
    opt(
        "cpus",
        List,
        None,
        "CPUs for the event loops, e.g. 0-3 (default: every core; a loop per 256 connections when the server is local)",
    ),
    opt("io", STRING, Some("auto"), "I/O backend {auto,uring,epoll}"),
    opt("poll", STRING, Some("auto"), "how an idle engine thread waits {auto,sleep,spin}"),
    opt("pipeline", Int, Some("1"), "events in flight per connection (1 = as sysbench)"),
    opt(
        "idle-connections",
        Int,
        Some("0"),
        "N more logged-in connections beside --threads, held for the whole run and sending nothing but a COM_PING \
         every --idle-ping-interval; lost ones are logged in again, and the report counts them",
    ),
    opt("idle-ping-interval", Int, Some("10"), "seconds between an idle connection's pings"),
    opt(
        "idle-connect-rate",
        Int,
        Some("1000"),
        "logins per second of the idle connections (each loop at most 32 at once), so the server's back-log \
         and max_connections are not what the run measures",
    ),
    opt(
        "prepare-method",
        STRING,
        Some("auto"),
        "how prepare sends the rows {auto,bulk-execute,load-data,insert}: MariaDB's COM_STMT_BULK_EXECUTE of a prepared INSERT, LOAD DATA LOCAL INFILE from memory, or sysbench's INSERTs; auto takes the first where the server allows it",
    ),
    opt(
        "per-statement",
        Bool,
        Some("off"),
        "print each statement kind's count and latency percentiles in the final report",
    ),
    opt("rate-arrival", STRING, Some("poisson"), "how --rate spaces the events {poisson (as sysbench),fixed}"),
    opt(
        "rate-stages",
        List,
        None,
        "a target rate that changes over the run, instead of --rate and --time: RATE:SECONDS stages, each moving \
         the target linearly from the previous stage's end to its RATE over its SECONDS (the first holds its RATE), \
         e.g. 0:0,5000:30,5000:60; the run lasts their total, and an event not started within 1 s of its arrival is \
         dropped and counted",
    ),
    opt(
        "hdr-log",
        File,
        None,
        "write the latencies as an HdrHistogram interval log, one interval per --report-interval (or second), \
         tagged per statement kind",
    ),
    opt("lua", Bool, Some("off"), "run a sysbench script given by path through the Lua engine, even one built in"),
    opt(
        "lua-thread-per-state",
        Bool,
        Some("off"),
        "run each Lua state on an event loop of its own, as sysbench gives each a thread; default: one per state \
         against a server on this host, else the states share one loop per core",
    ),
    opt(
        "lua-result-limit",
        Size,
        Some("256M"),
        "the most bytes one answer to a Lua script's query may hold (its rows are kept until fetched); a larger \
         answer fails with an error that names this option",
    ),
    opt(
        "shard",
        STRING,
        None,
        "I/N: run shard I (from 0) of a run split over N instances: --threads, --events, --rate and prepare's tables \
         are the whole run's, split between the shards",
    ),
    opt(
        "shards",
        Int,
        None,
        "N: the run is split over N instances, this one's index taken from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)",
    ),
    opt(
        "start-at",
        STRING,
        None,
        "connect and prepare, then start the events at this instant (Unix seconds or RFC 3339); --time ends at start-at + time",
    ),
];

/// wirebench's result outputs: machine-readable lines, sweeps, charts.
pub(crate) const RESULTS: &[OptDef] = &[
    opt(
        "format",
        STRING,
        Some("text"),
        "{text,json,csv}: json writes JSON lines (one per --report-interval, one final) and csv a row per \
         --report-interval on standard output, the report then going to standard error",
    ),
    opt("label", STRING, None, "what `wirebench compare` calls this result (default: the server's version)"),
    opt(
        "chart",
        STRING,
        None,
        "draw an SVG chart: qps and p95 latency against connections for a --threads list, qps and latency over time \
         (per --report-interval) for one run",
    ),
    opt("sweep-pause", Int, Some("0"), "seconds to wait between the steps of a --threads list"),
    opt(
        "server-stats",
        Bool,
        None,
        "sample the server's SHOW GLOBAL STATUS (and, on this host, its process's CPU time, memory and context \
         switches) at the start, every --report-interval and the end, on a connection of its own (on by default \
         with --format=json); =interim also adds a line to each interim report",
    ),
    opt("server-pid", Int, None, "the server's process on this host, for --server-stats through a port forward"),
];

/// Watching a command (docs/watching.md): `run`, `search` and `fuzz`.
pub(crate) const WATCH: &[OptDef] = &[
    opt(
        "metrics-listen",
        STRING,
        None,
        "HOST:PORT (:PORT for every interface) to serve /metrics while the command runs: OpenMetrics, or Prometheus \
         text 0.0.4, the figures of the last complete --report-interval (or second)",
    ),
    opt(
        "metrics-push",
        STRING,
        None,
        "URL of a Prometheus remote-write receiver (e.g. http://prometheus:9090/api/v1/write, credentials as \
         http://USER:PASSWORD@host/...): the same series every --report-interval (or second) and at the end",
    ),
    opt(
        "metrics-label",
        STRING,
        None,
        "KEY=VALUE: a label every series carries (give it once per label), e.g. --metrics-label=env=staging",
    ),
    opt(
        "web",
        STRING,
        None,
        "HOST:PORT (:PORT for every interface) to serve a live page of the run's charts, updated each \
         --report-interval (or second); it needs no network",
    ),
    opt(
        "report-html",
        File,
        None,
        "write the run's (or search's) page, self-contained, to this file at the end: totals, charts, steps; it \
         opens from disk with no network and prints",
    ),
];

/// `wirebench report FILE... --html=FILE`.
pub(crate) const REPORT: &[OptDef] = &[
    opt("html", File, None, "write the results' page, self-contained (charts inline), to this file"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// The `search` command's options: the latency bounds and each step's shape.
pub(crate) const SEARCH: &[OptDef] = &[
    opt(
        "slo",
        List,
        None,
        "search: the latency bounds the rate must hold, PERCENTILE:MS pairs such as 99:5,99.9:20 (latency from \
         each event's intended start)",
    ),
    opt("search-warmup", Int, Some("2"), "search: seconds each step runs before it is measured"),
    opt("search-time", Int, Some("10"), "search: seconds each step is measured"),
    opt("search-pause", Int, Some("1"), "search: seconds to wait between steps, so each starts from a drained server"),
    opt(
        "search-precision",
        Double,
        Some("2"),
        "search: stop when the highest passing and lowest failing rates are within this many percent",
    ),
    opt("search-steps", Int, Some("20"), "search: at most this many steps, the probe and the confirmation included"),
    opt("search-confirm-time", Int, Some("30"), "search: seconds the confirming step at the rate found is measured"),
    opt(
        "search-max-errors",
        Double,
        Some("0"),
        "search: the percentage of events that may fail (--mysql-ignore-errors) at a passing rate",
    ),
    opt(
        "search-client-share",
        Double,
        Some("10"),
        "search: a step is client-limited when the client's own p99 delay of its events exceeds this percentage          of the tightest --slo bound (or its event loops were saturated)",
    ),
];

/// `wirebench compare FILE...`.
pub(crate) const COMPARE: &[OptDef] = &[
    opt("format", STRING, Some("text"), "{text,markdown,csv}: how the tables are written"),
    opt(
        "metric",
        STRING,
        Some("qps"),
        "{qps,tps,p95,p99,server_cpu_per_query,server_cpu_per_transaction,server_cpu,buffer_pool_hit,\
         rows_read_per_query,disk_reads_per_query}: the figure compared (the server's from --server-stats)",
    ),
    opt("chart", STRING, None, "draw an SVG chart of qps and p95 latency against connections, a line per file"),
    opt("report-html", File, None, "write the comparison as a page, self-contained (charts inline), to this file"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// `wirebench capture import --from=... IN --out=FILE`.
pub(crate) const CAPTURE_IMPORT: &[OptDef] = &[
    opt(
        "from",
        STRING,
        None,
        "{pcap,general-log,slow-log}: what IN is (a tcpdump/tshark capture, or a server's general or slow query log)",
    ),
    opt("out", STRING, None, "the capture file to write (never over an existing file)"),
    opt("port", Kind::Int, Some("3306"), "the server's TCP port in a pcap"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// `wirebench capture info FILE`.
pub(crate) const CAPTURE_INFO: &[OptDef] = &[
    opt("format", STRING, Some("text"), "{text,json}: how the summary is written"),
    opt("top", Kind::Int, Some("10"), "statements listed by count and by time"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// `wirebench merge FILE...`.
pub(crate) const MERGE: &[OptDef] = &[
    opt(
        "format",
        STRING,
        Some("text"),
        "{text,json}: sysbench's report of the whole run, or its JSON result lines (the report then on standard error)",
    ),
    opt("percentile", STRING, Some("95"), "percentiles to list, as in a run (50,95,99,99.9; 0 to disable)"),
    opt("per-statement", Bool, Some("off"), "counts and percentiles per statement kind, as in a run"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// `wirebench replay FILE`'s own options; the connection, engine, result
/// and search options are a run's.
pub(crate) const REPLAY: &[OptDef] = &[
    opt(
        "speed",
        STRING,
        Some("1"),
        "how fast the captured times pass: 1 as captured, 2 twice as fast, 0.5 half as fast, max: each command as \
         soon as the connection's answer before it is in",
    ),
    opt(
        "user-map",
        List,
        None,
        "CAPTURED:USER:PASSWORD,...: the captured user's connections log in as USER (the others as --mysql-user)",
    ),
    opt("read-only", Bool, Some("off"), "send no statement that writes (counted as not replayed)"),
    opt("multiply", Int, Some("1"), "run this many copies of every captured connection"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// The mysql client's option files, which wirebench reads for the login
/// (`credentials.rs`); sysbench reads none.
pub(crate) const OPTION_FILES: &[OptDef] = &[
    opt(
        "defaults-file",
        File,
        None,
        "read the login (user, password, host, port, socket, database of groups [client] and [wirebench]) from \
         this option file only, instead of ~/.my.cnf",
    ),
    opt("defaults-extra-file", File, None, "read this option file too, after ~/.my.cnf"),
    opt("no-defaults", Bool, Some("off"), "read no option file (~/.my.cnf), as sysbench"),
];

/// `oltp_common.lua`'s options, shared by every OLTP script and the two
/// select_random scripts.
pub(crate) const OLTP: &[OptDef] = &[
    opt("auto_inc", Bool, Some("on"), "Use AUTO_INCREMENT column as Primary Key (for MySQL), or its alternatives in other DBMS. When disabled, use client-generated IDs"),
    opt("create_secondary", Bool, Some("on"), "Create a secondary index in addition to the PRIMARY KEY"),
    opt("delete_inserts", Double, Some("1"), "Number of DELETE/INSERT combinations per transaction"),
    opt("distinct_ranges", Double, Some("1"), "Number of SELECT DISTINCT queries per transaction"),
    opt("index_updates", Double, Some("1"), "Number of UPDATE index queries per transaction"),
    opt("mysql_storage_engine", STRING, Some("innodb"), "Storage engine, if MySQL is used"),
    opt("non_index_updates", Double, Some("1"), "Number of UPDATE non-index queries per transaction"),
    opt("order_ranges", Double, Some("1"), "Number of SELECT ORDER BY queries per transaction"),
    opt("pgsql_variant", STRING, None, "Use this PostgreSQL variant when running with the PostgreSQL driver (ignored: wirebench speaks MySQL only)"),
    opt("point_selects", Double, Some("10"), "Number of point SELECT queries per transaction"),
    opt("range_selects", Bool, Some("on"), "Enable/disable all range SELECT queries"),
    opt("range_size", Double, Some("100"), "Range size for range SELECT queries"),
    opt("secondary", Bool, Some("off"), "Use a secondary index in place of the PRIMARY KEY"),
    opt("simple_ranges", Double, Some("1"), "Number of simple range SELECT queries per transaction"),
    opt("skip_trx", Bool, Some("off"), "Don't start explicit transactions and execute all queries in the AUTOCOMMIT mode"),
    opt("sum_ranges", Double, Some("1"), "Number of SELECT SUM() queries per transaction"),
    opt("table_size", Double, Some("10000"), "Number of rows per table"),
    opt("tables", Double, Some("1"), "Number of tables"),
];

pub(crate) const RANDOM_POINTS: &[OptDef] =
    &[opt("random_points", Double, Some("10"), "Number of random points in the IN() clause in generated SELECTs")];

pub(crate) const RANDOM_RANGES: &[OptDef] = &[
    opt("delta", Double, Some("5"), "Size of BETWEEN ranges"),
    opt("number_of_ranges", Double, Some("10"), "Number of random BETWEEN ranges per SELECT"),
];

/// sysbench 0.4 (`sysbench.c`, `tests/oltp/sb_oltp.c`, the MySQL driver) and
/// 0.5 (`tests/db/*.lua`) options that 1.0.20 no longer has. Their meaning
/// is in `legacy.rs`.
pub(crate) const LEGACY: &[OptDef] = &[
    opt("init-rng", Bool, Some("off"), "0.4: seed the random number generator from the time"),
    opt("seed-rng", Int, Some("0"), "0.4: random number generator seed"),
    opt("rand-init", Bool, Some("off"), "0.5: seed the random number generator from the time"),
    opt("tx-jitter", Int, Some("0"), "0.4: target transaction variation, in microseconds"),
    opt("oltp-test-mode", STRING, Some("complex"), "0.4: {simple,complex,nontrx,sp}"),
    opt("oltp-nontrx-mode", STRING, Some("select"), "0.4: {select,update_key,update_nokey,insert,delete}"),
    opt("oltp-reconnect-mode", STRING, Some("session"), "0.4: {session,transaction,query,random}"),
    opt("oltp-reconnect", Bool, Some("off"), "0.5: reconnect after every transaction"),
    opt("oltp-sp-name", STRING, Some(""), "0.4: stored procedure of the sp mode"),
    opt("oltp-read-only", Bool, Some("off"), "0.4/0.5: only read queries"),
    opt("oltp-write-only", Bool, Some("off"), "0.4/0.5: only write queries"),
    opt("oltp-skip-trx", Bool, Some("off"), "0.4/0.5: --skip-trx"),
    opt("oltp-range-selects", Bool, Some("on"), "0.4/0.5: --range-selects"),
    opt("oltp-auto-inc", Bool, Some("on"), "0.4/0.5: --auto-inc"),
    opt("oltp-secondary", Bool, Some("off"), "0.4/0.5: --secondary"),
    opt("oltp-create-secondary", Bool, Some("on"), "0.5: --create-secondary"),
    opt("oltp-range-size", Int, Some("100"), "0.4/0.5: --range-size"),
    opt("oltp-point-selects", Int, Some("10"), "0.4/0.5: --point-selects"),
    opt("oltp-simple-ranges", Int, Some("1"), "0.4/0.5: --simple-ranges"),
    opt("oltp-sum-ranges", Int, Some("1"), "0.4/0.5: --sum-ranges"),
    opt("oltp-order-ranges", Int, Some("1"), "0.4/0.5: --order-ranges"),
    opt("oltp-distinct-ranges", Int, Some("1"), "0.4/0.5: --distinct-ranges"),
    opt("oltp-index-updates", Int, Some("1"), "0.4/0.5: --index-updates"),
    opt("oltp-non-index-updates", Int, Some("1"), "0.4/0.5: --non-index-updates"),
    opt("oltp-delete-inserts", Int, Some("1"), "0.4/0.5: --delete-inserts"),
    opt("oltp-table-size", Int, Some("10000"), "0.4/0.5: --table-size"),
    opt("oltp-tables-count", Int, Some("1"), "0.5: --tables"),
    opt("oltp-table-name", STRING, Some("sbtest"), "0.4: the single table's name"),
    opt("oltp-connect-delay", Int, Some("10000"), "0.4: sleep after connecting, in microseconds"),
    opt("oltp-user-delay-min", Int, Some("0"), "0.4: minimum sleep after each request, in microseconds"),
    opt("oltp-user-delay-max", Int, Some("0"), "0.4: maximum sleep after each request, in microseconds"),
    opt("oltp-dist-type", STRING, Some("special"), "0.4: --rand-type"),
    opt("oltp-dist-iter", Int, Some("12"), "0.4: --rand-spec-iter"),
    opt("oltp-dist-pct", Int, Some("1"), "0.4: --rand-spec-pct"),
    opt("oltp-dist-res", Int, Some("75"), "0.4: --rand-spec-res"),
    opt("oltp-point-select-mysql-handler", Bool, Some("off"), "0.4: point selects through HANDLER"),
    opt("oltp-point-select-all-cols", Bool, Some("off"), "0.4: point selects of all columns"),
    opt("random-ranges-delta", Int, Some("5"), "0.5: --delta"),
    opt("mysql-table-engine", STRING, Some("innodb"), "0.4/0.5: --mysql-storage-engine"),
    opt("mysql-engine-trx", STRING, Some("auto"), "0.4/0.5: whether the engine is transactional {yes,no,auto}"),
    opt("myisam-max-rows", Int, Some("1000000"), "0.4/0.5: MAX_ROWS of MyISAM tables"),
    opt("mysql-create-options", STRING, Some(""), "0.4: extra CREATE TABLE options"),
    opt("mysql-table-options", STRING, Some(""), "0.5: extra CREATE TABLE options"),
];

/// `wirebench record`'s own options; it also takes [`RECORD_UPSTREAM`].
pub(crate) const RECORD: &[OptDef] = &[
    opt(
        "listen",
        STRING,
        None,
        "where the applications connect: a TCP address (127.0.0.1:3307, 0.0.0.0:3307, a bare port on 127.0.0.1) or \
         a unix socket's path (with a /); may be given more than once",
    ),
    opt("upstream", STRING, None, "the server the connections are forwarded to, HOST:PORT"),
    opt("upstream-socket", STRING, None, "the server's unix socket, instead of --upstream"),
    opt("out", STRING, None, "the capture file to write (never over an existing file)"),
    opt("cpus", List, None, "CPUs to run the proxy's event loops on, one loop each, e.g. 0-3 (default: all)"),
    opt("time", Int, Some("0"), "seconds to record; 0 records until Ctrl-C or SIGTERM"),
    opt("max-size", Size, None, "stop once the capture file reaches SIZE, e.g. 2G"),
    opt(
        "ssl-cert",
        STRING,
        None,
        "the certificate (PEM, its chain after it) served to applications that use TLS; without it and \
         --ssl-key, an application that asks for TLS is refused",
    ),
    opt("ssl-key", STRING, None, "the private key of --ssl-cert (PEM)"),
    // record's own default and range (a proxy must not wait for ever, nor
    // for the 30 s a benchmark's logins may take): run's text would mislead.
    opt(
        "mysql-connect-timeout",
        Int,
        Some("10"),
        "seconds, 1 to 3600, a connection to the server may take to open; an application waiting longer gets ERR 2003",
    ),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// The options of the connection upstream that `wirebench record` takes
/// as `run` does: TLS for an application that uses TLS (TLS without a
/// certificate check when `--mysql-ssl` is not given).
pub(crate) const RECORD_UPSTREAM: &[&str] =
    &["mysql-ssl", "mysql-ssl-cipher", "mysql-ssl-key", "mysql-ssl-cert", "mysql-ssl-ca"];

/// `--listen`, `--socket`, `--cpus` of `wirebench null-server`.
pub(crate) const NULL_SERVER: &[OptDef] = &[
    opt("listen", STRING, None, "TCP address to listen on, e.g. 127.0.0.1:3307"),
    opt("socket", STRING, None, "unix socket path to listen on"),
    opt("cpus", List, None, "CPUs to run the server threads on, e.g. 0-3 (default: all)"),
    opt("delay-us", Int, Some("0"), "answer every command N microseconds after it arrives (a slow server)"),
    opt(
        "wait-timeout",
        Int,
        Some("0"),
        "close a connection silent for this many seconds, as MariaDB's wait_timeout (0: never)",
    ),
    opt(
        "serial",
        Bool,
        Some("off"),
        "serve one command at a time over all connections, each taking --delay-us: a server of known capacity \
         (1,000,000 / delay-us commands per second)",
    ),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// `wirebench fuzz`'s own options; it also takes [`FUZZ_CONNECTION`].
pub(crate) const FUZZ: &[OptDef] = &[
    opt("threads", Int, Some("8"), "fuzzed connections at once"),
    opt("time", Int, Some("60"), "seconds to fuzz; 0 for no limit (Ctrl-C stops)"),
    opt("fuzz-overtime", Int, Some("120"), "seconds past --time that confirming, minimising and saving a failure found before it may take; then whatever still waits for the server is abandoned and the run ends"),
    opt("rand-seed", Int, Some("0"), "seed of the sessions and mutations; 0 picks one from the clock and prints it"),
    opt("report-interval", Int, Some("0"), "print execs/s, sessions, distinct states and failures every N seconds; 0 for none"),
    opt("fuzz-dir", STRING, Some("wirebench-fuzz"), "directory for the reproducers and states.txt"),
    opt("restart-cmd", STRING, None, "shell command that brings the server back after a failure (to confirm and minimise it, and with --keep-going to go on)"),
    opt("keep-going", Bool, Some("off"), "go on after a failure until --time is up, restarting the server"),
    opt(
        "seed-capture",
        STRING,
        None,
        "a capture file (`wirebench record`, `capture import`) whose sessions the corpus starts from: the fuzzer mutates the traffic the server really gets",
    ),
    opt("pre-auth", Bool, Some("off"), "fuzz only what comes before the login's answer (the greeting's handling, SSLRequest, the handshake response's fields, auth switches), even when the login works; chosen by itself when the server refuses the login"),
    opt("fuzz-restart-wait", Int, Some("60"), "seconds a restarted (or self-restarting) server may take to answer again; each re-run of confirming and minimising waits that long for it"),
];

/// `wirebench fuzz-replay`'s own.
pub(crate) const FUZZ_REPLAY: &[OptDef] = &[
    opt("emit", STRING, None, "write a stand-alone program that replays the reproducer to standard output instead of replaying it: python (Python 3, its standard library only)"),
];

/// What watches the server, for `wirebench fuzz` and `fuzz-replay`.
pub(crate) const FUZZ_WATCH: &[OptDef] = &[
    opt("fuzz-deadline", Double, Some("5"), "seconds the control connection waits for COM_PING and SELECT 1 before the server counts as hung"),
    opt("server-pid", STRING, None, "the server's PID, or its pid file: the process exiting, or its RSS growing by --server-rss-growth, is a failure"),
    opt("server-rss-growth", Size, Some("1G"), "RSS growth of --server-pid that counts as a failure"),
    opt("server-log", STRING, None, "the server's error log: new lines with 'got signal', 'Assertion' or 'AddressSanitizer' are a failure"),
    opt("internal-error-pattern", STRING, None, "text that, in an error answer's message, betrays a fault inside the server (besides the built-in ones: exception names, 'is not subscriptable', panics, assertions, ER_INTERNAL_ERROR 1815); may be given more than once"),
    opt("fuzz-allow-remote", Bool, Some("off"), "allow a server that is not on this host (fuzzing crashes servers and destroys data)"),
    opt("help", Bool, Some("off"), "print help and exit"),
];

/// The connection options `wirebench fuzz` and `fuzz-replay` take, defined in [`MYSQL`].
pub(crate) const FUZZ_CONNECTION: &[&str] =
    &["mysql-host", "mysql-port", "mysql-socket", "mysql-user", "mysql-password", "mysql-db", "mysql-compression"];

/// The comparison key of an option name: sysbench treats `-` and `_` alike
/// and is case-sensitive otherwise.
pub(crate) fn key(name: &str) -> String {
    name.replace('-', "_")
}

/// Every option group wirebench knows, for lookups and suggestions.
pub(crate) const ALL_GROUPS: &[&[OptDef]] = &[
    GENERAL,
    RAND,
    LOG,
    DB,
    MYSQL,
    MYSQL_WIREBENCH,
    PGSQL,
    MASTER,
    ENGINE,
    RESULTS,
    WATCH,
    SEARCH,
    OPTION_FILES,
    OLTP,
    RANDOM_POINTS,
    RANDOM_RANGES,
    LEGACY,
];

/// Options whose value is a password (or may hold one, as a URL's
/// `user:password@`): never shown in a message or a note, and hidden from
/// the process's argument list.
const SECRETS: &[&str] = &["mysql_password", "pgsql_password", "metrics_push", "user_map"];

/// Whether the option `name_key` (a [`key`]) holds a password.
pub(crate) fn is_secret(name_key: &str) -> bool {
    SECRETS.contains(&name_key)
}

pub(crate) fn find_in<'a>(groups: &[&'a [OptDef]], name_key: &str) -> Option<&'a OptDef> {
    groups.iter().flat_map(|g| g.iter()).find(|d| key(d.name) == name_key)
}

pub(crate) fn find(name_key: &str) -> Option<&'static OptDef> {
    if key(TEST_OPTION.name) == name_key {
        return Some(&TEST_OPTION);
    }
    find_in(ALL_GROUPS, name_key)
}

pub(crate) fn is_in(group: &[OptDef], name_key: &str) -> bool {
    group.iter().any(|d| key(d.name) == name_key)
}

/// The known name closest to `name` by edit distance, if it is close enough
/// to be a typo of it. A swap of two neighbours is one edit (`--tabels` is
/// `--tables`, not `--label`), and of names equally close the one of the
/// same length comes first: a typo changes a letter more often than it
/// drops one.
pub(crate) fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = key(name).to_ascii_lowercase();
    let length = wanted.chars().count();
    let (best, distance) = candidates
        .into_iter()
        .map(|c| {
            let known = key(c).to_ascii_lowercase();
            (c, edit_distance(&wanted, &known), known.chars().count().abs_diff(length))
        })
        .min_by_key(|&(_, distance, length_apart)| (distance, length_apart))
        .map(|(c, distance, _)| (c, distance))?;
    let limit = (length / 3).max(2);
    (distance <= limit).then_some(best)
}

/// Optimal string alignment distance over chars: Levenshtein's insertions,
/// deletions and substitutions, and a transposition of two neighbours, each
/// one edit (Damerau's, without editing a substring twice).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // Three rows of the table: two back, one back, this one.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current.fill(0);
        if let Some(first) = current.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let at = |row: &[usize], k: usize| row.get(k).copied().unwrap_or(usize::MAX);
            let substitute = at(&previous, j).saturating_add(usize::from(ca != cb));
            let delete = at(&previous, j + 1).saturating_add(1);
            let insert = at(&current, j).saturating_add(1);
            let mut best = substitute.min(delete).min(insert);
            let swapped = i > 0 && j > 0 && a.get(i - 1) == Some(cb) && b.get(j - 1) == Some(ca) && ca != cb;
            if swapped {
                best = best.min(at(&before, j - 1).saturating_add(1));
            }
            if let Some(cell) = current.get_mut(j + 1) {
                *cell = best;
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("threads", "threads"), 0);
        assert_eq!(edit_distance("thread", "threads"), 1);
        assert_eq!(edit_distance("thraeds", "threads"), 1, "a swap of neighbours is one edit");
        assert_eq!(edit_distance("tabels", "tables"), 1);
        assert_eq!(edit_distance("tabels", "label"), 2);
        assert_eq!(edit_distance("ca", "abc"), 3, "no substring edited twice (OSA, not full Damerau)");
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_ignores_dash_underscore_and_case_but_not_distance() {
        let names = ["threads", "table_size", "tables", "time"];
        assert_eq!(closest("thread", names), Some("threads"));
        assert_eq!(closest("TABLE-SIZE", names), Some("table_size"));
        assert_eq!(closest("table_sise", names), Some("table_size"));
        assert_eq!(closest("completely-different", names), None);
    }

    /// `--tabels` among every option of a test: `--tables` (one swap), not
    /// `--label` (two edits, and shorter); equally close, the same length
    /// wins whatever the order.
    #[test]
    fn a_transposition_beats_a_shorter_name() {
        let all: Vec<&str> = ALL_GROUPS.iter().flat_map(|g| g.iter().map(|d| d.name)).collect();
        assert_eq!(closest("tabels", all.iter().copied()), Some("tables"));
        assert_eq!(closest("thraeds", all.iter().copied()), Some("threads"));
        assert_eq!(closest("abcd", ["abc", "abce"]), Some("abce"));
        assert_eq!(closest("abcd", ["abce", "abc"]), Some("abce"));
    }

    #[test]
    fn option_names_are_unique_across_groups() {
        let mut seen = std::collections::HashSet::new();
        for group in ALL_GROUPS {
            for def in *group {
                assert!(seen.insert(key(def.name)), "{} defined twice", def.name);
            }
        }
        assert!(!seen.contains(&key(TEST_OPTION.name)));
    }
}

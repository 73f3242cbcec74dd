-- sysbench 1.0.20's FFI surface, used the way scripts use it: the types,
-- enums and structs its internal modules declare, declared again as
-- scripts declare them, and its C functions called through ffi.C. Run by
-- tests/sysbench/lua_ffi.rs under sysbench itself and under wirebench, with
-- --threads=1 and a --rand-seed: every line printed must be the same, and
-- so must the counts the report shows. (The main state's draws are not
-- seeded in sysbench, nor is sb_rand_unique's sequence: init() draws
-- nothing, and unique values are only checked for their type.)

-- As scripts in the wild declare what sysbench's binary exports.
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
uint64_t sb_counter_val(int, sb_counter_type);
typedef uint32_t useconds_t;
int usleep(useconds_t useconds);
typedef struct timeval { long tv_sec; long tv_usec; } timeval;
int gettimeofday(struct timeval *tv, void *tz);
]]

sysbench.cmdline.options = {
   rows = {"rows to draw", 3},
   label = {"a label", "x"},
   on = {"a flag", true},
}

local C = ffi.C

local function line(...)
   local parts = {}
   for i = 1, select('#', ...) do
      parts[i] = tostring((select(i, ...)))
   end
   print(table.concat(parts, " "))
end

-- Each declaration again: a function or a typedef is accepted, an enum
-- constant is refused ("attempt to redefine").
local redeclarations = {
   "void sb_counter_inc(int thread_id, sb_counter_type type);",
   "uint64_t sb_rand_uniform_uint64(void);",
   "uint32_t sb_rand_default(uint32_t, uint32_t);",
   "uint32_t sb_rand_uniform(uint32_t, uint32_t);",
   "uint32_t sb_rand_gaussian(uint32_t, uint32_t);",
   "uint32_t sb_rand_special(uint32_t, uint32_t);",
   "uint32_t sb_rand_pareto(uint32_t, uint32_t);",
   "uint32_t sb_rand_unique(void);",
   "void sb_rand_str(const char *, char *);",
   "double sb_rand_uniform_double(void);",
   "void sb_event_start(int thread_id);",
   "void sb_event_stop(int thread_id);",
   "bool sb_more_events(int thread_id);",
   "typedef bool sb_opt_validate_t(const char *, const char *);",
   "int sb_lua_set_test_args(sb_arg_t *args, size_t len);",
   "void sb_print_test_options(void);",
   "typedef struct { uint32_t len; const char *ptr; } sql_value;",
   "sql_driver *db_create(const char *);",
   "int db_destroy(sql_driver *drv);",
   "sql_connection *db_connection_create(sql_driver * drv);",
   "int db_connection_close(sql_connection *con);",
   "int db_connection_reconnect(sql_connection *con);",
   "void db_connection_free(sql_connection *con);",
   "int db_bulk_insert_init(sql_connection *, const char *, size_t);",
   "int db_bulk_insert_next(sql_connection *, const char *, size_t);",
   "int db_bulk_insert_done(sql_connection *);",
   "sql_result *db_query(sql_connection *con, const char *query, size_t len);",
   "sql_row *db_fetch_row(sql_result *rs);",
   "sql_statement *db_prepare(sql_connection *con, const char *query, size_t len);",
   "int db_bind_param(sql_statement *stmt, sql_bind *params, size_t len);",
   "int db_bind_result(sql_statement *stmt, sql_bind *results, size_t len);",
   "sql_result *db_execute(sql_statement *stmt);",
   "int db_close(sql_statement *stmt);",
   "int db_free_results(sql_result *);",
   "typedef struct histogram sb_histogram_t;",
   "sb_histogram_t *sb_histogram_new(size_t size, double range_min, double range_max);",
   "void sb_histogram_delete(sb_histogram_t *h);",
   "void sb_histogram_update(sb_histogram_t *h, double value);",
   "void sb_histogram_print(sb_histogram_t *h);",
   "typedef enum { SB_CNT_OTHER, SB_CNT_READ } sb_counter_type;",
   "typedef enum { DB_ERROR_NONE } sql_error_t;",
   "typedef enum { SQL_TYPE_NONE } sql_bind_type_t;",
   "typedef enum { SB_ARG_TYPE_NULL } sb_arg_type_t;",
   "enum { SB_CNT_MAX };",
   "typedef uint32_t useconds_t;",
   "int usleep(useconds_t useconds);",
}
for _, text in ipairs(redeclarations) do
   local ok, err = pcall(ffi.cdef, text)
   line("cdef", ok and "ok" or ("refused: " .. tostring(err)), text)
end

-- Every enum constant, struct size and field offset.
local constants = {
   "SB_CNT_OTHER", "SB_CNT_READ", "SB_CNT_WRITE", "SB_CNT_TRX", "SB_CNT_ERROR",
   "SB_CNT_RECONNECT", "SB_CNT_MAX", "DB_ERROR_NONE", "DB_ERROR_IGNORABLE",
   "DB_ERROR_FATAL", "SQL_TYPE_NONE", "SQL_TYPE_TINYINT", "SQL_TYPE_SMALLINT",
   "SQL_TYPE_INT", "SQL_TYPE_BIGINT", "SQL_TYPE_FLOAT", "SQL_TYPE_DOUBLE",
   "SQL_TYPE_TIME", "SQL_TYPE_DATE", "SQL_TYPE_DATETIME", "SQL_TYPE_TIMESTAMP",
   "SQL_TYPE_CHAR", "SQL_TYPE_VARCHAR", "SB_ARG_TYPE_NULL", "SB_ARG_TYPE_BOOL",
   "SB_ARG_TYPE_INT", "SB_ARG_TYPE_SIZE", "SB_ARG_TYPE_DOUBLE", "SB_ARG_TYPE_STRING",
   "SB_ARG_TYPE_LIST", "SB_ARG_TYPE_FILE", "SB_ARG_TYPE_MAX",
}
for _, name in ipairs(constants) do
   line("enum", name, C[name])
end
print("enum SB_CNT_EVENT", pcall(function() return C.SB_CNT_EVENT end))

local structs = {
   { "sql_value", "len", "ptr" },
   { "sql_row", "ptr", "values" },
   { "sql_result", "counter", "nrows", "nfields", "statement", "ptr", "row" },
   { "sql_bind", "type", "buffer", "data_len", "max_len", "is_null" },
   { "sb_arg_t", "name", "desc", "value", "type", "validate" },
}
for _, s in ipairs(structs) do
   local offsets = {}
   for i = 2, #s do
      offsets[#offsets + 1] = s[i] .. "@" .. ffi.offsetof(s[1], s[i])
   end
   line("struct", s[1], ffi.sizeof(s[1]), ffi.alignof(s[1]), table.concat(offsets, " "))
end
local vlas = {
   { "sql_driver", "sname", "lname", "opaque" },
   { "sql_connection", "error", "sql_errno", "sql_state", "sql_errmsg", "driver", "opaque" },
   { "sql_statement", "connection", "opaque" },
}
for _, s in ipairs(vlas) do
   local offsets = {}
   for i = 2, #s do
      offsets[#offsets + 1] = s[i] .. "@" .. ffi.offsetof(s[1], s[i])
   end
   line("struct", s[1], ffi.sizeof(s[1], 10), table.concat(offsets, " "))
end
line("typeof", ffi.sizeof("sb_counter_type"), ffi.sizeof("sql_error_t"), ffi.sizeof("sb_opt_validate_t *"),
     tostring(ffi.istype("sb_counter_type", ffi.new("sb_counter_type", 4))))
line("metatype sb_histogram_t", pcall(ffi.metatype, "sb_histogram_t", {}))

-- A row and a bind, filled as sysbench's SQL module fills them.
local value = ffi.new("sql_value[1]")
value[0].len, value[0].ptr = 3, "abc"
local row = ffi.new("sql_row", nil, value)
line("row", ffi.string(row.values[0].ptr, row.values[0].len))
local bind = ffi.new("sql_bind", C.SQL_TYPE_VARCHAR, nil, nil, 7)
line("bind", tonumber(bind.type), tonumber(bind.max_len))
local result = ffi.new("sql_result")
result.counter = C.SB_CNT_WRITE
line("result counter", tonumber(result.counter), result.counter == C.SB_CNT_WRITE)

-- The options, as sysbench lists and registers them.
local function options()
   sysbench.cmdline.print_test_options()
   line("read_cmdline_options", sysbench.cmdline.read_cmdline_options())
   C.sb_print_test_options()
   local args = ffi.new("sb_arg_t[2]")
   args[0].name, args[0].desc, args[0].value, args[0].type = "zz", "set by the script", "5", C.SB_ARG_TYPE_INT
   args[1].name, args[1].desc, args[1].type = "aa", "no default", C.SB_ARG_TYPE_LIST
   line("sb_lua_set_test_args", C.sb_lua_set_test_args(args, 2))
   C.sb_print_test_options()
   line("opt", sysbench.opt.rows, sysbench.opt.label, sysbench.opt.on, sysbench.opt.zz)
end

-- One of each draw, through ffi.C and through sysbench.rand, in turn:
-- both come from the thread's generator.
local function draws(where)
   line(where, "default", C.sb_rand_default(1, 1000000), sysbench.rand.default(1, 1000000))
   line(where, "uniform", C.sb_rand_uniform(1, 1000000), sysbench.rand.uniform(1, 1000000))
   line(where, "gaussian", C.sb_rand_gaussian(1, 1000000), sysbench.rand.gaussian(1, 1000000))
   line(where, "special", C.sb_rand_special(1, 1000000), sysbench.rand.special(1, 1000000))
   line(where, "pareto", C.sb_rand_pareto(1, 1000000), sysbench.rand.pareto(1, 1000000))
   line(where, "uint64", C.sb_rand_uniform_uint64(), sysbench.rand.uniform_uint64())
   line(where, "double", string.format("%.17g %.17g", C.sb_rand_uniform_double(), sysbench.rand.uniform_double()))
   line(where, "string", sysbench.rand.string("id-###-@@@@"))
   -- Into a caller's buffer, one byte per template byte and no NUL.
   local buf = ffi.new("char[16]")
   ffi.fill(buf, 15, string.byte("x"))
   C.sb_rand_str("##@@-#", buf)
   line(where, "sb_rand_str", ffi.string(buf, 9))
   line(where, "conversions", C.sb_rand_uniform(-1, -1), sysbench.rand.uniform(2.9, 2.9), C.sb_rand_default(7, 7))
   local u1, u2 = C.sb_rand_unique(), sysbench.rand.unique()
   line(where, "unique", type(u1), type(u2), u1 ~= u2)
end

local counters = { "SB_CNT_OTHER", "SB_CNT_READ", "SB_CNT_WRITE", "SB_CNT_TRX", "SB_CNT_ERROR", "SB_CNT_RECONNECT" }

local function counter_values(where)
   local values = {}
   for i, name in ipairs(counters) do
      values[i] = tostring(C.sb_counter_val(sysbench.tid, C[name]))
   end
   line(where, "counters", table.concat(values, " "))
end

-- Counted as thread 0's, as sysbench counts it.
function init()
   C.sb_counter_inc(0, C.SB_CNT_RECONNECT)
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   options()
   draws("thread_init")
   C.sb_counter_inc(sysbench.tid, C.SB_CNT_WRITE)
   latencies = sysbench.histogram.new(10, 1, 1000)
   raw_histogram = ffi.gc(C.sb_histogram_new(5, 0.5, 50), C.sb_histogram_delete)
   line("histogram", tostring(ffi.typeof(raw_histogram)))
end

local events = 0

function event()
   events = events + 1
   con:query("SELECT 1")
   draws("event" .. events)
   for _, name in ipairs(counters) do
      C.sb_counter_inc(sysbench.tid, C[name])
   end
   C.sb_counter_inc(sysbench.tid, C.SB_CNT_TRX)
   ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)
   latencies:update(events * 10)
   C.sb_histogram_update(raw_histogram, events)
   raw_histogram:update(0.1)
   line("usleep", C.usleep(1000))
   local tv = ffi.new("struct timeval")
   line("gettimeofday", C.gettimeofday(tv, nil), tv.tv_sec > 1500000000)
   counter_values("event" .. events)
end

function thread_done()
   draws("thread_done")
   latencies:print()
   raw_histogram:print()
   C.sb_histogram_print(raw_histogram)
   counter_values("thread_done")
   con:disconnect()
end

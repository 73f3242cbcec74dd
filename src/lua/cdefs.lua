-- The C declarations sysbench 1.0.20 makes with ffi.cdef in every Lua state
-- before a script runs (its internal modules sysbench.rand, sysbench,
-- sysbench.cmdline, sysbench.sql and sysbench.histogram, in the order
-- sb_lua.c loads them). They are an ABI that scripts rely on: a script
-- uses these names (ffi.C.SB_CNT_ERROR, sb_counter_type, sql_result) or
-- declares them again, which LuaJIT accepts for a function or a typedef
-- and refuses for an enum constant ("attempt to redefine"), as under
-- sysbench. So the type names, enum values, struct layouts and function
-- signatures below are sysbench's exactly; only the comments are
-- wirebench's.
--
-- wirebench's binary exports the functions scripts call (src/lua/ffi/);
-- the ones it does not export fail only when a script calls them
-- (ffi.C resolves a symbol on first use).

ffi = require("ffi")

-- sysbench.rand: the thread's generator (src/lua/ffi/rand_ffi.rs).
ffi.cdef[[
uint64_t sb_rand_uniform_uint64(void);
uint32_t sb_rand_default(uint32_t, uint32_t);
uint32_t sb_rand_uniform(uint32_t, uint32_t);
uint32_t sb_rand_gaussian(uint32_t, uint32_t);
uint32_t sb_rand_special(uint32_t, uint32_t);
uint32_t sb_rand_pareto(uint32_t, uint32_t);
uint32_t sb_rand_unique(void);
void sb_rand_str(const char *, char *);
double sb_rand_uniform_double(void);
]]

-- sysbench: the event loop's calls (sysbench.lua's thread_run).
ffi.cdef[[
void sb_event_start(int thread_id);
void sb_event_stop(int thread_id);
bool sb_more_events(int thread_id);
]]

-- sysbench.cmdline: a script's option definitions (sb_option.h's types).
ffi.cdef[[
typedef enum
{
  SB_ARG_TYPE_NULL,
  SB_ARG_TYPE_BOOL,
  SB_ARG_TYPE_INT,
  SB_ARG_TYPE_SIZE,
  SB_ARG_TYPE_DOUBLE,
  SB_ARG_TYPE_STRING,
  SB_ARG_TYPE_LIST,
  SB_ARG_TYPE_FILE,
  SB_ARG_TYPE_MAX
} sb_arg_type_t;

typedef bool sb_opt_validate_t(const char *, const char *);

typedef struct
{
  const char         *name;
  const char         *desc;
  const char         *value;
  sb_arg_type_t      type;
  sb_opt_validate_t  *validate;
} sb_arg_t;

int sb_lua_set_test_args(sb_arg_t *args, size_t len);
]]

ffi.cdef[[
void sb_print_test_options(void);
]]

-- sysbench.sql: the SQL API's handles (db_driver.h's types, their
-- driver-private tails left opaque) and the statistics counters.
ffi.cdef[[
typedef enum
{
  DB_ERROR_NONE,
  DB_ERROR_IGNORABLE,
  DB_ERROR_FATAL
} sql_error_t;

typedef struct
{
  const char      *sname;
  const char      *lname;

  const char      opaque[?];
} sql_driver;

typedef struct {
  uint32_t        len;
  const char      *ptr;
} sql_value;

typedef struct
{
  void            *ptr;
  sql_value       *values;
} sql_row;

typedef enum
{
  SB_CNT_OTHER,
  SB_CNT_READ,
  SB_CNT_WRITE,
  SB_CNT_TRX,
  SB_CNT_ERROR,
  SB_CNT_RECONNECT,
  SB_CNT_MAX
} sb_counter_type;

typedef struct
{
  sql_error_t     error;
  int             sql_errno;
  const char      *sql_state;
  const char      *sql_errmsg;
  sql_driver      *driver;

  const char      opaque[?];
} sql_connection;

typedef struct
{
  sql_connection  *connection;

  const char      opaque[?];
} sql_statement;

typedef struct
{
  sb_counter_type   counter;
  uint32_t       nrows;
  uint32_t       nfields;
  sql_statement  *statement;
  void           *ptr;
  sql_row        row;
} sql_result;

typedef enum
{
  SQL_TYPE_NONE,
  SQL_TYPE_TINYINT,
  SQL_TYPE_SMALLINT,
  SQL_TYPE_INT,
  SQL_TYPE_BIGINT,
  SQL_TYPE_FLOAT,
  SQL_TYPE_DOUBLE,
  SQL_TYPE_TIME,
  SQL_TYPE_DATE,
  SQL_TYPE_DATETIME,
  SQL_TYPE_TIMESTAMP,
  SQL_TYPE_CHAR,
  SQL_TYPE_VARCHAR
} sql_bind_type_t;

typedef struct
{
  sql_bind_type_t   type;
  void             *buffer;
  unsigned long    *data_len;
  unsigned long    max_len;
  char             *is_null;
} sql_bind;

sql_driver *db_create(const char *);
int db_destroy(sql_driver *drv);

sql_connection *db_connection_create(sql_driver * drv);
int db_connection_close(sql_connection *con);
int db_connection_reconnect(sql_connection *con);
void db_connection_free(sql_connection *con);

int db_bulk_insert_init(sql_connection *, const char *, size_t);
int db_bulk_insert_next(sql_connection *, const char *, size_t);
int db_bulk_insert_done(sql_connection *);

sql_result *db_query(sql_connection *con, const char *query, size_t len);

sql_row *db_fetch_row(sql_result *rs);

sql_statement *db_prepare(sql_connection *con, const char *query, size_t len);
int db_bind_param(sql_statement *stmt, sql_bind *params, size_t len);
int db_bind_result(sql_statement *stmt, sql_bind *results, size_t len);
sql_result *db_execute(sql_statement *stmt);
int db_close(sql_statement *stmt);

int db_free_results(sql_result *);
]]

-- sysbench.histogram: a histogram is an opaque pointer (src/lua/ffi/histogram_ffi.rs).
ffi.cdef[[
typedef struct histogram sb_histogram_t;

sb_histogram_t *sb_histogram_new(size_t size, double range_min,
                                 double range_max);

void sb_histogram_delete(sb_histogram_t *h);

void sb_histogram_update(sb_histogram_t *h, double value);

void sb_histogram_print(sb_histogram_t *h);
]]

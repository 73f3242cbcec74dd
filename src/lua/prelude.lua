-- wirebench's Lua prelude: sysbench 1.0.20's Lua API (sysbench.sql,
-- sysbench.rand, sysbench.cmdline, sysbench.histogram, reports, hooks)
-- shaped over wirebench's raw functions in __wirebench. Errors are raised
-- at the caller's line, as sysbench's own API raises them.

local wb = __wirebench

-- Output goes through Rust's stdout, in order with wirebench's reports.
function print(...)
   local n = select('#', ...)
   local parts = {}
   for i = 1, n do
      parts[i] = tostring((select(i, ...)))
   end
   wb.write(table.concat(parts, "\t") .. "\n")
end

do
   local stdout_write = io.write
   io.write = function(...)
      for i = 1, select('#', ...) do
         wb.write(tostring((select(i, ...))))
      end
      return io.stdout
   end
end

-- ----------------------------------------------------------------------
-- sysbench.cmdline
-- ----------------------------------------------------------------------
local C = ffi.C
local cmdline = sysbench.cmdline
cmdline.ARG_NULL, cmdline.ARG_BOOL = C.SB_ARG_TYPE_NULL, C.SB_ARG_TYPE_BOOL
cmdline.ARG_INT, cmdline.ARG_SIZE = C.SB_ARG_TYPE_INT, C.SB_ARG_TYPE_SIZE
cmdline.ARG_DOUBLE, cmdline.ARG_STRING = C.SB_ARG_TYPE_DOUBLE, C.SB_ARG_TYPE_STRING
cmdline.ARG_LIST, cmdline.ARG_FILE = C.SB_ARG_TYPE_LIST, C.SB_ARG_TYPE_FILE
cmdline.ARG_MAX = C.SB_ARG_TYPE_MAX
cmdline.PARALLEL_COMMAND = true

function cmdline.command_defined(name)
   return type(cmdline.commands) == "table" and cmdline.commands[name] ~= nil
      and cmdline.commands[name][1] ~= nil
end

function cmdline.command_parallel(name)
   return cmdline.command_defined(name) and
      cmdline.commands[name][2] == cmdline.PARALLEL_COMMAND
end

function cmdline.call_command(name)
   if not cmdline.command_defined(name) then
      return false
   end
   local rc = cmdline.commands[name][1]()
   if rc == nil then
      return true
   end
   return rc and true or false
end

-- The definitions in cmdline.options as sb_arg_t entries, sorted by name,
-- registered with sb_lua_set_test_args (wirebench registers them itself
-- when it exports the options; a script may do it again). A definition's
-- type is its third field, else its default's.
local implied_arg_type = {
   boolean = cmdline.ARG_BOOL, number = cmdline.ARG_DOUBLE,
   string = cmdline.ARG_STRING, table = cmdline.ARG_LIST,
}

function cmdline.read_cmdline_options()
   local defs = cmdline.options
   if defs == nil then
      return true
   end
   assert(type(defs) == "table", "wrong type for sysbench.cmdline.options: " .. type(defs))
   local names = {}
   for name, def in pairs(defs) do
      assert(type(name) == "string" and type(def) == "table",
             "wrong table structure in sysbench.cmdline.options")
      names[#names + 1] = name
   end
   table.sort(names)
   -- The strings the entries point to stay referenced until the call.
   local args, keep = ffi.new("sb_arg_t[?]", #names), {}
   for i, name in ipairs(names) do
      local def = defs[name]
      assert(def[1] ~= nil, "nil description for option " .. name)
      local default = def[2]
      if type(default) == "table" then
         default = table.concat(default, ",")
      elseif type(default) == "boolean" then
         default = default and "on" or "off"
      elseif default ~= nil then
         default = tostring(default)
      end
      local arg_type = def[3]
      if arg_type == nil then
         arg_type = def[2] == nil and cmdline.ARG_STRING or implied_arg_type[type(def[2])]
      end
      assert(arg_type ~= nil, "cannot determine type for option " .. name)
      keep[#keep + 1] = { name, tostring(def[1]), default }
      local arg = args[i - 1]
      arg.name, arg.desc, arg.value, arg.type = name, keep[#keep][2], default, arg_type
   end
   return C.sb_lua_set_test_args(args, #names) == 0
end

function cmdline.print_test_options()
   C.sb_print_test_options()
end

-- ----------------------------------------------------------------------
-- sysbench.rand: the exported C functions (src/lua/ffi/rand_ffi.rs), called
-- through the FFI as sysbench's module calls them, so that arguments
-- convert and draws come as there.
-- ----------------------------------------------------------------------
sysbench.rand = {
   -- Not a function of sysbench 1.0.20's; kept for scripts that use it.
   zipfian = wb.rand_zipfian,
}

do
   local rand = sysbench.rand
   function rand.default(a, b) return C.sb_rand_default(a, b) end
   function rand.uniform(a, b) return C.sb_rand_uniform(a, b) end
   function rand.gaussian(a, b) return C.sb_rand_gaussian(a, b) end
   function rand.special(a, b) return C.sb_rand_special(a, b) end
   function rand.pareto(a, b) return C.sb_rand_pareto(a, b) end
   function rand.unique() return C.sb_rand_unique() end
   function rand.uniform_uint64() return C.sb_rand_uniform_uint64() end
   function rand.uniform_double() return C.sb_rand_uniform_double() end

   local bytes = ffi.typeof("uint8_t[?]")
   function rand.string(template)
      local n = #template
      local out = bytes(n)
      C.sb_rand_str(template, out)
      return ffi.string(out, n)
   end
   -- The SQL parameters' set_rand_str() below.
   wb.rand_string = rand.string
end

-- ----------------------------------------------------------------------
-- sysbench.histogram: an sb_histogram_t pointer (src/lua/ffi/histogram_ffi.rs)
-- with update() and print(), freed when collected.
-- ----------------------------------------------------------------------
do
   local histogram_methods = {
      update = function(h, value) C.sb_histogram_update(h, value) end,
      print = function(h) C.sb_histogram_print(h) end,
   }
   ffi.metatype("sb_histogram_t", {
      __index = histogram_methods,
      __tostring = function() return "<sb_histogram>" end,
   })
   sysbench.histogram = {}
   function sysbench.histogram.new(size, range_min, range_max)
      local h = C.sb_histogram_new(size, range_min, range_max)
      if h == nil then
         error(string.format("sysbench.histogram.new(%s, %s, %s): no histogram made (see the ALERT above)",
                             tostring(size), tostring(range_min), tostring(range_max)), 2)
      end
      return ffi.gc(h, C.sb_histogram_delete)
   end
end

-- ----------------------------------------------------------------------
-- sysbench.sql: sysbench's C functions (exported by wirebench's binary
-- under the same names, over the structures sysbench.sql declares),
-- called through the FFI so that a script's SQL calls are C calls inside
-- its compiled traces, as under sysbench.
-- ----------------------------------------------------------------------
local sql = {}
sysbench.sql = sql

sql.type = {
   NONE = C.SQL_TYPE_NONE, TINYINT = C.SQL_TYPE_TINYINT, SMALLINT = C.SQL_TYPE_SMALLINT,
   INT = C.SQL_TYPE_INT, BIGINT = C.SQL_TYPE_BIGINT, FLOAT = C.SQL_TYPE_FLOAT,
   DOUBLE = C.SQL_TYPE_DOUBLE, TIME = C.SQL_TYPE_TIME, DATE = C.SQL_TYPE_DATE,
   DATETIME = C.SQL_TYPE_DATETIME, TIMESTAMP = C.SQL_TYPE_TIMESTAMP,
   CHAR = C.SQL_TYPE_CHAR, VARCHAR = C.SQL_TYPE_VARCHAR,
}
sql.error = { NONE = C.DB_ERROR_NONE, IGNORABLE = C.DB_ERROR_IGNORABLE, FATAL = C.DB_ERROR_FATAL }

local NONE, IGNORABLE, FATAL = sql.error.NONE, sql.error.IGNORABLE, sql.error.FATAL
local stype = sql.type

-- The default driver (--db-driver) for no name; only mysql exists.
function sql.driver(name)
   local drv = C.db_create(name)
   if drv == nil then
      error("failed to initialize the DB driver", 2)
   end
   return drv
end

local driver_methods = {}

function driver_methods.connect(self)
   local con = C.db_connection_create(self)
   if con == nil then
      error("connection creation failed", 2)
   end
   return ffi.gc(con, C.db_connection_free)
end

function driver_methods.name(self)
   return ffi.string(self.sname)
end

ffi.metatype("sql_driver", {
   __index = driver_methods,
   __tostring = function() return '<sql_driver>' end,
})

local connection_methods = {}

function connection_methods.disconnect(self)
   return assert(C.db_connection_close(self) == 0)
end

function connection_methods.reconnect(self)
   return assert(C.db_connection_reconnect(self) == 0)
end

-- After a call that gave no result: nothing when it went well; an
-- ignorable error (or one sql_error_ignorable accepts) restarts the
-- event; anything else is raised at the script's line.
-- A statement without rows gives a result without rows (sysbench hands
-- back a NULL pointer there, which a script reading rs.nrows would
-- dereference); a failed call gives NULL.
function connection_methods.check_error(self, rs, query)
   if rs ~= nil or self.error == NONE then
      return rs
   end
   if self.sql_state == nil or self.sql_errmsg == nil then
      error("SQL API error", 3)
   end
   local state, message = ffi.string(self.sql_state), ffi.string(self.sql_errmsg)
   local errdesc = { connection = self, query = query, sql_errno = self.sql_errno,
                     sql_state = state, sql_errmsg = message }
   local hook = sysbench.hooks.sql_error_ignorable
   if self.error == IGNORABLE
      or (self.error == FATAL and type(hook) == "function" and hook(errdesc)) then
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(errdesc, 3)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s", self.sql_errno, state, message), 2)
end

function connection_methods.query(self, query)
   return self:check_error(C.db_query(self, query, #query), query)
end

function connection_methods.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 then
      return nil
   end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end

function connection_methods.bulk_insert_init(self, query)
   return assert(C.db_bulk_insert_init(self, query, #query) == 0, "db_bulk_insert_init() failed")
end

function connection_methods.bulk_insert_next(self, value)
   return assert(C.db_bulk_insert_next(self, value, #value) == 0, "db_bulk_insert_next() failed")
end

function connection_methods.bulk_insert_done(self)
   return assert(C.db_bulk_insert_done(self) == 0, "db_bulk_insert_done() failed")
end

function connection_methods.prepare(self, query)
   local stmt = C.db_prepare(self, query, #query)
   if stmt == nil then
      self:check_error(nil, query)
   end
   return stmt
end

ffi.metatype("sql_connection", {
   __index = connection_methods,
   __tostring = function() return '<sql_connection>' end,
   __gc = C.db_connection_free,
})

-- A statement's parameters: each a buffer the execution reads.
local param_methods = {}
local param_mt = { __index = param_methods, __tostring = function() return '<sql_param>' end }

function param_methods.set(self, value)
   if value == nil then
      self.is_null[0] = 1
      return
   end
   self.is_null[0] = 0
   local btype = self.type
   if btype == stype.BIGINT then
      self.buffer[0] = value
   elseif btype == stype.DOUBLE then
      self.buffer[0] = value
   elseif btype == stype.VARCHAR then
      value = tostring(value)
      local len = #value
      if len > self.max_len then len = self.max_len end
      ffi.copy(self.buffer, value, len)
      self.data_len[0] = len
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
end

function param_methods.set_rand_str(self, fmt)
   if self.type ~= stype.VARCHAR then
      error("Unsupported argument type: " .. tostring(self.type), 2)
   end
   self.is_null[0] = 0
   local len = #fmt
   if len <= self.max_len then
      C.sb_rand_str(fmt, self.buffer)
   else
      -- sb_rand_str writes the whole template: drawn apart, then cut.
      len = self.max_len
      ffi.copy(self.buffer, sysbench.rand.string(fmt), len)
   end
   self.data_len[0] = len
end

-- The parameters each statement bound, kept alive with it: the
-- execution reads their buffers.
local bound = setmetatable({}, { __mode = "k" })

local statement_methods = {}

function statement_methods.bind_create(self, btype, max_len)
   local param = setmetatable({}, param_mt)
   if btype == stype.TINYINT or btype == stype.SMALLINT or btype == stype.INT or btype == stype.BIGINT then
      param.type, param.buffer, param.max_len = stype.BIGINT, ffi.new('int64_t[1]'), 8
   elseif btype == stype.FLOAT or btype == stype.DOUBLE then
      param.type, param.buffer, param.max_len = stype.DOUBLE, ffi.new('double[1]'), 8
   elseif btype == stype.CHAR or btype == stype.VARCHAR then
      param.type, param.buffer, param.max_len = stype.VARCHAR, ffi.new('char[?]', max_len), max_len
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   param.data_len = ffi.new('unsigned long[1]')
   param.is_null = ffi.new('char[1]')
   return param
end

function statement_methods.bind_param(self, ...)
   local len = select('#', ...)
   if len < 1 then return nil end
   local params = {...}
   local binds = ffi.new("sql_bind[?]", len)
   for i = 1, len do
      local p = params[i]
      local b = binds[i - 1]
      b.type, b.buffer, b.data_len, b.max_len, b.is_null = p.type, p.buffer, p.data_len, p.max_len, p.is_null
   end
   bound[self] = params
   return C.db_bind_param(self, binds, len)
end

function statement_methods.execute(self)
   return self.connection:check_error(C.db_execute(self), '<prepared statement>')
end

function statement_methods.close(self)
   bound[self] = nil
   return C.db_close(ffi.gc(self, nil))
end

ffi.metatype("sql_statement", {
   __index = statement_methods,
   __tostring = function() return '<sql_statement>' end,
   __gc = C.db_close,
})

ffi.metatype("sql_bind", { __tostring = function() return '<sql_bind>' end })

local result_methods = {}

function result_methods.fetch_row(self)
   local row = C.db_fetch_row(self)
   if row == nil then
      return nil
   end
   local values = {}
   for i = 0, self.nfields - 1 do
      local v = row.values[i]
      if v.ptr ~= nil then
         values[i + 1] = ffi.string(v.ptr, v.len)
      end
   end
   return values
end

function result_methods.free(self)
   return assert(C.db_free_results(self) == 0, "db_free_results() failed")
end

ffi.metatype("sql_result", {
   __index = result_methods,
   __tostring = function() return '<sql_result>' end,
})

-- ----------------------------------------------------------------------
-- Reports (formats as sysbench 1.0.20 writes them)
-- ----------------------------------------------------------------------
function sysbench.report_csv(stat)
   local seconds = stat.time_interval
   print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
                       stat.time_total, stat.threads_running,
                       stat.events / seconds,
                       (stat.reads + stat.writes + stat.other) / seconds,
                       stat.reads / seconds, stat.writes / seconds,
                       stat.other / seconds, stat.latency_pct * 1000,
                       stat.errors / seconds, stat.reconnects / seconds))
end

local json_started = false

function sysbench.report_json(stat)
   if not json_started then
      io.write('[\n')
      json_started = true
      wb.on_close('\n]\n')
   else
      io.write(',\n')
   end
   local seconds = stat.time_interval
   io.write(([[
  {
    "time": %4.0f,
    "threads": %u,
    "tps": %4.2f,
    "qps": {
      "total": %4.2f,
      "reads": %4.2f,
      "writes": %4.2f,
      "other": %4.2f
    },
    "latency": %4.2f,
    "errors": %4.2f,
    "reconnects": %4.2f
  }]]):format(stat.time_total, stat.threads_running,
              stat.events / seconds,
              (stat.reads + stat.writes + stat.other) / seconds,
              stat.reads / seconds, stat.writes / seconds,
              stat.other / seconds, stat.latency_pct * 1000,
              stat.errors / seconds, stat.reconnects / seconds))
end

function sysbench.report_default(stat)
   local seconds = stat.time_interval
   print(string.format("[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f " ..
                          "(r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%u%%): %4.2f " ..
                          "err/s %4.2f reconn/s: %4.2f",
                       stat.time_total, stat.threads_running,
                       stat.events / seconds,
                       (stat.reads + stat.writes + stat.other) / seconds,
                       stat.reads / seconds, stat.writes / seconds,
                       stat.other / seconds, sysbench.opt.percentile,
                       stat.latency_pct * 1000, stat.errors / seconds,
                       stat.reconnects / seconds))
end

-- ----------------------------------------------------------------------
-- sysbench's event loop (sysbench.c's thread_run, in Lua as sysbench 1.0
-- has it): while events may start, run event() (again from its start
-- after an ignorable error), then count it; event() returning true ends
-- the thread. A script may define its own thread_run.
-- ----------------------------------------------------------------------
function thread_run(thread_id)
   while C.sb_more_events(thread_id) do
      C.sb_event_start(thread_id)
      local ok, ret
      repeat
         ok, ret = pcall(event, thread_id)
         if not ok then
            if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
               local restart = sysbench.hooks.before_restart_event
               if restart then
                  restart(ret)
               end
            else
               error(ret, 2)
            end
         end
      until ok
      if ret then
         break
      end
      C.sb_event_stop(thread_id)
   end
end

-- ----------------------------------------------------------------------
-- The names sysbench 1.0 keeps for 0.5's scripts (sysbench.compat.lua)
-- ----------------------------------------------------------------------
thread_id = sysbench.tid
test = sysbench.cmdline.script_path

function sb_rnd()
   return tonumber(sysbench.rand.uniform_uint64() % 4294967296)
end

sb_rand = sysbench.rand.default
sb_rand_str = sysbench.rand.string
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special

function sb_rand_uniq(a, b)
   a = a or 0
   b = b or 4294967295
   local res
   repeat
      res = sysbench.rand.unique()
   until res >= a and res <= b
   return res
end

mysql_table_engine = mysql_table_engine or "innodb"
myisam_max_rows = 1000000

-- ----------------------------------------------------------------------
-- sysbench 0.5's SQL API (sb_lua.c's sysbench.db, which sysbench.compat.lua
-- names db_query, db_connect, ...): one implicit connection per state,
-- made by the first call that needs it. Errors are sb_lua.c's: a failed
-- call raises "<call>() failed" at the script's line (luaL_error from the
-- C function the script called), an ignorable error restarts the event.
-- ----------------------------------------------------------------------
local db = {
   DB_ERROR_NONE = sql.error.NONE,
   DB_ERROR_RESTART_TRANSACTION = sql.error.IGNORABLE,
   DB_ERROR_FAILED = sql.error.FATAL,
}
sysbench.db = db
local db_con
local db_stmt_mt = { __tostring = function() return '<sysbench.stmt>' end }
local db_rs_mt = { __tostring = function() return '<sysbench.rs>' end }

-- The API call `f(...)` on the connection; an ignored error's restart
-- goes through, any other failure is `what`() failed. Called by a db.*
-- function, so the script's line is level 3, as for the helpers below.
local function db_call(what, f, ...)
   local ok, ret = pcall(f, ...)
   if ok then
      return ret
   end
   if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
      error(ret, 0)
   end
   error(what .. "() failed", 3)
end

local function db_connection()
   if db_con == nil then
      error("Uninitialized database connection", 3)
   end
   return db_con
end

local function db_connect_here()
   db_driver = "mysql"
   if db_con == nil then
      local ok, con = pcall(sql.driver().connect, sql.driver())
      if not ok then
         error("Failed to connect to the database", 3)
      end
      db_con = con
   end
end

function db.connect()
   db_connect_here()
end

function db.disconnect()
   if db_con ~= nil then
      db_con:disconnect()
      db_con = nil
   end
end

function db.query(query)
   if db_con == nil then db_connect_here() end
   if type(query) ~= "string" then
      error("bad argument #1 to 'db_query' (string expected, got " .. type(query) .. ")", 2)
   end
   local rs = db_call("db_query", db_con.query, db_con, query)
   if rs ~= nil and rs.counter == C.SB_CNT_READ then
      rs:free()
   end
end

function db.bulk_insert_init(query)
   if db_con == nil then db_connect_here() end
   db_call("db_bulk_insert_init", db_con.bulk_insert_init, db_con, query)
end

function db.bulk_insert_next(value)
   local con = db_connection()
   db_call("db_bulk_insert_next", con.bulk_insert_next, con, value)
end

function db.bulk_insert_done()
   local con = db_connection()
   db_call("db_bulk_insert_done", con.bulk_insert_done, con)
end

function db.prepare(query)
   if db_con == nil then db_connect_here() end
   local stmt = db_call("db_prepare", db_con.prepare, db_con, query)
   return setmetatable({ stmt = stmt, binds = {} }, db_stmt_mt)
end

local function db_check_stmt(stmt, func)
   if getmetatable(stmt) ~= db_stmt_mt then
      error("bad argument #1 to '" .. func .. "' (prepared statement expected)", 3)
   end
end

-- sb_lua.c binds the table's entries in its traversal order, an int for a
-- number and a string for a string; execute() reads the values from the
-- same table then, so a script changes them between executions.
function db.bind_param(stmt, params)
   db_connection()
   db_check_stmt(stmt, "db_bind_param")
   if type(params) ~= "table" then error("table was expected", 2) end
   local binds, ids = {}, {}
   for id, value in pairs(params) do
      local btype = type(value) == "number" and sql.type.INT
         or type(value) == "string" and sql.type.VARCHAR
      if not btype then
         error("Unsupported variable type: " .. type(value), 2)
      end
      binds[#binds + 1] = stmt.stmt:bind_create(btype, 2147483647)
      ids[#ids + 1] = id
   end
   if #binds == 0 then error("table is empty", 2) end
   stmt.stmt:bind_param(unpack(binds))
   stmt.binds, stmt.ids, stmt.params = binds, ids, params
end

-- Result binds are never read: 0.5's Lua API has no call that fetches a
-- row, so sb_lua.c's binding only checks the table.
function db.bind_result(stmt, results)
   db_connection()
   db_check_stmt(stmt, "db_bind_result")
   if type(results) ~= "table" then error("table was expected", 2) end
   if next(results) == nil then error("table is empty", 2) end
end

-- A failure other than an ignored error gives a result set with nothing
-- in it, as sb_lua.c's (the driver has logged the error).
function db.execute(stmt)
   db_connection()
   db_check_stmt(stmt, "db_execute")
   for i, bind in ipairs(stmt.binds) do
      bind:set(stmt.params[stmt.ids[i]])
   end
   local ok, ret = pcall(stmt.stmt.execute, stmt.stmt)
   if not ok and type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
      error(ret, 0)
   end
   return setmetatable({ rs = ok and ret or nil }, db_rs_mt)
end

function db.store_results(rs)
   db_connection()
   if getmetatable(rs) ~= db_rs_mt then
      error("bad argument #1 to 'db_store_results' (result set expected)", 2)
   end
end

function db.free_results(rs)
   local con = db_connection()
   if getmetatable(rs) ~= db_rs_mt then
      error("bad argument #1 to 'db_free_results' (result set expected)", 2)
   end
   if rs.rs ~= nil and rs.rs.counter == C.SB_CNT_READ then
      C.db_free_results(rs.rs)
   end
   rs.rs = nil
end

function db.close(stmt)
   db_connection()
   db_check_stmt(stmt, "db_close")
   stmt.stmt:close()
end

db_connect = db.connect
db_disconnect = db.disconnect
db_query = db.query
db_bulk_insert_init = db.bulk_insert_init
db_bulk_insert_next = db.bulk_insert_next
db_bulk_insert_done = db.bulk_insert_done
db_prepare = db.prepare
db_bind_param = db.bind_param
db_bind_result = db.bind_result
db_execute = db.execute
db_store_results = db.store_results
db_free_results = db.free_results
db_close = db.close
DB_ERROR_NONE = db.DB_ERROR_NONE
DB_ERROR_RESTART_TRANSACTION = db.DB_ERROR_RESTART_TRANSACTION
DB_ERROR_FAILED = db.DB_ERROR_FAILED

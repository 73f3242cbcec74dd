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
-- sysbench.rand: the exported C functions (src/lua/ffi/rand.rs), called
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
-- sysbench.histogram: an sb_histogram_t pointer (src/lua/ffi/histogram.rs)
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
-- sysbench.sql
-- ----------------------------------------------------------------------
local sql = {}
sysbench.sql = sql

sql.type = {
   NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
   DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10, CHAR = 11,
   VARCHAR = 12
}
sql.error = { NONE = 0, IGNORABLE = 1, FATAL = 2 }

local driver_methods = {}
local driver_mt = {
   __index = driver_methods,
   __tostring = function() return '<sql_driver>' end,
}
local connection_methods = {}
local connection_mt = {
   __index = connection_methods,
   __tostring = function() return '<sql_connection>' end,
}
local statement_methods = {}
local statement_mt = {
   __index = statement_methods,
   __tostring = function() return '<sql_statement>' end,
}
local result_methods = {}
local result_mt = {
   __index = result_methods,
   __tostring = function() return '<sql_result>' end,
}
local param_methods = {}
local param_mt = {
   __index = param_methods,
   __tostring = function() return '<sql_param>' end,
}

function sql.driver(name)
   if name ~= nil and name ~= "mysql" then
      wb.write_err(string.format("FATAL: invalid database driver name: '%s'\n", tostring(name)))
      error("failed to initialize the DB driver", 2)
   end
   wb.driver_made()
   return setmetatable({}, driver_mt)
end

function driver_methods.name(self)
   return "mysql"
end

function driver_methods.connect(self)
   local raw, err = wb.connect()
   if raw == nil then
      error(string.format("connection creation failed: errno = %d, state = '%s': %s",
                          err.sql_errno, err.sql_state, err.sql_errmsg), 2)
   end
   return setmetatable({ raw = raw, error = sql.error.NONE }, connection_mt)
end

-- sysbench's check_error (sysbench.sql.lua), after its driver's
-- (drv_mysql.c): an error --mysql-ignore-errors does not list is logged
-- FATAL; then an ignorable error, or one the sql_error_ignorable hook
-- accepts, restarts the event, and any other ends the script with the
-- server's message at the script's line.
local function check_error(con, err, query, level, func)
   con.sql_errno, con.sql_state, con.sql_errmsg =
      err.sql_errno, err.sql_state, err.sql_errmsg
   if err.ignorable then
      con.error = sql.error.IGNORABLE
   else
      con.error = sql.error.FATAL
      wb.write_err(string.format("FATAL: %s returned error %d (%s) for query '%s'\n",
                                 func or "mysql_drv_query()", err.sql_errno, err.sql_errmsg, query))
   end
   local errdesc = {
      connection = con,
      query = query,
      sql_errno = err.sql_errno,
      sql_state = err.sql_state,
      sql_errmsg = err.sql_errmsg,
   }
   if err.ignorable or (type(sysbench.hooks.sql_error_ignorable) == "function"
                           and sysbench.hooks.sql_error_ignorable(errdesc)) then
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(errdesc, level + 1)
   end
   error(string.format("SQL error, errno = %d, state = '%s': %s",
                       err.sql_errno, err.sql_state, err.sql_errmsg), level + 1)
end

-- As in sysbench's driver, only the connection's latest result set can be
-- freed: a query or execution after it, or free(), ends it.
local function current_result(con, rs)
   rs.row_at = 0
   rs.connection = con
   con.current_rs = rs.nfields > 0 and rs or nil
   return setmetatable(rs, result_mt)
end

-- A call on a connection disconnect() closed: sysbench's "SQL API error",
-- raised (as there) from a tail call, so at the same level.
local function closed_error()
   wb.write_err("ALERT: attempt to use an already closed connection\n")
   error("SQL API error", 3)
end

-- The answer to the call `raw` (a connection) just started, if `started`:
-- a state on a loop gives way until the loop has the answer, which it
-- resumes the state with (wb.events_co is the coroutine the loop
-- resumes); elsewhere the call waits here.
local running, yield = coroutine.running, coroutine.yield
local function answer_of(raw, started)
   if not started then
      return raw:answer()
   end
   local co = wb.events_co
   if co ~= nil and running() == co then
      return yield(raw)
   end
   return raw:wait()
end

function connection_methods.query(self, query)
   if type(query) ~= "string" then
      error("bad argument #1 to 'query' (string expected, got " .. type(query) .. ")", 2)
   end
   if self.closed then return closed_error() end
   local rs, err = answer_of(self.raw, self.raw:query(query))
   if rs == nil then
      return check_error(self, err, query, 1)
   end
   self.error = sql.error.NONE
   return current_result(self, rs)
end

function connection_methods.query_row(self, query)
   if self.closed then return closed_error() end
   local rs, err = answer_of(self.raw, self.raw:query(query))
   if rs == nil then
      return check_error(self, err, query, 1)
   end
   if rs.nrows == 0 or rs.rows[1] == nil then
      return nil
   end
   return unpack(rs.rows[1], 1, rs.nfields)
end

function connection_methods.bulk_insert_init(self, query)
   if self.closed then return closed_error() end
   self.raw:bulk_insert_init(query)
   self.bulk_on = true
   return true
end

function connection_methods.bulk_insert_next(self, val)
   if self.closed then return closed_error() end
   if not self.bulk_on then
      wb.write_err("ALERT: attempt to call bulk_insert_next() before bulk_insert_init()\n")
      error("db_bulk_insert_next() failed", 2)
   end
   local started = self.raw:bulk_insert_next(val)
   local err
   if started ~= nil then
      local _
      _, err = answer_of(self.raw, started)
   end
   if err ~= nil then
      return check_error(self, err, "<bulk insert>", 1)
   end
   return true
end

function connection_methods.bulk_insert_done(self)
   if self.closed then return closed_error() end
   if not self.bulk_on then
      return true
   end
   self.bulk_on = false
   local started = self.raw:bulk_insert_done()
   local err
   if started ~= nil then
      local _
      _, err = answer_of(self.raw, started)
   end
   if err ~= nil then
      return check_error(self, err, "<bulk insert>", 1)
   end
   return true
end

-- A statement the server refuses: sysbench's driver logs it and its
-- check_error raises an API error (the error is not counted).
function connection_methods.prepare(self, query)
   if self.closed then return closed_error() end
   local raw, err = answer_of(self.raw, self.raw:prepare(query))
   if raw == nil then
      self.error = sql.error.FATAL
      wb.write_err(string.format("FATAL: mysql_stmt_prepare() failed\nFATAL: MySQL error: %d \"%s\"\n",
                                 err.sql_errno, err.sql_errmsg))
      error("SQL API error", 2)
   end
   return setmetatable({ raw = raw, connection = self, params = {}, query = query }, statement_mt)
end

function connection_methods.disconnect(self)
   if self.closed then
      wb.write_err("ALERT: attempt to close an already closed connection\n")
      return true
   end
   self.raw:disconnect()
   self.closed = true
   return true
end

function connection_methods.reconnect(self)
   if self.closed then
      wb.write_err("ALERT: attempt to close an already closed connection\n")
      return true
   end
   if not self.raw:reconnect() then
      error("reconnect failed: the run was stopped before the server answered", 2)
   end
   return true
end

function connection_methods.check_error(self, rs, query)
   return rs
end

local int_types = { [sql.type.TINYINT] = true, [sql.type.SMALLINT] = true,
                    [sql.type.INT] = true, [sql.type.BIGINT] = true }
local double_types = { [sql.type.FLOAT] = true, [sql.type.DOUBLE] = true }
local char_types = { [sql.type.CHAR] = true, [sql.type.VARCHAR] = true }

function statement_methods.bind_create(self, btype, max_len)
   local param = setmetatable({}, param_mt)
   if int_types[btype] then
      param.type, param.max_len = sql.type.BIGINT, 8
   elseif double_types[btype] then
      param.type, param.max_len = sql.type.DOUBLE, 8
   elseif char_types[btype] then
      if type(max_len) ~= "number" then
         error("bind_create(): a CHAR or VARCHAR parameter needs its maximum length", 2)
      end
      param.type, param.max_len = sql.type.VARCHAR, max_len
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   return param
end

function statement_methods.bind_param(self, ...)
   local len = select('#', ...)
   if len < 1 then return nil end
   self.params = {...}
   local types = {}
   for i = 1, len do
      if getmetatable(self.params[i]) ~= param_mt then
         error("bind_param(): argument #" .. i .. " is not a parameter made by bind_create()", 2)
      end
      types[i] = self.params[i].type
   end
   self.raw:bind_types(unpack(types, 1, len))
   return 0
end

-- The bound parameters' values as arguments of raw:execute(): up to four
-- without building a table each time.
local function execute_raw(raw, p)
   local n = #p
   if n == 0 then
      return raw:execute()
   elseif n == 1 then
      return raw:execute(p[1].value)
   elseif n == 2 then
      return raw:execute(p[1].value, p[2].value)
   elseif n == 3 then
      return raw:execute(p[1].value, p[2].value, p[3].value)
   elseif n == 4 then
      return raw:execute(p[1].value, p[2].value, p[3].value, p[4].value)
   end
   local values = {}
   for i = 1, n do
      values[i] = p[i].value
   end
   return raw:execute(unpack(values, 1, n))
end

function statement_methods.execute(self)
   if self.connection.closed then return closed_error() end
   local nrows, err, nfields, serial = answer_of(self.connection.raw, execute_raw(self.raw, self.params))
   if nrows == nil then
      return check_error(self.connection, err, self.query, 1, "mysql_stmt_execute()")
   end
   -- One constructor with every field: the table is made at its size
   -- once, not grown key by key (an execution's result is the hot path).
   local con = self.connection
   local rs = setmetatable({ nrows = nrows, nfields = nfields, serial = serial, row_at = 0, connection = con,
                             binary_rows = nfields > 0 and self.raw or nil }, result_mt)
   con.current_rs = nfields > 0 and rs or nil
   return rs
end

function statement_methods.close(self)
   self.raw:close()
   return 0
end

function param_methods.set(self, value)
   if value == nil then
      self.value = nil
      return
   end
   if self.type == sql.type.VARCHAR then
      value = tostring(value)
      if #value > self.max_len then
         value = value:sub(1, self.max_len)
      end
   elseif type(value) ~= "number" then
      local n = tonumber(value)
      if n == nil then
         error("set(): a number is expected for this parameter, got " .. type(value), 2)
      end
      value = n
   end
   self.value = value
end

function param_methods.set_rand_str(self, fmt)
   if self.type ~= sql.type.VARCHAR then
      error("Unsupported argument type: " .. tostring(self.type), 2)
   end
   local value = wb.rand_string(fmt)
   if #value > self.max_len then
      value = value:sub(1, self.max_len)
   end
   self.value = value
end

function result_methods.fetch_row(self)
   if self.rows == nil and self.binary_rows == nil then
      return nil
   end
   self.row_at = self.row_at + 1
   if self.binary_rows ~= nil then
      return self.binary_rows:row(self.serial, self.row_at)
   end
   return self.rows[self.row_at]
end

function result_methods.free(self)
   if self.connection == nil or self.connection.current_rs ~= self then
      wb.write_err("ALERT: attempt to free an invalid result set\n")
      error("db_free_results() failed", 2)
   end
   self.connection.current_rs = nil
   self.rows = nil
   self.binary_rows = nil
   return true
end

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
-- One event, as sysbench's thread_run() runs it: event() again from the
-- start after an ignored error; true when event() asks to stop.
-- ----------------------------------------------------------------------
function wb.run_event(thread_id)
   local success, ret
   repeat
      success, ret = pcall(event, thread_id)
      if not success then
         if type(ret) == "table" and ret.errcode == sysbench.error.RESTART_EVENT then
            if sysbench.hooks.before_restart_event then
               sysbench.hooks.before_restart_event(ret)
            end
         else
            error(ret, 0)
         end
      end
   until success
   return ret and true or false
end

-- A state's events on a loop: one coroutine, which yields the connection
-- a SQL call waits on (answer_of) and, after each event, whether event()
-- asked to stop. While it runs, wb.events_co is that coroutine.
function wb.events_coroutine(thread_id)
   local co = coroutine.create(function()
      while true do
         yield(wb.run_event(thread_id))
      end
   end)
   wb.events_co = co
   return co
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
   if db_con.current_rs == rs then
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
   if rs.rs ~= nil and con.current_rs == rs.rs then
      rs.rs:free()
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

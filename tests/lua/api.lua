-- Exercises sysbench 1.0.20's Lua API against a real server; every check is
-- an assert, whose failure fails the command (tests/mariadb/lua_mariadb.rs).

sysbench.cmdline.options = {
   rows = {"rows in the table", 10},
}

local function connect()
   local drv = sysbench.sql.driver()
   assert(drv:name() == "mysql")
   return drv:connect()
end

function prepare()
   local con = connect()
   con:query("DROP TABLE IF EXISTS t_api")
   con:query("CREATE TABLE t_api (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(32), d DOUBLE)")
   con:bulk_insert_init("INSERT INTO t_api (id, k, c, d) VALUES")
   for i = 1, sysbench.opt.rows do
      con:bulk_insert_next(string.format("(%d, %d, '%s', %d.5)", i, i * 10, "c" .. i, i))
   end
   con:bulk_insert_done()
   print(string.format("api.lua: %d rows in t_api", con:query_row("SELECT COUNT(*) FROM t_api")))
end

function cleanup()
   connect():query("DROP TABLE IF EXISTS t_api")
end

local function check()
   local con = connect()
   assert(sysbench.version == "1.0.20", sysbench.version)
   assert(sysbench.tid == 0 and sysbench.opt.threads == 1)
   -- query_row: the first row's values, as strings; nil for no row.
   local n, k = con:query_row("SELECT COUNT(*), SUM(k) FROM t_api")
   assert(n == tostring(sysbench.opt.rows), n)
   assert(con:query_row("SELECT id FROM t_api WHERE id < 0") == nil)
   -- Result sets: nrows, nfields, fetch_row, NULL as nil.
   local rs = con:query("SELECT id, c, NULL FROM t_api WHERE id <= 3 ORDER BY id")
   assert(rs.nrows == 3 and rs.nfields == 3, rs.nrows)
   local row = rs:fetch_row()
   assert(row[1] == "1" and row[2] == "c1" and row[3] == nil)
   assert(rs:fetch_row()[1] == "2" and rs:fetch_row()[1] == "3" and rs:fetch_row() == nil)
   -- A statement without rows gives a result without rows (where
   -- sysbench's db_query gives a NULL pointer a script must not read).
   rs = con:query("UPDATE t_api SET k = k WHERE id = 1")
   assert(rs.nrows == 0 and rs.nfields == 0)
   assert(rs:fetch_row() == nil)
   -- Prepared statements: every bind type, NULL, strings cut to max_len.
   local stmt = con:prepare("INSERT INTO t_api (id, k, c, d) VALUES (?, ?, ?, ?)")
   local t = sysbench.sql.type
   local p = { stmt:bind_create(t.INT), stmt:bind_create(t.BIGINT),
               stmt:bind_create(t.VARCHAR, 4), stmt:bind_create(t.DOUBLE) }
   stmt:bind_param(unpack(p))
   p[1]:set(1000); p[2]:set(7); p[3]:set("abcdefgh"); p[4]:set(2.25)
   assert(stmt:execute().nrows == 1)
   p[1]:set(1001); p[2]:set(8); p[3]:set(nil); p[4]:set(nil)
   stmt:execute()
   p[1]:set(1002); p[3]:set_rand_str("@@##")
   stmt:execute()
   -- Values patched into the execution laid out before, then a string of
   -- another length, which needs another layout.
   p[1]:set(1003); p[2]:set(9); p[3]:set("wxyz"); p[4]:set(1.5)
   stmt:execute()
   p[1]:set(1004); p[2]:set(10); p[3]:set("q"); p[4]:set(0.5)
   stmt:execute()
   stmt:close()
   local k3, c3, d3 = con:query_row("SELECT k, c, d FROM t_api WHERE id = 1003")
   assert(k3 == "9" and c3 == "wxyz" and tonumber(d3) == 1.5, tostring(k3) .. " " .. tostring(c3))
   local k4, c4, d4 = con:query_row("SELECT k, c, d FROM t_api WHERE id = 1004")
   assert(k4 == "10" and c4 == "q" and tonumber(d4) == 0.5, tostring(k4) .. " " .. tostring(c4))
   local c, d = con:query_row("SELECT c, d FROM t_api WHERE id = 1000")
   assert(c == "abcd" and tonumber(d) == 2.25, tostring(c) .. " " .. tostring(d))
   assert(con:query_row("SELECT c FROM t_api WHERE id = 1001") == nil)
   assert(con:query_row("SELECT c FROM t_api WHERE id = 1002"):match("^%l%l%d%d$"))
   con:query("DELETE FROM t_api WHERE id >= 1000")
   -- A prepared statement's result set: its rows through fetch_row, as text.
   local sel = con:prepare("SELECT id, c, d, NULL FROM t_api WHERE id <= ? ORDER BY id")
   local upto = sel:bind_create(t.INT)
   sel:bind_param(upto)
   upto:set(2)
   rs = sel:execute()
   assert(rs.nrows == 2 and rs.nfields == 4, rs.nrows .. " " .. rs.nfields)
   row = rs:fetch_row()
   assert(row[1] == "1" and row[2] == "c1" and row[3] == "1.5" and row[4] == nil, tostring(row[3]))
   assert(rs:fetch_row()[1] == "2" and rs:fetch_row() == nil)
   -- A connection keeps only its latest result, as sysbench's (con->rs):
   -- an older result's rows are the newer one's; freed, it has none.
   upto:set(1)
   local older = sel:execute()
   con:query("SELECT 42")
   assert(older:fetch_row()[1] == "42")
   older:free()
   local ok, err = pcall(older.free, older)
   assert(not ok and tostring(err):find("db_free_results%(%) failed"), tostring(err))
   sel:close()
   -- Errors: a fatal one raises the server's message; the hook makes one
   -- restart the event (an error table), as sysbench's check_error.
   ok, err = pcall(con.query, con, "SELECT * FROM no_such_table_here")
   assert(not ok and err:find("SQL error, errno = 1146, state = '42S02'"), err)
   sysbench.hooks.sql_error_ignorable = function(e) return e.sql_errno == 1146 end
   ok, err = pcall(con.query, con, "SELECT * FROM no_such_table_here")
   assert(type(err) == "table" and err.errcode == sysbench.error.RESTART_EVENT and err.sql_errno == 1146)
   sysbench.hooks.sql_error_ignorable = nil
   -- rand: ranges and strings.
   for _ = 1, 100 do
      local v = sysbench.rand.uniform(5, 9)
      assert(v >= 5 and v <= 9)
      v = sysbench.rand.default(1, 3)
      assert(v >= 1 and v <= 3)
      for _, f in ipairs({"gaussian", "special", "pareto"}) do
         v = sysbench.rand[f](10, 20)
         assert(v >= 10 and v <= 20, f)
      end
      v = sysbench.rand.uniform_double()
      assert(v >= 0 and v < 1)
   end
   assert(sysbench.rand.unique() ~= sysbench.rand.unique())
   assert(sysbench.rand.string("ab-##-@@"):match("^ab%-%d%d%-%l%l$"))
   con:disconnect()
   print("check: ok")
end

local function per_thread()
   print("per_thread " .. sysbench.tid)
end

sysbench.cmdline.commands = {
   check = {check},
   per_thread = {per_thread, sysbench.cmdline.PARALLEL_COMMAND},
}

local calls = 0
local restarts = 0
local duplicates = 0
local latencies

function thread_init(tid)
   con = connect()
   select_k = con:prepare("SELECT k FROM t_api WHERE id = ?")
   id = select_k:bind_create(sysbench.sql.type.INT)
   select_k:bind_param(id)
   latencies = sysbench.histogram.new(100, 1, 1000)
end

function sysbench.hooks.before_restart_event(err)
   assert(err.sql_errno == 1062, err.sql_errno)
   restarts = restarts + 1
end

function event(tid)
   calls = calls + 1
   if calls % 10 == 0 then
      duplicates = duplicates + 1
      con:query("INSERT INTO t_api (id, k) VALUES (1, 0)") -- a duplicate, ignored
   end
   local row = sysbench.rand.uniform(1, sysbench.opt.rows)
   id:set(row)
   assert(select_k:execute().nrows == 1)
   con:query("UPDATE t_api SET k = k + 1 WHERE id = " .. row)
   latencies:update(calls)
end

function thread_done(tid)
   select_k:close()
   -- How the events divide between the threads varies from run to run.
   assert(restarts == duplicates, "restarts: " .. restarts .. ", duplicates: " .. duplicates)
   print("restarts " .. restarts)
   -- Each thread its own: an empty one prints nothing (sysbench's
   -- sb_histogram_print), and a thread may have run no event.
   latencies:print()
   con:disconnect()
end

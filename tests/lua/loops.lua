-- tests/mariadb/lua_loops.rs: states whose queries each wait --wait seconds on
-- the server, so that a loop thread only gets through them quickly by
-- running the states' coroutines side by side; with --wait=0, events that
-- never wait, which must still take turns.

sysbench.cmdline.options = {
   wait = {"seconds each event's query waits on the server; 0: no query", 0.01},
   big = {"bytes of a string literal each event's query carries instead; 0: none", 0},
}

local events = 0

function thread_init()
   con = sysbench.sql.driver():connect()
end

function event()
   events = events + 1
   if sysbench.opt.big > 0 then
      local n = tonumber(con:query_row("SELECT LENGTH('" .. string.rep("x", sysbench.opt.big) .. "')"))
      assert(n == sysbench.opt.big, "the server got " .. tostring(n) .. " bytes")
   elseif sysbench.opt.wait > 0 then
      con:query(string.format("SELECT SLEEP(%g)", sysbench.opt.wait))
   end
end

function thread_done()
   print(string.format("thread_done %d events %d", sysbench.tid, events))
   con:disconnect()
end

-- Fails where --fail says, to check how the error is named.
sysbench.cmdline.options = {
   fail = {"where to fail: thread_init, event or sql", "none"},
}

function thread_init()
   if sysbench.opt.fail == "thread_init" then
      error("thread_init fails on purpose")
   end
   con = sysbench.sql.driver():connect()
end

function event()
   if sysbench.opt.fail == "event" then
      local t = nil
      return t.field
   elseif sysbench.opt.fail == "sql" then
      con:query("SELECT * FROM no_such_table_here")
   end
end

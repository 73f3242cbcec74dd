-- sysbench.hooks.report_intermediate and report_cumulative replace the
-- reports, called with sysbench 1.0.20's stat table (tests/mariadb/lua_mariadb.rs).
-- Each event: one SELECT (a read) and one DO (an other).

local fields = { "threads_running", "time_interval", "time_total", "latency_pct",
                 "events", "reads", "writes", "other", "errors", "reconnects" }

local function line(name, stat, extra)
   local parts = { name }
   for _, f in ipairs(fields) do
      assert(type(stat[f]) == "number", name .. ": " .. f .. " is " .. type(stat[f]))
   end
   for _, f in ipairs(extra) do
      assert(type(stat[f]) == "number", name .. ": " .. f .. " is " .. type(stat[f]))
   end
   for _, f in ipairs({ "threads_running", "events", "reads", "writes", "other", "errors", "reconnects" }) do
      parts[#parts + 1] = f .. "=" .. stat[f]
   end
   print(table.concat(parts, " "))
end

function sysbench.hooks.report_intermediate(stat)
   assert(stat.time_interval > 0 and stat.time_total > 0 and stat.latency_pct > 0)
   line("intermediate", stat, { "queue_length", "concurrency" })
end

function sysbench.hooks.report_cumulative(stat)
   if stat.events > 0 then
      assert(stat.latency_min > 0 and stat.latency_min <= stat.latency_avg)
      assert(stat.latency_avg <= stat.latency_max and stat.latency_max <= stat.latency_sum)
      assert(stat.latency_pct >= stat.latency_min and stat.latency_pct < 1)
   end
   assert(stat.time_interval > 0 and stat.time_total > 0)
   line("cumulative", stat, { "latency_min", "latency_max", "latency_avg", "latency_sum" })
end

function thread_init()
   con = sysbench.sql.driver():connect()
end

function event()
   con:query("SELECT 1")
   con:query("DO 1")
end

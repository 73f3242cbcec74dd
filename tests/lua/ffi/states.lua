-- Every place a script's code runs in wirebench, each calling sysbench's
-- C functions through ffi.C: each must reach its own state's generator
-- and counters (tests/sysbench/lua_ffi.rs looks for each line, and for no ALERT).

local C = ffi.C
ffi.cdef[[
void sb_counter_inc(int, sb_counter_type);
uint64_t sb_counter_val(int, sb_counter_type);
int usleep(unsigned int);
]]

local function drew(where)
   local n = C.sb_rand_uniform(1, 1000000000)
   C.sb_counter_inc(sysbench.tid, C.SB_CNT_OTHER)
   local other = C.sb_counter_val(sysbench.tid, C.SB_CNT_OTHER)
   print(string.format("%s drew %s, other %s", where, tostring(n > 0), tostring(other > 0)))
end

drew("top level " .. sysbench.tid)

sysbench.cmdline.options = { x = {"an option", 1} }

local function command()
   drew("command " .. sysbench.tid)
end

sysbench.cmdline.commands = {
   draw = { command },
   pdraw = { command, sysbench.cmdline.PARALLEL_COMMAND },
}

function prepare() drew("prepare") end
function help() drew("help") end
function init() drew("init") end
function done() drew("done") end
function thread_init() drew("thread_init " .. sysbench.tid) end
function thread_done() drew("thread_done " .. sysbench.tid) end

local reported = false

function event()
   if not reported then
      drew("event " .. sysbench.tid)
      reported = true
   end
   C.usleep(20000)
end

function sysbench.hooks.report_intermediate(stat)
   drew("report_intermediate")
end

function sysbench.hooks.report_cumulative(stat)
   drew("report_cumulative")
end

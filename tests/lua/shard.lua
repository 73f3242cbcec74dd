-- tests/mariadb/lua_shards.rs: each event records its thread's numbers and a
-- sysbench.rand.unique() value; the unique key refuses a value drawn twice.
sysbench.cmdline.options = { note = { "a script option (part of the run's identity)", "x" } }

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("DROP TABLE IF EXISTS shard_lua")
   con:query("CREATE TABLE shard_lua (tid INT NOT NULL, arg INT NOT NULL, init_arg INT NOT NULL, u BIGINT UNSIGNED PRIMARY KEY)")
end

function cleanup()
   sysbench.sql.driver():connect():query("DROP TABLE IF EXISTS shard_lua")
end

function thread_init(thread_id)
   init_arg = thread_id
   con = sysbench.sql.driver():connect()
end

function event(thread_id)
   -- Another --note is another run, merged with none of this one's.
   if sysbench.opt.note ~= "x" then
      return
   end
   con:query(string.format("INSERT INTO shard_lua VALUES (%d, %d, %d, %d)", sysbench.tid, thread_id, init_arg,
      sysbench.rand.unique()))
end

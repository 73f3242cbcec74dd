-- Run by tests/sysbench/lua_ffi.rs under sysbench 1.0.20 only: writes the source
-- of the internal Lua modules its binary embeds (data symbols it exports),
-- in the order its sb_lua.c loads them, each after a "-- module" line.
local modules = {
   "sysbench_rand_lua", "sysbench_lua", "sysbench_compat_lua",
   "sysbench_cmdline_lua", "sysbench_sql_lua", "sysbench_histogram_lua",
}
for _, name in ipairs(modules) do
   ffi.cdef(string.format("extern const unsigned char %s[]; extern const size_t %s_len;", name, name))
   io.write("-- module ", name, "\n", ffi.string(ffi.C[name], ffi.C[name .. "_len"]), "\n")
end

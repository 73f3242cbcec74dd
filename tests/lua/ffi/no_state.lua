-- A finalizer that draws from the generator when the state closes: the
-- closing state's generator serves it, as under sysbench. (Written with
-- io.stdout:write: print is a Rust function, which a closing state no
-- longer calls.)
local C = ffi.C
keep = ffi.gc(ffi.new("char[1]"), function()
   io.stdout:write("finalizer drew " .. C.sb_rand_uniform(5, 5) .. "\n")
end)
print("loaded")

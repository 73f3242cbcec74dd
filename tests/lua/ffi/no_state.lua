-- A finalizer that draws from the generator when the state closes, with
-- no script state running: wirebench says so, and goes on. (Written with
-- io.stdout:write: print is a Rust function, which a closing state no
-- longer calls.)
local C = ffi.C
keep = ffi.gc(ffi.new("char[1]"), function()
   io.stdout:write("finalizer drew " .. C.sb_rand_uniform(5, 5) .. "\n")
end)
print("loaded")

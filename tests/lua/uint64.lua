-- sysbench.rand.uniform_uint64() is a uint64_t cdata, exact above 2^53,
-- and sb_rnd() keeps its low 32 bits (tests/mariadb/lua_mariadb.rs).
function event()
  for i = 1, 3 do print(sysbench.rand.uniform_uint64()) end
  print(sb_rnd(), type(sysbench.rand.uniform_uint64()))
end

-- sysbench 1.0.20 tests/include/api_sql_common.sh (tests/t/api_sql_mysql.t), as written there.
function event()
  local drv = sysbench.sql.driver()
  local e,m = pcall(drv.connect, drv)
  print(m)
end

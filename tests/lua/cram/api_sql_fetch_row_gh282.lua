-- sysbench 1.0.20 tests/include/api_sql_common.sh (tests/t/api_sql_mysql.t), as written there.
connection = sysbench.sql.driver():connect()
rows = connection:query("select 1 union select 2")

r = rows:fetch_row();
while ( r ) do
  print( r[ 1 ] )
  r = rows:fetch_row()
end

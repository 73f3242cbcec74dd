-- sysbench 1.0.20 tests/include/api_sql_common.sh (tests/t/api_sql_mysql.t), as written there.
c = sysbench.sql.driver():connect()
c:query("CREATE TABLE t1(a INT)")
print(c:query_row("SELECT * FROM t1"))
c:query("DROP TABLE t1")

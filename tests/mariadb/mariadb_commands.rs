//! Commands against the real MariaDB: COM_QUERY, prepared statements, every
//! column type through both protocols, large and multiple result sets.

use crate::common;

use common::{affected, expect_local_infile_refused, expect_results_past_16_mib, raw_rows, rows, s, TestServer};
use wirebench::client::{ClientError, Connection};
use wirebench_protocol::command::{ExecuteTemplate, Param, ParamSlot};
use wirebench_protocol::response::QueryResult;
use wirebench_protocol::ProtocolError;

async fn connect(server: &TestServer, deprecate_eof: bool) -> Connection {
    let mut options = server.options(server.tcp());
    options.deprecate_eof = deprecate_eof;
    Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"))
}

/// The only result set's rows, each value as the text protocol's bytes (NULL as None).

#[tokio::test]
async fn query_and_prepared_dml_with_results_checked() {
    let Some(server) = TestServer::find() else { return };
    for deprecate_eof in [true, false] {
        let mut conn = connect(&server, deprecate_eof).await;
        let table = format!("wb_dml_{}", u8::from(deprecate_eof));
        conn.query(&format!("DROP TABLE IF EXISTS {table}")).await.unwrap();
        conn.query(&format!(
            "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL DEFAULT '')"
        ))
        .await
        .unwrap();

        let insert = conn.prepare(&format!("INSERT INTO {table} (id, k, c) VALUES (?, ?, ?)")).await.unwrap();
        assert_eq!(insert.params.len(), 3);
        for id in 1..=5i32 {
            let c = format!("row-{id}");
            let params = [Param::I32(id), Param::I64(i64::from(id) * 10), Param::Bytes(c.as_bytes())];
            assert_eq!(affected(&conn.execute(&insert, &params).await.unwrap()), 1);
        }

        let select =
            conn.prepare(&format!("SELECT c, k FROM {table} WHERE id BETWEEN ? AND ? ORDER BY id")).await.unwrap();
        assert_eq!((select.params.len(), select.columns.len()), (2, 2));
        let r = conn.execute(&select, &[Param::I32(2), Param::I32(3)]).await.unwrap();
        assert_eq!(rows(&r), vec![vec![s("row-2"), s("20")], vec![s("row-3"), s("30")]]);

        let update = conn.prepare(&format!("UPDATE {table} SET k=k+1 WHERE id=?")).await.unwrap();
        assert_eq!(affected(&conn.execute(&update, &[Param::I32(4)]).await.unwrap()), 1);
        assert_eq!(affected(&conn.execute(&update, &[Param::I32(99)]).await.unwrap()), 0);

        let delete = conn.prepare(&format!("DELETE FROM {table} WHERE id=?")).await.unwrap();
        assert_eq!(affected(&conn.execute(&delete, &[Param::I32(5)]).await.unwrap()), 1);

        let r = conn.query(&format!("SELECT id, k, c FROM {table} ORDER BY id")).await.unwrap();
        assert_eq!(
            rows(&r),
            vec![
                vec![s("1"), s("10"), s("row-1")],
                vec![s("2"), s("20"), s("row-2")],
                vec![s("3"), s("30"), s("row-3")],
                vec![s("4"), s("41"), s("row-4")],
            ]
        );

        // The hot path: a pre-encoded packet patched in place, walked without decoding.
        let point = conn.prepare(&format!("SELECT c FROM {table} WHERE id=?")).await.unwrap();
        let mut template = ExecuteTemplate::new(point.statement_id(), &[ParamSlot::Int32]).unwrap();
        for (id, want_rows) in [(1, 1), (3, 1), (42, 0)] {
            template.set_i32(0, id).unwrap();
            let outcome = conn.execute_template(&template).await.unwrap();
            assert_eq!((outcome.result_sets, outcome.rows), (1, want_rows), "id {id}");
        }
        for statement in [insert, select, update, delete, point] {
            conn.close_statement(statement.statement_id()).await.unwrap();
        }
        conn.ping().await.unwrap();
        conn.query(&format!("DROP TABLE {table}")).await.unwrap();
        conn.quit().await.unwrap();
    }
}

#[tokio::test]
async fn server_errors_keep_the_connection_usable() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, true).await;
    let err = conn.query("SELECT * FROM wb_no_such_table").await.unwrap_err();
    let e = err.server_error().unwrap_or_else(|| panic!("{err}"));
    assert_eq!((e.code, e.sql_state_str()), (1146, Some("42S02")));
    assert!(err.to_string().contains("ERROR 1146 (42S02): Table 'sbtest.wb_no_such_table' doesn't exist"), "{err}");
    let err = conn.prepare("SELEC 1").await.unwrap_err();
    assert_eq!(err.server_error().map(|e| e.code), Some(1064), "{err}");
    let err = conn.init_db("wb_no_such_db").await.unwrap_err();
    assert!(matches!(err.server_error().map(|e| e.code), Some(1044 | 1049)), "{err}");
    // Same through the allocation-free reader.
    let stmt = conn.prepare("SELECT 1/0 + ?").await.unwrap();
    conn.query("SET SESSION sql_mode='ERROR_FOR_DIVISION_BY_ZERO,STRICT_ALL_TABLES'").await.unwrap();
    let template = ExecuteTemplate::new(stmt.statement_id(), &[ParamSlot::Int32]).unwrap();
    let outcome = conn.execute_template(&template).await.unwrap();
    assert_eq!(outcome.rows, 1);
    assert_eq!(rows(&conn.query("SELECT 1").await.unwrap()), vec![vec![s("1")]]);
    conn.init_db("sbtest").await.unwrap();
}

#[tokio::test]
async fn every_column_type_binary_equals_text() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, true).await;
    conn.query("DROP TABLE IF EXISTS wb_types").await.unwrap();
    conn.query(
        "CREATE TABLE wb_types (
            id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
            mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
            f FLOAT, d DOUBLE, de DECIMAL(20,6), dt DATE, tm TIME, tm6 TIME(6), dtm DATETIME, dtm6 DATETIME(6),
            ts TIMESTAMP NULL, y YEAR, ch CHAR(10), vc VARCHAR(100), bn BINARY(4), vb VARBINARY(10), bl BLOB,
            tx TEXT, en ENUM('a','b'), st SET('x','y'), bt BIT(12), js JSON)",
    )
    .await
    .unwrap();
    conn.query(
        "INSERT INTO wb_types VALUES
         (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
          -9223372036854775808, 18446744073709551615, 1.5, -2.25e-10, '-12345678901234.123456',
          '2024-02-29', '-838:59:59', '12:34:56.789012', '1999-12-31 23:59:59', '2000-01-01 00:00:00.000001',
          '2038-01-19 03:14:07', 2155, 'char', 'varchar', 'ab', x'00ff', x'deadbeef', 'text', 'b', 'x,y', b'101010101010',
          '{\"a\": [1, 2]}'),
         (2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, -0.5, 1e300, '0.000001',
          '0000-00-00', '00:00:00', '100:00:00.5', '0000-00-00 00:00:00', '2024-06-30 12:00:00.5',
          NULL, 1901, '', '', x'00000000', x'', x'', '', 'a', '', b'0', 'null'),
         (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    )
    .await
    .unwrap();
    let text = conn.query("SELECT * FROM wb_types ORDER BY id").await.unwrap();
    let stmt = conn.prepare("SELECT * FROM wb_types WHERE id >= ? ORDER BY id").await.unwrap();
    let binary = conn.execute(&stmt, &[Param::I32(1)]).await.unwrap();
    let (text_rows, binary_rows) = (raw_rows(&text), raw_rows(&binary));
    assert_eq!(text_rows.len(), 3);
    let columns = &text.result_sets().next().unwrap().columns;
    for (r, (t, b)) in text_rows.iter().zip(&binary_rows).enumerate() {
        for (i, col) in columns.iter().enumerate() {
            assert_eq!(t[i], b[i], "row {r} column {}", String::from_utf8_lossy(&col.name));
        }
    }
    assert_eq!(text_rows[0][10].as_deref(), Some(&b"18446744073709551615"[..]));
    assert_eq!(text_rows[0][24].as_deref(), Some(&b"\x00\xff"[..]));
    assert_eq!(text_rows[0][16].as_deref(), Some(&b"12:34:56.789012"[..]));
    assert_eq!(text_rows[2][1], None);
    conn.query("DROP TABLE wb_types").await.unwrap();
}

#[tokio::test]
async fn result_set_larger_than_16_mib() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, true).await;
    expect_results_past_16_mib(&mut conn).await;
}

#[tokio::test]
async fn multi_statement_results() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, true).await;
    let r = conn.query("SELECT 1 AS a; DO 0; SELECT 'two', NULL; SELECT 3 FROM DUAL WHERE 0").await.unwrap();
    let shapes: Vec<_> = r
        .results
        .iter()
        .map(|q| match q {
            QueryResult::Ok(_) => "ok".to_string(),
            QueryResult::ResultSet(rs) => format!("{} rows", rs.rows.len()),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(shapes, ["1 rows", "ok", "1 rows", "0 rows"]);
    let walked = conn.query_drop("SELECT 1; SELECT 2 UNION SELECT 3; DO 0").await.unwrap();
    assert_eq!((walked.result_sets, walked.rows), (2, 3));
    // An error in the middle ends the response and reaches the caller.
    let err = conn.query("SELECT 1; SELECT * FROM wb_no_such_table; SELECT 2").await.unwrap_err();
    assert_eq!(err.server_error().map(|e| e.code), Some(1146), "{err}");
    assert_eq!(rows(&conn.query("SELECT 'still in sync'").await.unwrap()), vec![vec![s("still in sync")]]);
}

#[tokio::test]
async fn local_infile_is_refused_and_the_connection_survives() {
    let Some(server) = TestServer::find() else { return };
    let mut conn = connect(&server, true).await;
    // The server may refuse on its own (local_infile off) or ask for the file.
    expect_local_infile_refused(&mut conn, "wb_infile").await;
}

/// LOAD DATA LOCAL INFILE from memory: the rows arrive whatever the packet
/// size; a request for any other file than the statement's is still
/// refused, with the connection in step; without CLIENT_LOCAL_FILES the
/// client does not try.
#[tokio::test]
async fn load_data_local_streams_rows_from_memory() {
    let Some(server) = TestServer::find() else { return };
    let mut options = server.options(server.socket());
    options.local_infile = true;
    let mut conn = Connection::connect(&options).await.unwrap_or_else(|e| panic!("{e}"));
    let local_infile = rows(&conn.query("SELECT @@local_infile").await.unwrap());
    if local_infile != vec![vec![s("1")]] {
        common::unavailable("the server has local_infile off (MariaDB's default is on: something turned it off)");
        return;
    }
    conn.query("DROP TABLE IF EXISTS wb_load_mem").await.unwrap();
    conn.query("CREATE TABLE wb_load_mem (id INT PRIMARY KEY, c CHAR(20))").await.unwrap();
    let data: String = (1..=1000).map(|i| format!("{i}\t{i:0>5}-x\n")).collect();
    let sql = "LOAD DATA LOCAL INFILE 'memory:wb_load_mem' INTO TABLE wb_load_mem (id, c)";
    for max_payload in [7, 1 << 20] {
        conn.query("TRUNCATE TABLE wb_load_mem").await.unwrap();
        let response = conn.load_data_local(sql, "memory:wb_load_mem", data.as_bytes(), max_payload).await.unwrap();
        assert_eq!(affected(&response), 1000, "packets of {max_payload}");
        let check = "SELECT COUNT(*), SUM(id), MIN(c), MAX(c) FROM wb_load_mem";
        assert_eq!(
            rows(&conn.query(check).await.unwrap()),
            vec![vec![s("1000"), s("500500"), s("00001-x"), s("01000-x")]]
        );
    }
    let other = "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE wb_load_mem (id, c)";
    match conn.load_data_local(other, "memory:wb_load_mem", data.as_bytes(), 1 << 20).await {
        Err(ClientError::Protocol { source: ProtocolError::LocalInfileRefused(file), .. }) => {
            assert_eq!(file, "/etc/passwd")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Plain queries keep refusing every request, on this connection too.
    expect_local_infile_refused(&mut conn, "wb_infile_local_files").await;
    conn.query("DROP TABLE wb_load_mem").await.unwrap();

    let mut plain = connect(&server, true).await;
    let err = plain.load_data_local(sql, "memory:wb_load_mem", b"", 1024).await.unwrap_err();
    assert!(matches!(err, ClientError::Usage { .. }), "{err}");
}

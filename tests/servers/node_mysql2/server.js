'use strict';
// A MySQL-protocol server built on node-mysql2's server API (mysql.createServer(),
// as the package's examples build one), for wirebench's interop tests
// (tests/interop_servers.rs). It answers what a login and sysbench's
// oltp_point_select --db-ps-mode=disable need: SET and other statements get OK,
// `SELECT c FROM sbtest<N> WHERE id=<id>` gets one row, `SELECT 1`-like
// probes get one row. Its answers carry node-mysql2's sequence ids, which
// continue from the connection's own counter instead of restarting at each
// command: the deviation the tests exist for.
//
// Usage: node server.js PORT   (prints "listening PORT" once it accepts)
const mysql = require('mysql2');

const port = Number(process.argv[2] || 0);
let nextId = 1;
let queries = 0;

// node-mysql2 logs "got packets out of order" on stderr for every command
// (its server expects its own counter in the client's command too); one line
// per query would slow the server down, so it says it once.
const consoleError = console.error;
let outOfOrderSaid = false;
console.error = (...args) => {
  if (String(args[0]).includes('got packets out of order')) {
    if (outOfOrderSaid) return;
    outOfOrderSaid = true;
  }
  consoleError(...args);
};

function cValue(id) {
  // sysbench's c is 119 characters of digit groups; any 120-byte text will do.
  const s = String(id).padStart(11, '0');
  return (s + '-').repeat(10).slice(0, 119);
}

const server = mysql.createServer();
server.on('connection', (conn) => {
  conn.serverHandshake({
    protocolVersion: 10,
    serverVersion: '5.7.99-node-mysql2',
    connectionId: nextId++,
    statusFlags: 2,
    characterSet: 8,
    capabilityFlags: 0xffffff,
  });
  const ok = () => conn.writeOk();
  conn.on('stmt_prepare', ok); // node-mysql2 routes SET ... here
  conn.on('init_db', ok);
  conn.on('query', (sql) => {
    queries += 1;
    const m = /^\s*SELECT\s+c\s+FROM\s+(\w+)\s+WHERE\s+id\s*=\s*(\d+)\s*$/i.exec(sql);
    if (m) {
      conn.writeTextResult([{ c: cValue(Number(m[2])) }], [
        { catalog: 'def', schema: 'sbtest', table: m[1], orgTable: m[1],
          name: 'c', orgName: 'c', characterSet: 8, columnLength: 120,
          columnType: 254, flags: 1, decimals: 0 },
      ]);
    } else if (/^\s*SELECT\b/i.test(sql)) {
      conn.writeTextResult([{ v: '1' }], [
        { catalog: 'def', schema: '', table: '', orgTable: '', name: 'v',
          orgName: '', characterSet: 8, columnLength: 1, columnType: 8,
          flags: 129, decimals: 0 },
      ]);
    } else {
      ok();
    }
  });
  conn.on('error', () => {});
});
server.listen(port, '127.0.0.1', () => {
  console.log(`listening ${server._server.address().port}`);
});
process.on('SIGTERM', () => {
  consoleError(`queries ${queries}`);
  process.exit(0);
});

#!/usr/bin/env python3
"""Captures raw MariaDB response bytes (packet headers included) for the
golden tests in protocol/src/response/.

Run against a throwaway server on a unix socket, root with an empty
mysql_native_password password, with the schema in capture.sql loaded:

    python3 capture.py /tmp/resp-mariadb/sock OUTDIR

Each output file holds the bytes the server sent in answer to one command,
exactly as read from the socket. A response is taken as complete when the
server stays silent for a moment: good enough for captures, never for a client.
"""
import socket
import struct
import sys
import time

LONG_FLAG = 1 << 2
CONNECT_WITH_DB = 1 << 3
LOCAL_FILES = 1 << 7
PROTOCOL_41 = 1 << 9
TRANSACTIONS = 1 << 13
SECURE_CONNECTION = 1 << 15
MULTI_STATEMENTS = 1 << 16
MULTI_RESULTS = 1 << 17
PS_MULTI_RESULTS = 1 << 18
PLUGIN_AUTH = 1 << 19
DEPRECATE_EOF = 1 << 24
# MariaDB extended capabilities, sent in the last 4 bytes of the filler.
MARIADB_EXTENDED_TYPE_INFO = 1 << 3
MARIADB_CACHE_METADATA = 1 << 4

BASE = (LONG_FLAG | CONNECT_WITH_DB | LOCAL_FILES | PROTOCOL_41 | TRANSACTIONS | SECURE_CONNECTION
        | MULTI_STATEMENTS | MULTI_RESULTS | PS_MULTI_RESULTS | PLUGIN_AUTH)


class Conn:
    def __init__(self, path, caps, ext_caps, db):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        greeting = self.read_idle()
        assert greeting[4] == 10, greeting[:8]
        payload = struct.pack('<IIB', caps, 1 << 24, 45) + b'\0' * 19 + struct.pack('<I', ext_caps)
        payload += b'root\0' + b'\0' + db + b'\0' + b'mysql_native_password\0'
        self.s.sendall(struct.pack('<I', len(payload))[:3] + b'\x01' + payload)
        ok = self.read_idle()
        assert ok[4] == 0, ok

    def read_idle(self, idle=0.3):
        data = b''
        self.s.settimeout(idle)
        while True:
            try:
                chunk = self.s.recv(1 << 20)
            except socket.timeout:
                if data:
                    return data
                continue
            if not chunk:
                return data
            data += chunk

    def command(self, payload, seq=0):
        self.s.sendall(struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload)
        return self.read_idle()


def execute_payload(stmt_id, params):
    """COM_STMT_EXECUTE with LONG (int32) parameters, types sent."""
    p = b'\x17' + struct.pack('<IBI', stmt_id, 0, 1)
    if params:
        p += b'\0' * ((len(params) + 7) // 8) + b'\x01'
        p += b''.join(b'\x03\x00' for _ in params)
        p += b''.join(struct.pack('<i', v) for v in params)
    return p


def main():
    sock, out = sys.argv[1], sys.argv[2]

    def save(name, data):
        with open(f'{out}/{name}.bin', 'wb') as f:
            f.write(data)
        print(f'{name}: {len(data)} bytes')

    variants = {
        'eof': (BASE, 0),
        'deof': (BASE | DEPRECATE_EOF, 0),
        'ext': (BASE | DEPRECATE_EOF, MARIADB_EXTENDED_TYPE_INFO | MARIADB_CACHE_METADATA),
    }
    for tag, (caps, ext) in variants.items():
        c = Conn(sock, caps, ext, b'sbtest')
        prep = c.command(b'\x16SELECT c FROM sbtest1 WHERE id=?')
        save(f'prepare_point_select_{tag}', prep)
        stmt = struct.unpack('<I', prep[5:9])[0]
        save(f'exec_point_select_{tag}', c.command(execute_payload(stmt, [1])))
        save(f'exec_point_select_again_{tag}', c.command(execute_payload(stmt, [1])))
        # A miss: no row at all.
        save(f'exec_point_select_miss_{tag}', c.command(execute_payload(stmt, [0])))

        save(f'text_alltypes_{tag}', c.command(b'\x03SELECT * FROM wb.alltypes ORDER BY id'))
        prep = c.command(b'\x16SELECT * FROM wb.alltypes ORDER BY id')
        save(f'prepare_alltypes_{tag}', prep)
        stmt = struct.unpack('<I', prep[5:9])[0]
        save(f'exec_alltypes_{tag}', c.command(execute_payload(stmt, [])))
        save(f'exec_alltypes_again_{tag}', c.command(execute_payload(stmt, [])))

        save(f'text_empty_{tag}', c.command(b'\x03SELECT id, c FROM wb.alltypes WHERE id = 0'))
        save(f'text_multi_{tag}', c.command(
            b"\x03SELECT 1 AS a; INSERT INTO wb.ai VALUES (NULL), (NULL); SELECT 'x' AS b, NULL AS c"))
        save(f'text_call_{tag}', c.command(b'\x03CALL wb.p()'))
        prep = c.command(b'\x16CALL wb.p()')
        stmt = struct.unpack('<I', prep[5:9])[0]
        save(f'exec_call_{tag}', c.command(execute_payload(stmt, [])))
        save(f'text_update_{tag}', c.command(b'\x03UPDATE wb.alltypes SET ti = ti WHERE id = 1'))
        save(f'text_error_{tag}', c.command(b'\x03SELECT * FROM wb.nope'))
        save(f'prepare_error_{tag}', c.command(b'\x16SELEC 1'))
        # The server asks for the file; answer with an empty packet (no file) and drop what follows.
        save(f'text_local_infile_{tag}',
             c.command(b"\x03LOAD DATA LOCAL INFILE '/tmp/wb-none.csv' INTO TABLE wb.ai"))
        c.s.sendall(b'\x00\x00\x00\x02')
        c.read_idle()
        prep = c.command(b'\x16SELECT CONCAT(?, ?) AS col1')
        save(f'prepare_concat_{tag}', prep)
        c.s.close()


if __name__ == '__main__':
    main()

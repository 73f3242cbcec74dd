#!/usr/bin/env python3
"""Writes the checked-in seed corpus, fuzz/corpus/<target>/seed-*.

The bytes are real: MariaDB 10.11 captures from protocol/src/response/testdata
and the greetings, OK and ERR packets of the protocol crate's golden tests,
behind the parameter bytes each target reads first (see fuzz_targets/).

    python3 fuzz/seeds.py        # from the repository root or from fuzz/
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, '..', 'protocol', 'src', 'response', 'testdata')
COMPRESS_TESTDATA = os.path.join(HERE, '..', 'protocol', 'src', 'compress', 'testdata')
CORPUS = os.path.join(HERE, 'corpus')


def hexbytes(s):
    return bytes.fromhex(''.join(s.split()))


# protocol/src/handshake/packets.rs test_support: greetings, headers included (seq 0).
MARIADB_GREETING = hexbytes("""
    64000000 0a 352e352e352d31302e31312e31392d4d6172696144422d302b64656231327531 00
    04000000 297431334d674253 00 fef7 08 0200 ff81 15 000000000000 1d000000
    5b505c604e43457024613e4e00 6d7973716c5f6e61746976655f70617373776f726400""")
MYSQL8_GREETING = hexbytes("""
    4a000000 0a 382e302e333200 d8010000 7571731458073040 00 ffff ff 0200 ffdf 15
    00000000000000000000 2841384f5745210e22157738 00 63616368696e675f736861325f70617373776f726400""")
# fuzz/src/lib.rs TEST_PUBLIC_KEY, and the same key in PKCS#1 form.
PEM_SPKI = b"""-----BEGIN PUBLIC KEY-----
MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQChtlTRBg8Z+RvebisH/IYXCCI1
2RZbQzhpUBBVBtqrbIVnQjqm2q0QlUjz0wrolKjk5hF/gjWbnmkqMYeatMiIfCyc
SQs7wdTMvqgbmxPtVXmtQYH5EatQc+kz08WbfmBiGOyHqXmquhH1vReklCFiCeDs
uK/ebH4NgAaP0ghiDwIDAQAB
-----END PUBLIC KEY-----
"""
PEM_PKCS1 = b"""-----BEGIN RSA PUBLIC KEY-----
MIGJAoGBAKG2VNEGDxn5G95uKwf8hhcIIjXZFltDOGlQEFUG2qtshWdCOqbarRCV
SPPTCuiUqOTmEX+CNZueaSoxh5q0yIh8LJxJCzvB1My+qBubE+1Vea1BgfkRq1Bz
6TPTxZt+YGIY7Iepeaq6EfW9F6SUIWIJ4Oy4r95sfg2ABo/SCGIPAgMBAAE=
-----END RSA PUBLIC KEY-----
"""

OK_AUTOCOMMIT = bytes([0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])
OK_UPDATE_INFO = bytes([0x00, 0x01, 0xFC, 0x10, 0x27, 0x03, 0x00, 0x02, 0x00]) + \
    b"Rows matched: 1  Changed: 1  Warnings: 0"
OK_MARIADB_INFO = bytes([0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x28]) + \
    b"Rows matched: 1  Changed: 0  Warnings: 0"
OK_SESSION_TRACK = bytes([0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 0x03, 0x01, 0x01, ord('x')])
OK_DEOF_END = bytes([0xFE, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00])
EOF = bytes([0xFE, 0x00, 0x00, 0x02, 0x00])
ERR_DOC = b"\xff\x48\x04#HY000No tables used"
ERR_NO_STATE = b"\xff\x10\x04Too many connections"
ERR_DENIED = b"\xff\x15\x04#28000Access denied for user 'sbtest'@'localhost' (using password: YES)"

# fuzz/src/lib.rs caps_from_bits: one bit per capability.
P41, TRX, TRACK, DEOF, EXT_TYPE, CACHE_META, WITH_DB, MULTI = (1 << i for i in range(8))
CAPS_BITS = {'eof': P41 | TRX | WITH_DB | MULTI, 'deof': P41 | TRX | WITH_DB | MULTI | DEOF,
             'ext': P41 | TRX | WITH_DB | MULTI | DEOF | EXT_TYPE | CACHE_META}
# fuzz/src/lib.rs CAPABILITY_SETS: the captures' sets are 0, 1, 2.
CAPS_INDEX = {'eof': 0, 'deof': 1, 'ext': 2}
TEXT_FORMAT = 8

# fuzz/src/lib.rs COLUMN_TYPES: every type byte a server sends, in byte order.
COLUMN_TYPES = list(range(0x00, 0x15)) + [0xF2] + list(range(0xF5, 0x100))


def packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def packets(data):
    """The payloads of a capture (no fragments in these small captures)."""
    out, pos = [], 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos:pos + 3], 'little')
        out.append(data[pos + 4:pos + 4 + n])
        pos += 4 + n
    return out


def capture(name):
    with open(os.path.join(TESTDATA, name + '.bin'), 'rb') as f:
        return f.read()


def lenenc(data, pos):
    b = data[pos]
    if b < 0xFB:
        return b, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}[b]
    return int.from_bytes(data[pos + 1:pos + 1 + size], 'little'), pos + 1 + size


def column_fields(payload, ext):
    """(type byte, flags, decimals, length) of a column definition payload."""
    pos = 0
    for _ in range(6 + (1 if ext else 0)):
        n, pos = lenenc(payload, pos)
        pos += n
    pos += 1  # 0x0C
    length = int.from_bytes(payload[pos + 2:pos + 6], 'little')
    ty = payload[pos + 6]
    flags = int.from_bytes(payload[pos + 7:pos + 9], 'little')
    return ty, flags, payload[pos + 9], length


def result_set(name, ext):
    """Column definitions and rows of a single-result-set capture."""
    ps = packets(capture(name))
    count = ps[0][0]
    columns = ps[1:1 + count]
    rest = ps[1 + count:]
    if not name.endswith('deof') and not name.endswith('ext'):
        rest = rest[1:]  # the EOF after the columns
    rows = [p for p in rest if p[:1] not in (b'\xfe', b'\xff')]
    return columns, rows


def u16(v):
    return struct.pack('<H', v)


def seeds():
    s = {t: [] for t in ('framing', 'handshake', 'ok_err_eof', 'column_definition', 'text_row', 'binary_row',
                         'prepare_ok', 'auth', 'login', 'response_reader', 'compressed')}

    # framing: seq, limit (u16; 0xFFFF = none), then bytes.
    s['framing'] += [bytes([1]) + u16(0xFFFF) + capture('exec_point_select_deof'),
                     bytes([0]) + u16(1024) + MARIADB_GREETING,
                     bytes([1]) + u16(64) + packet(1, ERR_DOC),
                     bytes([255]) + u16(0xFFFF) + packet(255, b'') + packet(0, b'\x0e')]

    # handshake: one payload.
    s['handshake'] += [MARIADB_GREETING[4:], MYSQL8_GREETING[4:], ERR_NO_STATE,
                       b'\xfemysql_native_password\x00' + b'abcdefghij0123456789\x00',
                       b'\xfeclient_ed25519\x00' + bytes(range(32)),
                       b'\x01\x04', b'\x01' + PEM_SPKI]

    # ok_err_eof: capability bits, then one payload.
    for bits, payload in [(P41 | TRX, OK_AUTOCOMMIT), (P41 | TRX, OK_UPDATE_INFO), (P41 | TRX, OK_MARIADB_INFO),
                          (P41 | TRX | TRACK, OK_SESSION_TRACK), (P41 | TRX | DEOF, OK_DEOF_END), (P41, EOF),
                          (TRX, OK_AUTOCOMMIT), (0, ERR_DOC), (P41, ERR_NO_STATE)]:
        s['ok_err_eof'].append(bytes([bits]) + payload)

    # column_definition: capability bits, then one column definition payload.
    cols, _ = result_set('exec_point_select_deof', False)
    s['column_definition'].append(bytes([CAPS_BITS['deof']]) + cols[0])
    ext_cols = packets(capture('prepare_alltypes_ext'))[1:]
    for i in (0, 11, 14, 28):  # INT, FLOAT, DATE, JSON (with an extended format name)
        s['column_definition'].append(bytes([CAPS_BITS['ext']]) + ext_cols[i])

    # text_row: column count, then one row payload.
    cols, rows = result_set('text_alltypes_deof', False)
    for row in rows:
        s['text_row'].append(bytes([len(cols)]) + row)
    cols, rows = result_set('text_multi_deof', False)
    s['text_row'] += [bytes([len(cols)]) + row for row in rows]

    # binary_row: column count, 4 bytes per column, then one row payload.
    for name in ('exec_alltypes_deof', 'exec_point_select_deof'):
        cols, rows = result_set(name, False)
        spec = bytes([len(cols)])
        for c in cols:
            ty, flags, decimals, length = column_fields(c, False)
            spec += bytes([COLUMN_TYPES.index(ty), (1 if flags & 0x20 else 0) | (2 if flags & 0x40 else 0),
                           decimals, min(length, 255)])
        s['binary_row'] += [spec + row for row in rows]

    # prepare_ok: capability bits, then the response bytes.
    for what in ('point_select', 'alltypes', 'concat', 'error'):
        for tag in ('eof', 'deof', 'ext'):
            s['prepare_ok'].append(bytes([CAPS_BITS[tag]]) + capture(f'prepare_{what}_{tag}'))

    # auth: config bits, two split points, then the server's bytes.
    # Config bits: 1 empty password, 2 secure transport, 4/8 TLS preferred/required,
    # 16 known server key, 32 DEPRECATE_EOF, 64 database, 128 connect attributes.
    def auth(config, server, cuts=(16, 120)):
        s['auth'].append(bytes([config]) + u16(cuts[0]) + u16(cuts[1]) + server)
    switch_sha256 = b'\xfesha256_password\x00' + b'abcdefghij0123456789\x00'
    switch_ed25519 = b'\xfeclient_ed25519\x00' + bytes(range(32))
    auth(32 | 64 | 128, MARIADB_GREETING + packet(2, OK_AUTOCOMMIT))
    auth(32, MYSQL8_GREETING + packet(2, b'\x01\x03') + packet(3, OK_AUTOCOMMIT))
    auth(32, MYSQL8_GREETING + packet(2, b'\x01\x04') + packet(4, b'\x01' + PEM_SPKI) + packet(6, OK_AUTOCOMMIT))
    auth(16, MYSQL8_GREETING + packet(2, b'\x01\x04') + packet(4, OK_AUTOCOMMIT))
    auth(8, MYSQL8_GREETING + packet(3, b'\x01\x04') + packet(5, OK_AUTOCOMMIT))
    auth(0, MARIADB_GREETING + packet(2, switch_ed25519) + packet(4, OK_AUTOCOMMIT))
    auth(0, MARIADB_GREETING + packet(2, switch_sha256) + packet(4, b'\x01' + PEM_PKCS1) + packet(6, OK_AUTOCOMMIT))
    auth(64, MARIADB_GREETING + packet(2, ERR_DENIED))
    auth(0, packet(0, ERR_NO_STATE))
    auth(0, PEM_SPKI)

    # login: two config bytes, then the server's payloads, each behind a u16 length (the target frames them).
    # First byte: 1 empty password, 2 secure transport, 4/8 TLS preferred/required, 16 get the server's key,
    # 32 known server key, 64 DEPRECATE_EOF, 128 database. Second byte: 1 connect attributes, 2 COMPRESS,
    # 4 MariaDB extended metadata, 8 SESSION_TRACK, bits 4-5 the max packet size (1: 80 bytes).
    def login(a, b, payloads, after=b''):
        s['login'].append(bytes([a, b]) + b''.join(u16(len(p)) + p for p in payloads) + after)
    mariadb, mysql8 = MARIADB_GREETING[4:], MYSQL8_GREETING[4:]
    assert mariadb.count(b'\xfe\xf7') == 1
    mariadb_ssl = mariadb.replace(b'\xfe\xf7', b'\xfe\xff')
    switch_sha2 = b'\xfecaching_sha2_password\x00' + b'abcdefghij0123456789\x00'
    switch_clear = b'\xfemysql_clear_password\x00'
    with open(os.path.join(COMPRESS_TESTDATA, 'execute_resp.bin'), 'rb') as f:
        compressed_answer = f.read()
    login(64 | 128, 1, [mariadb, OK_AUTOCOMMIT])
    login(64, 0, [mysql8, b'\x01\x03', OK_AUTOCOMMIT])
    login(64 | 16, 0, [mysql8, b'\x01\x04', b'\x01' + PEM_SPKI, OK_AUTOCOMMIT])
    login(32, 0, [mysql8, b'\x01\x04', OK_AUTOCOMMIT])
    login(8, 0, [mysql8, b'\x01\x04', OK_AUTOCOMMIT])
    login(4, 2, [mariadb_ssl, OK_AUTOCOMMIT])
    login(0, 0, [mariadb, switch_ed25519, OK_AUTOCOMMIT])
    login(16, 0, [mariadb, switch_sha256, b'\x01' + PEM_PKCS1, OK_AUTOCOMMIT])
    login(0, 0, [mariadb, switch_sha2, b'\x01\x03', OK_AUTOCOMMIT])
    login(2, 0, [mariadb, switch_clear, OK_AUTOCOMMIT])
    login(128, 0, [mariadb, ERR_DENIED])
    login(0, 0, [ERR_NO_STATE])
    login(64, 2 | 4, [mariadb, OK_AUTOCOMMIT], after=compressed_answer)
    login(64, 8, [mysql8, b'\x01\x03', OK_SESSION_TRACK])
    login(0, 1 << 4, [mariadb])

    # response_reader: capability set and row format, two split points, then the response.
    for name in sorted(os.listdir(TESTDATA)):
        if not name.endswith('.bin') or name.startswith('prepare_'):
            continue
        stem = name[:-4]
        tag = stem.rsplit('_', 1)[1]
        params = CAPS_INDEX[tag] | (TEXT_FORMAT if stem.startswith('text_') else 0)
        s['response_reader'].append(bytes([params]) + u16(7) + u16(100) + capture(stem))

    # compressed: bit 0 = a command was sent (answers start at id 1), two split points, then the wire bytes
    # (sysbench's commands and MariaDB's answers with --mysql-compression=on).
    for name in sorted(os.listdir(COMPRESS_TESTDATA)):
        if not name.endswith('.bin') or name.endswith('.plain.bin'):
            continue
        answer = name.endswith('_resp.bin')
        with open(os.path.join(COMPRESS_TESTDATA, name), 'rb') as f:
            s['compressed'].append(bytes([1 if answer else 0]) + u16(5) + u16(60) + f.read())
    return s


def main():
    for target, inputs in seeds().items():
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        for old in os.listdir(d):
            if old.startswith('seed-'):
                os.remove(os.path.join(d, old))
        for i, data in enumerate(inputs):
            with open(os.path.join(d, f'seed-{i:02}'), 'wb') as f:
                f.write(data)
        print(f'{target}: {len(inputs)} seeds')


if __name__ == '__main__':
    main()

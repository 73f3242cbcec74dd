#!/usr/bin/env python3
"""Extracts the compressed-protocol golden bytes in this directory from
strace logs of sysbench 1.0.20 (libmysqlclient: MariaDB Connector/C) talking
to MariaDB 10.11.19 with --mysql-compression=on, on 127.0.0.1:3407:

    A="--mysql-host=127.0.0.1 --mysql-port=3407 --mysql-user=sbtest --mysql-password=sbtest
       --mysql-db=sbtest_wl --tables=1 --mysql-compression=on --threads=1 --rand-seed=1"
    strace -f -e trace=sendto,recvfrom -xx -s 1000000 -o ps.trace \\
        sysbench oltp_point_select $A --table-size=100 --events=3 run
    A="$A --table-size=1000"
    strace -f -e trace=sendto,recvfrom -xx -s 1000000 -o rw.trace \\
        sysbench oltp_read_write $A --events=1 run
    strace -f -e trace=sendto,recvfrom -xx -s 1000000 -o big.trace \\
        sysbench oltp_read_only $A --events=1 --point-selects=0 --sum-ranges=0 \\
        --order-ranges=0 --distinct-ranges=0 --range-size=300 --skip-trx=on run

    python3 extract.py ps.trace rw.trace big.trace

Each NAME.bin holds the bytes of one direction of one exchange, exactly as
sent or received (compressed headers included); NAME.plain.bin holds the
packet stream they carry, inflated here by Python's zlib (an implementation
independent of the one under test). The exchanges (0-based, counting
direction changes; the first three are the uncompressed login):

    ps.trace   3  COM_STMT_PREPARE "SELECT c FROM sbtest1 WHERE id=?"  -> prepare_cmd
               4  its answer, one compressed packet (89 -> 114 bytes)     -> prepare_resp
               5  COM_STMT_EXECUTE, 26 bytes, under MIN_COMPRESS_LENGTH   -> execute_cmd
               6  its answer, one row (108 -> 150 bytes)                  -> execute_resp
    rw.trace  57  COM_STMT_EXECUTE of 148 bytes that deflate did not shrink, sent as is -> execute_stored_cmd
              61  COM_STMT_EXECUTE (INSERT) of 220 bytes, deflated to 142  -> insert_cmd
    big.trace 14  300 binary rows: three compressed packets (seq 1, 2, 3) of
                  16384, 16384 and 5056 bytes, rows spanning their borders   -> range_resp
"""
import re
import sys
import zlib

CALL = re.compile(r'^\d+\s+(sendto|recvfrom)\(\d+, "((?:\\x[0-9a-f]{2})*)".*\) = (\d+)')


def exchanges(path):
    runs = []
    for line in open(path):
        m = CALL.match(line)
        if not m:
            continue
        call, data, ret = m.groups()
        chunk = bytes.fromhex(data.replace('\\x', ''))[:int(ret)]
        direction = 'client' if call == 'sendto' else 'server'
        if runs and runs[-1][0] == direction:
            runs[-1][1].extend(chunk)
        else:
            runs.append((direction, bytearray(chunk)))
    return [bytes(b) for _, b in runs]


def inflate(wire):
    plain, pos = bytearray(), 0
    while pos < len(wire):
        clen = int.from_bytes(wire[pos:pos + 3], 'little')
        ulen = int.from_bytes(wire[pos + 4:pos + 7], 'little')
        body = wire[pos + 7:pos + 7 + clen]
        assert len(body) == clen
        plain += zlib.decompress(body) if ulen else body
        pos += 7 + clen
    return bytes(plain)


def main(ps, rw, big):
    picks = [(ps, 3, 'prepare_cmd'), (ps, 4, 'prepare_resp'), (ps, 5, 'execute_cmd'), (ps, 6, 'execute_resp'),
             (rw, 57, 'execute_stored_cmd'), (rw, 61, 'insert_cmd'), (big, 14, 'range_resp')]
    for path, index, name in picks:
        wire = exchanges(path)[index]
        open(name + '.bin', 'wb').write(wire)
        open(name + '.plain.bin', 'wb').write(inflate(wire))


if __name__ == '__main__':
    main(*sys.argv[1:4])

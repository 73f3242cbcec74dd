#!/usr/bin/env python3
"""Decode an `strace -f -xx -s 1000000 -e trace=sendto,recvfrom` log of sysbench
into one line per command sent after login:
  Q\t<sql>                      COM_QUERY
  E\t<sql>\t<param>\t...          COM_STMT_EXECUTE (i:<int>, s:<str> or NULL; BIGINT and INT alike)
SQL newlines are written as \\n."""
import re, sys, struct, hashlib

def unhex(s):
    return bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', s))

events = []  # (kind, pid, bytes)
pat = re.compile(r'^(\d+)\s+(sendto|recvfrom)\(\d+, "((?:\\x[0-9a-f]{2})*)"(\.\.\.)?, \d+, .*\) = (\d+)')
for line in open(sys.argv[1]):
    m = pat.match(line)
    if not m:
        continue
    if m.group(4):
        sys.exit("truncated: raise -s")
    events.append((m.group(2), m.group(1), unhex(m.group(3))))

def esc(b):
    return b.decode().replace('\\', '\\\\').replace('\n', '\\n')

stmts = {}     # id -> (sql, nparams)
types = {}     # id -> [type bytes]
pending_prepare = None
out = []
mode = sys.argv[2] if len(sys.argv) > 2 else 'full'
first = True
sendbuf = b''
for kind, pid, data in events:
    if kind == 'recvfrom':
        if pending_prepare is not None and data[4] == 0:
            sid, ncols, nparams = struct.unpack('<IHH', data[5:13])
            stmts[sid] = (pending_prepare, nparams)
        pending_prepare = None
        continue
    # the stream, split into packets
    sendbuf += data
    while len(sendbuf) >= 4:
        ln = int.from_bytes(sendbuf[0:3], 'little')
        if len(sendbuf) < 4 + ln:
            break
        seq = sendbuf[3]
        payload = sendbuf[4:4+ln]
        sendbuf = sendbuf[4+ln:]
        if seq != 0:
            continue  # login
        cmd = payload[0]
        if cmd == 0x03:
            sql = payload[1:]
            if mode == 'hash':
                out.append('H\t%d\t%s\t%s' % (len(sql), hashlib.sha1(sql).hexdigest(), esc(sql[:60])))
            else:
                out.append('Q\t' + esc(sql))
        elif cmd == 0x16:
            pending_prepare = payload[1:]
        elif cmd == 0x17:
            sid = struct.unpack('<I', payload[1:5])[0]
            sql, n = stmts[sid]
            p = 10
            params = []
            if n:
                nulls = payload[p:p + (n + 7) // 8]
                p += (n + 7) // 8
                bound = payload[p]; p += 1
                if bound:
                    types[sid] = [payload[p + 2*i] for i in range(n)]
                    p += 2 * n
                for i, t in enumerate(types[sid]):
                    if nulls[i // 8] & (1 << (i % 8)):
                        params.append('NULL')
                    elif t == 0x08:
                        params.append('i:%d' % struct.unpack('<q', payload[p:p+8])[0]); p += 8
                    elif t == 0x03:
                        params.append('i:%d' % struct.unpack('<i', payload[p:p+4])[0]); p += 4
                    elif t in (0xfd, 0xfe, 0x0f):
                        l = payload[p]; assert l < 251; p += 1
                        params.append('s:' + payload[p:p+l].decode()); p += l
                    else:
                        sys.exit('type %x' % t)
            out.append('\t'.join(['E', esc(sql)] + params))
for l in out:
    print(l)

#!/usr/bin/env python3
"""The recording proxy's own cost (docs/record.md, "What it costs"):
`wirebench oltp_point_select --threads=16` against the test MariaDB,
direct and through `wirebench record`, alternating. Prints per run the
qps, the average latency, and CPU microseconds per query of the client,
the proxy and the server; then the medians' ratios, proxied/direct.

Usage: benches/record_cost.py [--time=10] [--rounds=3] [--threads=16]
(the test MariaDB running: scripts/mariadb.sh start; a release build).
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

import benchlib  # beside this file
from benchlib import load_average, mariadb_env, measured, proc_cpu_seconds, queries_of, server_pid_mariadb


class Recorder:
    """A `wirebench record` in front of the test MariaDB, on a free port."""

    def __init__(self, upstream, out):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = [benchlib.BUILT, "record", f"--listen=127.0.0.1:{self.port}", f"--upstream={upstream}", f"--out={out}"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        if "listening on" not in line:
            raise RuntimeError(f"record did not start: {line}{self.proc.stderr.read()}")

    def stop(self):
        """Ends the recording with SIGINT; returns what record wrote."""
        self.proc.send_signal(signal.SIGINT)
        wrote, said = self.proc.communicate(timeout=30)
        if self.proc.returncode != 0:
            raise RuntimeError(f"record failed ({self.proc.returncode}): {said}")
        return wrote


def one(args, server_pid, through):
    """One run, direct (`through` None) or through a Recorder."""
    port = through.port if through else args.port
    cmd = [benchlib.BUILT, "oltp_point_select", "--mysql-host=127.0.0.1", f"--mysql-port={port}"] + args.login
    cmd += [f"--threads={args.threads}", f"--time={args.time}", "run"]
    proxy_before = proc_cpu_seconds(through.proc.pid) if through else 0.0
    server_before = proc_cpu_seconds(server_pid)
    out, _, client_s, _, _ = measured(cmd)
    server_s = proc_cpu_seconds(server_pid) - server_before
    proxy_s = proc_cpu_seconds(through.proc.pid) - proxy_before if through else 0.0
    queries, qps = queries_of(out)
    avg = float(re.search(r"^\s+avg:\s+([\d.]+)", out, re.M).group(1))
    per_query = lambda seconds: seconds / queries * 1e6
    return {"qps": qps, "avg_ms": avg, "client": per_query(client_s), "proxy": per_query(proxy_s),
            "server": per_query(server_s)}


def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=16)
    args = ap.parse_args()
    env = mariadb_env()
    args.port = int(env["WIREBENCH_TEST_PORT"])
    args.login = ["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest", "--tables=4", "--table-size=10000"]
    tcp = ["--mysql-host=127.0.0.1", f"--mysql-port={args.port}"]
    subprocess.run([benchlib.BUILT, "oltp_point_select"] + tcp + args.login + ["cleanup"], check=True, capture_output=True)
    subprocess.run([benchlib.BUILT, "oltp_point_select"] + tcp + args.login + ["prepare"], check=True, capture_output=True)
    server_pid = server_pid_mariadb()
    print(f"oltp_point_select --threads={args.threads}, {args.time} s a run, {args.rounds} rounds, direct and through record")
    print("| run     |     qps | avg ms | client us/q | proxy us/q | server us/q |")
    runs = {"direct": [], "record": []}
    with tempfile.TemporaryDirectory(prefix="wb-record-cost-") as scratch:
        for round_ in range(args.rounds):
            runs["direct"].append(one(args, server_pid, None))
            recorder = Recorder(f"127.0.0.1:{args.port}", os.path.join(scratch, f"round{round_}.wbc"))
            try:
                runs["record"].append(one(args, server_pid, recorder))
            finally:
                wrote = recorder.stop()
            for name in ("direct", "record"):
                r = runs[name][-1]
                print(f"| {name:<7} | {r['qps']:>7.0f} | {r['avg_ms']:>6.2f} | {r['client']:>11.1f} "
                      f"| {r['proxy']:>10.1f} | {r['server']:>11.1f} |", flush=True)
            print("  " + " ".join(wrote.split()), flush=True)
    med = {name: {k: median([r[k] for r in rs]) for k in rs[0]} for name, rs in runs.items()}
    d, p = med["direct"], med["record"]
    print(f"medians, record/direct: qps {p['qps'] / d['qps']:.2f}x; avg latency {p['avg_ms'] / d['avg_ms']:.2f}x "
          f"(+{(p['avg_ms'] - d['avg_ms']) * 1000:.0f} us); client+proxy CPU per query "
          f"{(p['client'] + p['proxy']) / d['client']:.2f}x ({d['client']:.1f} -> {p['client']:.1f} + {p['proxy']:.1f} us); "
          f"server CPU per query {p['server'] / d['server']:.2f}x (load average {load_average()})")


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        print(f"record_cost: {e}", file=sys.stderr)
        sys.exit(1)

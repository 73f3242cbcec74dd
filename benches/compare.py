#!/usr/bin/env python3
"""Side-by-side benchmark: sysbench 1.0.20 and wirebench, alternating, same
server, same test and options. Prints qps, client CPU per query, server CPU
per query, and the wirebench/sysbench ratios.

Cases (see docs/benchmarking.md):
  a  MariaDB (the rig from scripts/mariadb.sh), oltp_point_select,
     16 connections, TCP and unix socket, nothing pinned;
  b  the null server pinned to one core, the generator to the other,
     16 and 256 connections, TCP and socket; at 16 TCP connections it
     says whether wirebench's client CPU per query is within its target
     (at most 0.40x sysbench's, issue 15 point 3);
  c  as b with --pipeline=8 for wirebench (sysbench cannot pipeline);
  d  10,000 connections against the null server: connect time and RSS;
  e  (not in the default set) as a, but MariaDB pinned to core 1 and the
     client to core 0, as when they run on separate hosts: the client can
     no longer hand the server's core back to it by preempting its thread;
     wirebench at its defaults; each round's ratio is printed too;
  k  (not in the default set) co-located parity: MariaDB and both tools
     sharing the host's cores, nothing pinned, oltp_point_select over TCP
     at 1, 8, 16 and 64 connections and the unix socket at 16; per case
     the median of --rounds alternating pairs' ratios (qps, client CPU per
     query) against the targets (qps >= 1.0x, client CPU <= 0.65x,
     issue 42 point 2);
  l  client-added latency: the null server with --delay-us=200 pinned to
     core 1, the client to core 0, 1, 16 and 256 connections; the average
     and 99th percentile each tool measured, minus the 200 us delay;
  s  (not in the default set) sysbench's Lua scripts through wirebench's
     Lua engine (--lua) beside sysbench, and Percona-Lab/sysbench-tpcc,
     with issue 22's targets (benches/lua_compare.py, which also runs
     alone: its cases s1, s2, t and m, and t2 on request);
  p  (not in the default set) oltp_read_write prepare, 8x100k and 2x1M,
     8 threads, on MariaDB's socket: wall time and server CPU, each
     round's and the medians' ratios, the target (<= 0.6x) PASS or FAIL
     (benches/prepare.py, which also runs alone).

Usage: benches/compare.sh [--cases=a,b,c,d,e,k,l,p,s] [--time=10] [--rounds=2] [--wirebench=PATH]

--wirebench measures another build as the client (an older one, for a
before/after comparison of a change) in place of target/release/wirebench;
the null server is always target/release/wirebench.
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
from benchlib import (load_average, mariadb_env, measured, pin_process, proc_cpu_seconds, queries_of,
                      server_pid_mariadb, unpin_process)

# Case e's target: wirebench's qps at defaults against sysbench's (issue 15).
E_TARGET = 1.15


class NullServer:
    def __init__(self, cpu, extra=()):
        self.dir = tempfile.mkdtemp(prefix="wb-null-")
        self.socket = os.path.join(self.dir, "null.sock")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        # taskset too: every thread of it on that core, so that a client's
        # --poll=auto sees the core as the server's alone.
        cmd = ["taskset", "-c", str(cpu), benchlib.BUILT, "null-server", f"--listen=127.0.0.1:{self.port}",
               f"--socket={self.socket}", f"--cpus={cpu}"] + list(extra)
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.socket):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the null server did not start: " + (self.proc.stderr.read() if self.proc.poll() is not None else "timeout"))
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def one(tool, test_args, server_pid, cpu, extra):
    exe = ["sysbench"] if tool == "sysbench" else [benchlib.WIREBENCH]
    cmd = exe + ["oltp_point_select"] + test_args + (extra if tool == "wirebench" else []) + ["run"]
    s_before = proc_cpu_seconds(server_pid)
    out, err, cpu_s, rss, wall = measured(cmd, cpu)
    s_after = proc_cpu_seconds(server_pid)
    queries, qps = queries_of(out)
    return {
        "qps": qps,
        "client_us": cpu_s / queries * 1e6,
        "server_us": (s_after - s_before) / queries * 1e6,
    }


def compare(label, test_args, server_pid, rounds, cpu=None, wb_extra=(), each_round=False):
    results = {"sysbench": [], "wirebench": []}
    for _ in range(rounds):
        for tool in ("sysbench", "wirebench"):
            results[tool].append(one(tool, test_args, server_pid, cpu, list(wb_extra)))
    if each_round:
        ratios = [w["qps"] / s["qps"] for s, w in zip(results["sysbench"], results["wirebench"])]
        verdict = "pass" if median(ratios) >= E_TARGET else "FAIL"
        print(f"  {label}: qps ratio per round " + ", ".join(f"{r:.2f}x" for r in ratios)
              + f", median {median(ratios):.2f}x, target {E_TARGET}x: {verdict} (load average {load_average()})")
    best = {t: max(r, key=lambda x: x["qps"]) for t, r in results.items()}
    s, w = best["sysbench"], best["wirebench"]
    print(
        f"| {label:<34} | {s['qps']:>9.0f} | {w['qps']:>9.0f} | {w['qps'] / s['qps']:>5.2f}x "
        f"| {s['client_us']:>6.2f} | {w['client_us']:>6.2f} | {w['client_us'] / s['client_us']:>5.2f}x "
        f"| {s['server_us']:>6.2f} | {w['server_us']:>6.2f} |",
        flush=True,
    )
    return w["client_us"] / s["client_us"]


# Case b at 16 TCP connections: wirebench's client CPU per query against
# sysbench's (issue 15 point 3).
TCP16_CPU_TARGET = 0.40


def target_line(cpu_ratio):
    """The verdict on case b at 16 TCP connections, printed below the table."""
    verdict = "met" if cpu_ratio <= TCP16_CPU_TARGET else "NOT met"
    return (f"b target: client CPU per query at most {TCP16_CPU_TARGET:.2f}x sysbench's at 16 TCP connections: "
            f"{cpu_ratio:.2f}x, {verdict} (load average {load_average()})")


# Case k's targets: wirebench against sysbench on MariaDB's host.
K_QPS_TARGET = 1.0
K_CPU_TARGET = 0.65


def colocated_parity(cases, server_pid, rounds):
    """Case k: each case's pairs alternate (sysbench, then wirebench); the
    medians of the pairs' ratios, since the machine's speed drifts between
    pairs more than within one."""
    print(f"\nk co-located parity, median of {rounds} alternating pairs (target qps >= {K_QPS_TARGET}x, "
          f"client CPU per query <= {K_CPU_TARGET}x):")
    missed = []
    for label, test_args in cases:
        pairs = [(one("sysbench", test_args, server_pid, None, []), one("wirebench", test_args, server_pid, None, []))
                 for _ in range(rounds)]
        qps = median([w["qps"] / s["qps"] for s, w in pairs])
        cpu = median([w["client_us"] / s["client_us"] for s, w in pairs])
        held = qps >= K_QPS_TARGET and cpu <= K_CPU_TARGET
        if not held:
            missed.append(label)
        detail = ", ".join(f"{s['qps']:.0f}/{w['qps']:.0f}" for s, w in pairs)
        print(f"  {label:<16} qps {qps:.2f}x, client CPU per query {cpu:.2f}x: {'pass' if held else 'MISSED'} "
              f"(qps sysbench/wirebench per pair: {detail}; load average {load_average()})", flush=True)
    print(f"  k target: {'pass' if not missed else 'missed at ' + ', '.join(missed)}")


def latency_of(out):
    """avg and 99th percentile (ms) from sysbench's latency block, which
    both tools print alike."""
    avg = re.search(r"^\s+avg:\s+([\d.]+)", out, re.M)
    p99 = re.search(r"^\s+99th percentile:\s+([\d.]+)", out, re.M)
    if not (avg and p99):
        raise RuntimeError("no avg/99th percentile in the report:\n" + out)
    return float(avg.group(1)), float(p99.group(1))


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def latency_verdict(rows):
    """Case l's target for one line: wirebench's added avg and p99, the
    medians of the rounds, each at most sysbench's."""
    sb = [median([r[0][k] for r in rows]) for k in (0, 1)]
    wb = [median([r[1][k] for r in rows]) for k in (0, 1)]
    ok = wb[0] <= sb[0] and wb[1] <= sb[1]
    return ok, f"medians avg {sb[0]:.0f} / {wb[0]:.0f}, p99 {sb[1]:.0f} / {wb[1]:.0f}: {'pass' if ok else 'FAIL'}"


def client_added_latency(null, delay_us, rounds, seconds):
    """Case l: what each tool measures above the server's fixed delay."""
    login = ["--mysql-user=x", "--mysql-password=y", "--mysql-db=sbtest", "--tables=1", "--table-size=10000"]
    endpoints = (("tcp", ["--mysql-host=127.0.0.1", f"--mysql-port={null.port}"]), ("socket", [f"--mysql-socket={null.socket}"]))
    print(f"\nl client-added latency: null server --delay-us={delay_us} on core 1, client on core 0, {seconds}s runs;")
    print("  avg and p99 in us, minus the delay; sysbench / wirebench; per round, then the medians and the target")
    print("  (wirebench's at most sysbench's, avg and p99)")
    failed = []
    for name, endpoint in endpoints:
        for conns in (1, 16, 256):
            args = ["oltp_point_select"] + endpoint + login + [f"--time={seconds}", "--percentile=99", f"--threads={conns}", "run"]
            rows = []
            for _ in range(rounds):
                row = []
                for exe in (["sysbench"], [benchlib.WIREBENCH]):
                    out = measured(exe + args, cpu=0)[0]
                    avg, p99 = latency_of(out)
                    row.append((avg * 1000 - delay_us, p99 * 1000 - delay_us))
                rows.append(row)
            text = "; ".join(f"avg {s[0]:.0f} / {w[0]:.0f}, p99 {s[1]:.0f} / {w[1]:.0f}" for s, w in rows)
            ok, verdict = latency_verdict(rows)
            if not ok:
                failed.append(f"{name} {conns}")
            print(f"  {name} {conns:>3} conns: {text}; {verdict} (load average {load_average()})", flush=True)
    print(f"  l target: {'pass' if not failed else 'FAIL at ' + ', '.join(failed)}")


HEADER = (
    "| case                               | sb qps    | wb qps    | ratio  | sb cli | wb cli | ratio  | sb srv | wb srv |\n"
    "|------------------------------------|-----------|-----------|--------|--------|--------|--------|--------|--------|"
)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="a,b,c,d")
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--table-size", type=int, default=100000)
    ap.add_argument("--wirebench", default=benchlib.BUILT, help="the wirebench binary to measure as the client")
    args = ap.parse_args()
    benchlib.WIREBENCH = os.path.abspath(args.wirebench)
    if not os.access(benchlib.WIREBENCH, os.X_OK):
        raise RuntimeError(f"--wirebench={args.wirebench}: not an executable file")
    cases = set(args.cases.split(","))
    common = [f"--time={args.time}", "--percentile=95"]
    print(f"wirebench ({benchlib.WIREBENCH}) vs sysbench 1.0.20, oltp_point_select, {args.time}s per run, best of {args.rounds} alternating rounds")
    print("cli/srv = client/server CPU microseconds per query (user+sys)\n")
    print(HEADER, flush=True)

    if cases & {"a", "e", "k"}:
        env = mariadb_env()
        login = ["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest", "--tables=4", f"--table-size={args.table_size}"]
        tcp = [f"--mysql-host={env['WIREBENCH_TEST_HOST']}", f"--mysql-port={env['WIREBENCH_TEST_PORT']}"]
        sock = [f"--mysql-socket={env['WIREBENCH_TEST_SOCKET']}"]
        subprocess.run([benchlib.WIREBENCH, "oltp_point_select"] + tcp + login + ["cleanup"], check=True, capture_output=True)
        subprocess.run([benchlib.WIREBENCH, "oltp_point_select"] + tcp + login + ["--threads=4", "prepare"], check=True, capture_output=True)
        pid = server_pid_mariadb()
        for name, endpoint in (("tcp", tcp), ("socket", sock)):
            base = endpoint + login + common + ["--threads=16"]
            if "a" in cases:
                compare(f"a MariaDB {name} 16 conns", base, pid, args.rounds)
                compare(f"a MariaDB {name} 16 conns, wb pipeline=4", base, pid, args.rounds, wb_extra=["--pipeline=4"])
        if "k" in cases:
            k_cases = [(f"tcp {n} conns", tcp + login + common + [f"--threads={n}"]) for n in (1, 8, 16, 64)]
            k_cases.append(("socket 16 conns", sock + login + common + ["--threads=16"]))
            colocated_parity(k_cases, pid, args.rounds)
        if "e" in cases and (os.cpu_count() or 1) < 2:
            print("e needs two cores: skipped")
        elif "e" in cases:
            former = pin_process(pid, {1})
            try:
                for name, endpoint in (("tcp", tcp), ("socket", sock)):
                    base = endpoint + login + common + ["--threads=16"]
                    compare(f"e MariaDB on core 1 {name} 16 conns", base, pid, args.rounds, cpu=0, each_round=True)
            finally:
                unpin_process(pid, former)

    if "s" in cases:
        import lua_compare  # beside this file

        lua_compare.compare.WIREBENCH = benchlib.WIREBENCH  # lua_compare.py sees this file as the module `compare`
        lua_compare.run({"s1", "s2", "t", "m"}, args)

    if "p" in cases:
        import prepare  # beside this file

        prepare.compare.WIREBENCH = benchlib.WIREBENCH  # prepare.py sees this file as the module `compare`
        prepare.run(["8x100000", "2x1000000"], max(args.rounds, 3), threads=8)

    if "l" in cases:
        null = NullServer(cpu=1, extra=["--delay-us=200"])
        try:
            client_added_latency(null, 200, args.rounds, args.time)
        finally:
            null.stop()

    if cases & {"b", "c", "d"}:
        verdicts = []
        null = NullServer(cpu=1)
        try:
            login = ["--mysql-user=x", "--mysql-password=y", "--mysql-db=sbtest", "--tables=1", "--table-size=10000"]
            endpoints = (("tcp", ["--mysql-host=127.0.0.1", f"--mysql-port={null.port}"]), ("socket", [f"--mysql-socket={null.socket}"]))
            for name, endpoint in endpoints:
                for conns in (16, 256):
                    base = endpoint + login + common + [f"--threads={conns}"]
                    wb = ["--cpus=0"]
                    if "b" in cases:
                        ratio = compare(f"b null {name} {conns} conns, 1 core", base, null.proc.pid, args.rounds, cpu=0, wb_extra=wb)
                        if (name, conns) == ("tcp", 16):
                            verdicts.append(target_line(ratio))
                    if "c" in cases:
                        compare(f"c null {name} {conns} conns, wb pipeline=8", base, null.proc.pid, args.rounds, cpu=0, wb_extra=wb + ["--pipeline=8"])
            for line in verdicts:
                print("\n" + line, flush=True)
            if "d" in cases:
                print()
                base = ["--mysql-host=127.0.0.1", f"--mysql-port={null.port}"] + login + ["--threads=10000", "--time=2", "--cpus=0"]
                start = time.monotonic()
                out, err, cpu_s, rss, wall = measured([benchlib.WIREBENCH, "oltp_point_select"] + base + ["run"], cpu=0)
                started = re.search(r"Threads started!", out) is not None
                print(f"d 10,000 connections on one core: wall {wall:.1f}s for connect + 2s run, peak RSS {rss / 1024:.0f} MiB, "
                      f"client CPU {cpu_s:.1f}s, queries/s {queries_of(out)[1]:.0f}, started={started}")
        finally:
            null.stop()


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        print(f"compare: {e}", file=sys.stderr)
        sys.exit(1)

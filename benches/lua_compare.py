#!/usr/bin/env python3
"""Case s of benches/compare.sh: sysbench 1.0.20's Lua scripts run by
sysbench and by wirebench's Lua engine (`--lua`), side by side, alternating,
against the throwaway MariaDB; and case t: Percona-Lab/sysbench-tpcc
(vendored in tests/tpcc) the same way. Prints each round's qps (tps for
tpcc) and client CPU per query (per transaction), their ratios, and the
targets of issue 22:

  s1 MariaDB on this host, unix socket and TCP, 16 threads,
     oltp_point_select.lua and oltp_read_only.lua:
     client CPU per query <= 0.8x sysbench's, qps >= 1.0x;
  s2 MariaDB pinned to core 1, the client to core 0:
     client CPU per query <= 0.6x, qps >= 1.2x;
  t  sysbench-tpcc, scale 1, 8 threads: tps >= sysbench's and client CPU
     per transaction <= 0.8x;
  m  256 states of oltp_read_only.lua: peak RSS <= 2x sysbench's.
  t2 (not in the default set) t with MariaDB pinned to core 1 and the
     client to core 0, socket and TCP: a script's states then share one
     loop, as against a server elsewhere; every transaction locks the
     same rows, so an answer held back costs every state (no target:
     the ratios are printed).

Each target is judged on every round (PASS only when all rounds pass).

Usage: benches/lua_compare.py [--cases=s1,s2,t,m,t2] [--time=5] [--rounds=2]
(compare.sh --cases=s runs it after building and starting the server.)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402  (beside this file)

SCRIPTS = "/usr/share/sysbench"
TPCC_DIR = os.path.join(benchlib.REPO, "tests", "tpcc")


def tool_cmd(tool, script, args):
    """The command line running `script` (a path) with `args`."""
    if tool == "sysbench":
        return ["sysbench", script] + args
    return [benchlib.WIREBENCH, script, "--lua"] + args


def events_of(out):
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec\.\)", out)
    if not m:
        raise RuntimeError("no 'transactions:' line in the report:\n" + out)
    return int(m.group(1)), float(m.group(2))


def one(tool, script, args, cpu, per, cwd=None):
    """One run: its rate (qps or tps), client CPU µs per query or
    transaction, and peak RSS in KiB."""
    cmd = tool_cmd(tool, script, args + ["run"])
    if cwd:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        out, _err, cpu_s, rss, _wall = benchlib.measured(cmd, cpu)
    finally:
        if cwd:
            os.chdir(old)
    count, rate = benchlib.queries_of(out) if per == "query" else events_of(out)
    return {"rate": rate, "cpu_us": cpu_s / count * 1e6, "rss": rss}


def side_by_side(label, script, args, rounds, cpu=None, per="query", cwd=None, targets=None):
    """Alternating rounds; prints each round's ratios and the verdict."""
    verdicts = []
    for r in range(rounds):
        sb = one("sysbench", script, args, cpu, per, cwd)
        wb = one("wirebench", script, args, cpu, per, cwd)
        rate, cpu_ratio = wb["rate"] / sb["rate"], wb["cpu_us"] / sb["cpu_us"]
        ok = targets is None or (rate >= targets[0] and cpu_ratio <= targets[1])
        verdicts.append(ok)
        verdict_text = "-" if targets is None else "pass" if ok else "FAIL"
        print(f"| {label:<34} | {r + 1} | {sb['rate']:>9.0f} | {wb['rate']:>9.0f} | {rate:>5.2f}x "
              f"| {sb['cpu_us']:>7.2f} | {wb['cpu_us']:>7.2f} | {cpu_ratio:>5.2f}x | {verdict_text} |",
              flush=True)
    if targets:
        verdict = "PASS" if all(verdicts) else "FAIL"
        print(f"  {label}: target rate >= {targets[0]}x and CPU <= {targets[1]}x in every round: {verdict} "
              f"(load average {benchlib.load_average()})", flush=True)
    return all(verdicts)


def prepare_oltp(login):
    subprocess.run(["sysbench", f"{SCRIPTS}/oltp_read_only.lua"] + login + ["cleanup"], check=True,
                   capture_output=True)
    subprocess.run(["sysbench", f"{SCRIPTS}/oltp_read_only.lua"] + login + ["--threads=4", "prepare"], check=True,
                   capture_output=True)


def case_s(endpoints, login, args, rounds):
    for name, endpoint in endpoints:
        for script in ("oltp_point_select.lua", "oltp_read_only.lua"):
            side_by_side(f"s1 {script[:-4]} {name} 16 thr", f"{SCRIPTS}/{script}",
                         endpoint + login + args + ["--threads=16"], rounds, targets=(1.0, 0.8))


def case_s2(endpoints, login, args, rounds, pid):
    former = benchlib.pin_process(pid, {1})
    try:
        for name, endpoint in endpoints:
            for script in ("oltp_point_select.lua", "oltp_read_only.lua"):
                side_by_side(f"s2 {script[:-4]} {name} pinned", f"{SCRIPTS}/{script}",
                             endpoint + login + args + ["--threads=16"], rounds, cpu=0, targets=(1.2, 0.6))
    finally:
        benchlib.unpin_process(pid, former)


def case_t(endpoints, user, args, rounds, pinned=None):
    """sysbench-tpcc, scale 1, 8 threads, in a scratch copy of its files
    (its prepare sleeps 30 s through os.execute: a stand-in `sleep`), over
    each of `endpoints` (name, options); with `pinned` (the server's pid),
    the server on core 1 and the client on core 0."""
    work = tempfile.mkdtemp(prefix="wb-tpcc-")
    try:
        for name in os.listdir(TPCC_DIR):
            if name.endswith(".lua"):
                shutil.copy(os.path.join(TPCC_DIR, name), work)
        bindir = os.path.join(work, "bin")
        os.mkdir(bindir)
        with open(os.path.join(bindir, "sleep"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(bindir, "sleep"), 0o755)
        os.environ["PATH"] = bindir + ":" + os.environ["PATH"]
        db = user + ["--mysql-db=sbtest_tpcc", "--tables=1", "--scale=1", "--db-driver=mysql"]
        base = endpoints[0][1] + db
        subprocess.run([benchlib.WIREBENCH, "./tpcc.lua"] + base + ["cleanup"], cwd=work, capture_output=True)
        subprocess.run([benchlib.WIREBENCH, "./tpcc.lua"] + base + ["--threads=2", "prepare"], cwd=work, check=True,
                       capture_output=True)
        former = benchlib.pin_process(pinned, {1}) if pinned else None
        try:
            for name, endpoint in endpoints:
                label = f"t2 tpcc {name} pinned, 8 thr" if pinned else "t tpcc scale 1, 8 thr"
                side_by_side(label, "./tpcc.lua", endpoint + db + args + ["--threads=8"], rounds, per="trx",
                             cwd=work, cpu=0 if pinned else None, targets=None if pinned else (1.0, 0.8))
        finally:
            if former:
                benchlib.unpin_process(pinned, former)
        subprocess.run([benchlib.WIREBENCH, "./tpcc.lua"] + base + ["cleanup"], cwd=work, capture_output=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def case_m(endpoint, login, rounds):
    """256 states of oltp_read_only.lua for 3 s: peak RSS, each tool's."""
    args = endpoint + login + ["--threads=256", "--time=3"]
    for r in range(rounds):
        sb = one("sysbench", f"{SCRIPTS}/oltp_read_only.lua", args, None, "query")
        wb = one("wirebench", f"{SCRIPTS}/oltp_read_only.lua", args, None, "query")
        ratio = wb["rss"] / sb["rss"]
        print(f"  m 256 states, round {r + 1}: peak RSS sysbench {sb['rss'] / 1024:.0f} MiB, "
              f"wirebench {wb['rss'] / 1024:.0f} MiB, {ratio:.2f}x (target <= 2x: {'pass' if ratio <= 2 else 'FAIL'})",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default="s1,s2,t,m")
    ap.add_argument("--time", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--table-size", type=int, default=100000)
    ap.add_argument("--wirebench", default=benchlib.BUILT)
    args = ap.parse_args()
    benchlib.WIREBENCH = os.path.abspath(args.wirebench)
    run(set(args.cases.split(",")), args)


def run(cases, args):
    """The cases named in `cases` (s1, s2, t, m, t2), with `args`' time,
    rounds and table size."""
    env = benchlib.mariadb_env()
    user = ["--mysql-user=sbtest", "--mysql-password=sbtest"]
    login = user + ["--mysql-db=sbtest", "--tables=4", f"--table-size={args.table_size}"]
    tcp = [f"--mysql-host={env['WIREBENCH_TEST_HOST']}", f"--mysql-port={env['WIREBENCH_TEST_PORT']}"]
    sock = [f"--mysql-socket={env['WIREBENCH_TEST_SOCKET']}"]
    endpoints = [("socket", sock), ("tcp", tcp)]
    common = [f"--time={args.time}", "--percentile=95"]
    print(f"wirebench --lua ({benchlib.WIREBENCH}) vs sysbench 1.0.20, {args.time}s per run, {args.rounds} "
          f"alternating rounds; cpu = client CPU microseconds (user+sys) per query (per transaction for t)\n")
    print("| case                               | r | sb rate   | wb rate   | ratio  | sb cpu  | wb cpu  | ratio  | verdict |")
    print("|------------------------------------|---|-----------|-----------|--------|---------|---------|--------|---------|")
    if cases & {"s1", "s2", "m"}:
        prepare_oltp(tcp + login)
    if "s1" in cases:
        case_s(endpoints, login, common, args.rounds)
    if "s2" in cases:
        case_s2(endpoints, login, common, args.rounds, benchlib.server_pid_mariadb())
    tpcc_args = [f"--time={max(args.time, 20)}"]
    if "t" in cases:
        case_t([("socket", sock)], user, tpcc_args, args.rounds)
    if "t2" in cases:
        case_t(endpoints, user, tpcc_args, args.rounds, pinned=benchlib.server_pid_mariadb())
    if "m" in cases:
        case_m(sock, login, args.rounds)


if __name__ == "__main__":
    main()

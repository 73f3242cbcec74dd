#!/usr/bin/env python3
"""prepare against sysbench 1.0.20: `oltp_read_write prepare` on the
throwaway MariaDB's unix socket, sysbench and wirebench alternating, a
cleanup before each run. Prints each round's wall time and mariadbd CPU
(user+system from /proc over the prepare), the medians' ratios and whether
the wall-time ratio meets issue 15's target (at most 0.6x).

Usage: benches/prepare.py [--sizes=8x100000,2x1000000] [--rounds=3]
       [--threads=8] [--target=0.6] [--wirebench=PATH] [-- WIREBENCH-OPTIONS]

Also run by benches/compare.sh --cases=p. The server must be running
(scripts/mariadb.sh start); its settings are printed first, since they
decide the figures.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402  (beside this file)

VARIABLES = ("innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "innodb_sort_buffer_size",
             "innodb_log_file_size", "local_infile", "max_allowed_packet", "log_bin")


def server_variables(socket):
    names = ",".join(f"'{v}'" for v in VARIABLES)
    out = subprocess.run(["mariadb", "-S", socket, "-N", "-e", f"SHOW GLOBAL VARIABLES WHERE variable_name IN ({names})"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return "unknown (" + out.stderr.strip() + ")"
    return ", ".join("=".join(line.split("\t")) for line in out.stdout.splitlines())


def timed_prepare(exe, args, server_pid):
    """Cleans up, then runs one prepare; its wall and the server's CPU seconds."""
    subprocess.run(exe + args + ["cleanup"], check=True, capture_output=True)
    before = benchlib.proc_cpu_seconds(server_pid)
    start = time.monotonic()
    done = subprocess.run(exe + args + ["prepare"], capture_output=True, text=True)
    wall = time.monotonic() - start
    cpu = benchlib.proc_cpu_seconds(server_pid) - before
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(exe + args)} prepare failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return wall, cpu


def compare_size(tables, rows, rounds, threads, wb_extra, target):
    env = benchlib.mariadb_env()
    socket = env["WIREBENCH_TEST_SOCKET"]
    args = ["oltp_read_write", f"--mysql-socket={socket}", "--mysql-user=sbtest", "--mysql-password=sbtest",
            "--mysql-db=sbtest", f"--tables={tables}", f"--table-size={rows}", f"--threads={threads}"]
    pid = benchlib.server_pid_mariadb()
    runs = {"sysbench": [], "wirebench": []}
    for n in range(rounds):
        # Alternating which goes first spreads a trend in the machine's load over both.
        order = ("sysbench", "wirebench") if n % 2 == 0 else ("wirebench", "sysbench")
        for tool in order:
            exe = ["sysbench"] if tool == "sysbench" else [benchlib.WIREBENCH]
            runs[tool].append(timed_prepare(exe, args + (wb_extra if tool == "wirebench" else []), pid))
        s, w = runs["sysbench"][-1], runs["wirebench"][-1]
        print(f"  {tables}x{rows} round {n + 1}: wall {s[0]:.2f} / {w[0]:.2f} s ({w[0] / s[0]:.2f}x), "
              f"server CPU {s[1]:.2f} / {w[1]:.2f} s ({w[1] / s[1]:.2f}x), load average {benchlib.load_average()}", flush=True)
    subprocess.run([benchlib.WIREBENCH] + args + ["cleanup"], check=True, capture_output=True)
    median = {t: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for t, v in runs.items()}
    ratio = median["wirebench"][0] / median["sysbench"][0]
    verdict = "PASS" if ratio <= target else "FAIL"
    print(f"p prepare {tables}x{rows} --threads={threads} socket: median wall sysbench {median['sysbench'][0]:.2f} s, "
          f"wirebench {median['wirebench'][0]:.2f} s, ratio {ratio:.2f}x (target <= {target}x: {verdict}); "
          f"median server CPU ratio {median['wirebench'][1] / median['sysbench'][1]:.2f}x", flush=True)
    return verdict == "PASS"


def run(sizes, rounds, threads, wb_extra=(), target=0.6):
    env = benchlib.mariadb_env()
    print(f"\np prepare, oltp_read_write, sysbench / wirebench alternating, {rounds} rounds; "
          f"server: {server_variables(env['WIREBENCH_TEST_SOCKET'])}", flush=True)
    passed = True
    for size in sizes:
        tables, rows = (int(x) for x in size.split("x"))
        passed &= compare_size(tables, rows, rounds, threads, list(wb_extra), target)
    return passed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8x100000,2x1000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--target", type=float, default=0.6)
    ap.add_argument("--wirebench", default=benchlib.BUILT)
    args, wb_extra = ap.parse_known_args()
    benchlib.WIREBENCH = os.path.abspath(args.wirebench)
    wb_extra = [a for a in wb_extra if a != "--"]
    ok = run(args.sizes.split(","), args.rounds, args.threads, wb_extra, args.target)
    sys.exit(0 if ok else 2)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.CalledProcessError, OSError, ValueError) as e:
        print(f"prepare: {e}", file=sys.stderr)
        sys.exit(1)

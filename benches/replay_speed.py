#!/usr/bin/env python3
"""Replay at engine speed (docs/replay.md, "Figures"): a capture of
`wirebench oltp_point_select --threads=16` taken through `wirebench
record` against the test MariaDB, then, alternating, the capture replayed
at `--speed=max` and the same run again. Prints per run the qps and the
client's CPU microseconds per query (user + system, from wait4), then the
medians' ratios, replay/run, and the load average: on a shared machine
the ratio of runs taken side by side is the figure, not the speeds.

Usage: benches/replay_speed.py [--time=10] [--rounds=3] [--threads=16] [--io=auto]
(the test MariaDB running: scripts/mariadb.sh start; a release build).
`--io` is the run's backend (`auto`, `uring`, `epoll`).
"""

import argparse
import os
import subprocess
import sys
import tempfile

import benchlib  # beside this file
from benchlib import load_average, mariadb_env, measured, queries_of
from record_cost import Recorder, median


def run_once(args, port):
    """The run the capture was taken of, straight to the server."""
    cmd = [benchlib.BUILT, "oltp_point_select", "--mysql-host=127.0.0.1", f"--mysql-port={port}"] + args.login
    cmd += [f"--threads={args.threads}", f"--time={args.time}", f"--io={args.io}", "run"]
    return figures(cmd)


def replay_once(args, capture):
    """The capture replayed as fast as the server answers."""
    cmd = [benchlib.BUILT, "replay", capture, "--speed=max", "--mysql-host=127.0.0.1", f"--mysql-port={args.port}"]
    cmd += ["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest", f"--time={args.time}"]
    return figures(cmd)


def figures(cmd):
    out, _, cpu_s, rss_kib, _ = measured(cmd)
    queries, qps = queries_of(out)
    return {"qps": qps, "cpu_us": cpu_s / queries * 1e6, "rss_mib": rss_kib / 1024}


def record(args, scratch):
    """Records the run through `wirebench record`; the capture's path."""
    capture = os.path.join(scratch, "point_select.wbc")
    recorder = Recorder(f"127.0.0.1:{args.port}", capture)
    try:
        # The capture is longer than a replay's --time, so that the replay
        # never runs out of commands before the run would.
        saved = args.time
        args.time = args.time * 2
        run_once(args, recorder.port)
        args.time = saved
    finally:
        wrote = recorder.stop()
    print("captured: " + " ".join(wrote.split()), flush=True)
    return capture


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--io", default="auto")
    args = ap.parse_args()
    env = mariadb_env()
    args.port = int(env["WIREBENCH_TEST_PORT"])
    args.login = ["--mysql-user=sbtest", "--mysql-password=sbtest", "--mysql-db=sbtest", "--tables=4", "--table-size=10000"]
    tcp = ["--mysql-host=127.0.0.1", f"--mysql-port={args.port}"]
    subprocess.run([benchlib.BUILT, "oltp_point_select"] + tcp + args.login + ["cleanup"], check=True, capture_output=True)
    subprocess.run([benchlib.BUILT, "oltp_point_select"] + tcp + args.login + ["prepare"], check=True, capture_output=True)
    print(f"oltp_point_select --threads={args.threads} --io={args.io}, recorded, then replay --speed=max and the run, "
          f"{args.time} s each, {args.rounds} rounds (load average {load_average()})")
    runs = {"replay": [], "run": []}
    with tempfile.TemporaryDirectory(prefix="wb-replay-speed-") as scratch:
        capture = record(args, scratch)
        print("| round | what   |     qps | client us/q | peak RSS MiB |")
        for round_ in range(args.rounds):
            runs["replay"].append(replay_once(args, capture))
            runs["run"].append(run_once(args, args.port))
            for name in ("replay", "run"):
                r = runs[name][-1]
                print(f"| {round_ + 1:>5} | {name:<6} | {r['qps']:>7.0f} | {r['cpu_us']:>11.1f} | {r['rss_mib']:>12.0f} |",
                      flush=True)
    med = {name: {k: median([r[k] for r in rs]) for k in rs[0]} for name, rs in runs.items()}
    p, r = med["replay"], med["run"]
    # Each round's pair ran side by side: its ratio is what the others'
    # load changed least.
    pairs = list(zip(runs["replay"], runs["run"]))
    qps_ratio = median([a["qps"] / b["qps"] for a, b in pairs])
    cpu_ratio = median([a["cpu_us"] / b["cpu_us"] for a, b in pairs])
    print(f"medians: replay {p['qps']:.0f} qps at {p['cpu_us']:.1f} us a query, run {r['qps']:.0f} qps at "
          f"{r['cpu_us']:.1f} us; median of the rounds' ratios, replay/run: qps {qps_ratio:.2f}x, client CPU per "
          f"query {cpu_ratio:.2f}x (target: >= 0.9x qps at <= 1.2x CPU; load average {load_average()})")


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.CalledProcessError, OSError) as e:
        print(f"replay_speed: {e}", file=sys.stderr)
        sys.exit(1)

"""What the benchmark scripts of benches/ share: where the repository and
the built binary are, running a client and measuring its CPU, reading a
report's query count, finding and pinning the test MariaDB. compare.py,
lua_compare.py and prepare.py import this module; it imports none of them.
"""

import os
import re
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILT = os.path.join(REPO, "target", "release", "wirebench")
# The wirebench measured as a client (--wirebench); the null server is always BUILT.
WIREBENCH = BUILT
CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid):
    """user+sys CPU seconds of a process (all its threads) from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def measured(cmd, cpu=None):
    """Runs a benchmark client (pinned to `cpu` if given); returns its output,
    CPU seconds (user+sys), peak RSS in KiB and wall seconds."""
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    start = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as err_file:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, text=True)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        err_file.seek(0)
        err = err_file.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out}\n{err}")
    return out, err, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, wall


def queries_of(out):
    m = re.search(r"queries:\s+(\d+)\s+\(([\d.]+) per sec\.\)", out)
    if not m:
        raise RuntimeError("no 'queries:' line in the report:\n" + out)
    return int(m.group(1)), float(m.group(2))


def server_pid_mariadb():
    pidfile = os.path.join(REPO, ".wirebench-mariadb", "mariadbd.pid")
    with open(pidfile) as f:
        return int(f.read().strip())


def mariadb_env():
    out = subprocess.run([os.path.join(REPO, "scripts", "mariadb.sh"), "env"], capture_output=True, text=True, check=True)
    env = {}
    for line in out.stdout.splitlines():
        m = re.match(r"export (\w+)=(.*)", line)
        if m:
            env[m.group(1)] = m.group(2)
    return env


def pin_process(pid, cpus):
    """Pins every thread of a process (and so the threads it starts later)
    to `cpus`; returns each thread's former mask, for unpin_process."""
    former = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            former[int(tid)] = os.sched_getaffinity(int(tid))
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # the thread has ended meanwhile
    return former


def unpin_process(pid, former):
    """Gives every thread of the process the mask its main thread had."""
    mask = former.get(pid) or set(range(os.cpu_count() or 1))
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), mask)
        except OSError:
            pass


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])

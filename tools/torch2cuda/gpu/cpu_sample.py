#!/usr/bin/env python3
"""Where a benchmark's CPU time goes (issue 23): python3 cpu_sample.py OUT.json
[INTERVAL] samples the host until SIGTERM or SIGINT, then writes OUT.json:

  busy_core_s / idle_core_s  from /proc/stat (all CPUs; iowait counts as idle)
  by_comm                    core-seconds per process name (/proc/PID/stat;
                             python processes by script and subcommand:
                             "python:judge.py serve --compile-only"
                             utime+stime deltas between samples; a process's
                             time after its last sample is missed, so the sum
                             is a little below busy_core_s)
  timeline                   one row per sample: seconds since the start, the
                             busy fraction of all CPUs, runnable tasks, and the
                             count of compiler processes (cc1plus, cicc,
                             cudafe++, ptxas, nvcc)

A measuring aid for gpu/bench.sh, not part of kiln.
"""
import json
import os
import signal
import sys
import time

COMPILERS = ("cc1plus", "cicc", "cudafe++", "ptxas", "nvcc", "fatbinary")


def cpu_times():
    with open("/proc/stat") as f:
        lines = f.read().splitlines()
    v = [int(x) for x in lines[0].split()[1:]]
    idle = v[3] + v[4]
    running = next((int(l.split()[1]) for l in lines if l.startswith("procs_running")), 0)
    return sum(v[:8]) - idle, idle, running


_names = {}


def name_of(pid, comm):
    """comm, or for python, "python:" and judge.py's subcommand (serve, check, ...),
    read once per process (forked children keep their parent's command line)."""
    if not comm.startswith("python"):
        return comm
    key = (pid, comm)
    if key not in _names:
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            argv = []
        scripts = [i for i, a in enumerate(argv) if a.endswith(".py")]
        n = "python"
        if scripts:
            i = scripts[0]
            n += ":" + os.path.basename(argv[i])
            if i + 1 < len(argv) and argv[i + 1] and not argv[i + 1].startswith("-"):
                n += " " + argv[i + 1]
            if "--compile-only" in argv:
                n += " --compile-only"
        _names[key] = n
    return _names[key]


def procs():
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                s = f.read()
        except OSError:
            continue
        lp, rp = s.find("("), s.rfind(")")
        comm = s[lp + 1:rp]
        rest = s[rp + 2:].split()
        # fields after the comm: state is rest[0]; utime, stime are fields 14, 15 of stat
        out[pid] = (name_of(pid, comm), int(rest[11]) + int(rest[12]))
    return out


def main():
    path = sys.argv[1]
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    hz = os.sysconf("SC_CLK_TCK")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    t0 = time.time()
    b0, i0, _ = cpu_times()
    last_b, last_i = b0, i0
    seen = procs()
    by_comm = {}
    timeline = []
    while not stop:
        time.sleep(interval)
        b, i, running = cpu_times()
        now = procs()
        compilers = 0
        for pid, (comm, t) in now.items():
            prev = seen.get(pid)
            d = t - prev[1] if prev else t  # a pid keeps its times across exec
            if d > 0:
                by_comm[comm] = by_comm.get(comm, 0) + d
            compilers += comm in COMPILERS
        seen = now
        db, di = b - last_b, i - last_i
        last_b, last_i = b, i
        timeline.append([round(time.time() - t0, 2), round(db / max(db + di, 1), 3), running, compilers])
    b, i, _ = cpu_times()
    res = {
        "wall_s": round(time.time() - t0, 2), "cpus": os.cpu_count(), "interval_s": interval,
        "busy_core_s": round((b - b0) / hz, 1), "idle_core_s": round((i - i0) / hz, 1),
        "by_comm": {k: round(v / hz, 1) for k, v in sorted(by_comm.items(), key=lambda kv: -kv[1])},
        "timeline": timeline,
    }
    with open(path, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()

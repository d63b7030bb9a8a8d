#!/usr/bin/env python3
"""Where a cold extension build goes (issue 23, item 1).

For each answer (a ModelNew module that calls load_inline), one at a time and from an empty
build folder:

  1. `judge.py compile` builds it as kiln's judge does (load_inline through the judge's build
     cache, ninja); its wall time is the cold build;
  2. ninja's own log (.ninja_log in the extension's folder) gives each target's time: the
     pybind module (main.o, g++), the CUDA source (cuda.cuda.o, nvcc), the link;
  3. the two compile commands (`ninja -t commands`) run again, to a scratch object, with
     `-ftime-report` (g++: preprocessing, parsing, template instantiation, code generation) and
     `--time` (nvcc: cudafe++, cicc, ptxas, fatbinary, the host compiler's pass).

Prints one JSON line per answer and a summary (medians, seconds) at the end; --out writes all.

    python3 tools/torch2cuda/gpu/build_phases.py --limit 5 --out phases.json
    python3 tools/torch2cuda/gpu/build_phases.py --every 4 --limit 0 --no-rerun --pch /tmp/pch  # as the judge builds
    TORCH_CUDA_ARCH_LIST=9.0 python3 tools/torch2cuda/gpu/build_phases.py --answers DIR

On a host without a GPU set TORCH_CUDA_ARCH_LIST (the GPU host's is 9.0). Trusted code only:
the answers are the repository's starter answers or files you chose; nothing here is sandboxed.
"""
import argparse
import csv
import glob
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGE = os.path.join(HERE, "..", "judge", "judge.py")
ANSWERS = os.path.join(HERE, "..", "answers")


def ninja_log(path):
    """target -> seconds, from a .ninja_log (v5: start, end, mtime, target, hash; ms)."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4:
                out[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return out


_GXX_ROW = re.compile(r"^\s*\|?([^:|][^:]*?)\s*:\s*([\d.]+)\s*(?:\(\s*\d+%\))?\s+([\d.]+)\s*(?:\(\s*\d+%\))?\s+([\d.]+)")
_GXX_KEEP = ("preprocessing", "template instantiation", "parser (global)", "name lookup", "TOTAL")


def gxx_phases(stderr):
    """g++ -ftime-report rows "name : usr (pct) sys (pct) wall (pct) GGC" -> {name: wall seconds},
    for the phases and the front end's main items."""
    out = {}
    for line in stderr.splitlines():
        m = _GXX_ROW.match(line)
        if m:
            name = m.group(1).strip()
            if name.startswith("phase ") or name in _GXX_KEEP:
                out[name] = out.get(name, 0.0) + float(m.group(4))
    return out


def nvcc_steps(csv_path):
    """nvcc --time CSV (source file, phase name, inputs, output, arch, tool, metric, unit; the
    metric is the field before the unit "ms") -> {phase name: seconds}."""
    out = {}
    try:
        with open(csv_path) as f:
            for row in csv.reader(f):
                row = [x.strip() for x in row]
                if len(row) < 3 or row[-1] != "ms":
                    continue
                try:
                    ms = float(row[-2])
                except ValueError:
                    continue
                name = row[1]
                out[name] = out.get(name, 0.0) + ms / 1000.0
    except OSError:
        pass
    return out


def rerun(cmd, cwd, kind, scratch):
    """One compile command again, to a scratch object, with the phase report of its compiler."""
    argv = shlex.split(cmd)
    if "-o" in argv:
        argv[argv.index("-o") + 1] = os.path.join(scratch, "x.o")
    t0 = time.time()
    if kind == "nvcc":
        report = os.path.join(scratch, "nvcc-time.csv")
        argv += ["--time", report]
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        steps = nvcc_steps(report)
    else:
        argv.append("-ftime-report")
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
        steps = gxx_phases(p.stderr)
    return {"wall_s": round(time.time() - t0, 2), "rc": p.returncode, "phases_s": {k: round(v, 2) for k, v in steps.items()}}


def make_pch(py, root):
    """The precompiled headers the judge makes (pch.go), both at once as the lane makes them: no
    extra flags and -O3, with CUDA."""
    procs, out = {}, {}
    t0 = time.time()
    for name, flags in (("plain", "[]"), ("o3", '["-O3"]')):
        procs[name] = subprocess.Popen([py, JUDGE, "pch", "--out", os.path.join(root, name), "--extra-cflags", flags,
                                        "--with-cuda"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for name, p in procs.items():
        stdout, stderr = p.communicate()
        lines = [l for l in stdout.splitlines() if l.strip()]
        r = json.loads(lines[-1]) if lines else {"ok": False, "error": stderr[-500:]}
        out[name] = {"ok": r.get("ok"), "s": round(time.time() - t0, 2), "error": r.get("error") or r.get("note")}
    return out


class Server:
    """A build server as kiln's lane runs one per compile slot (`judge.py serve --compile-only`):
    torch imported once, each build a fresh child. It is warmed with a candidate that builds
    nothing, as a campaign's servers are after their first build."""

    def __init__(self, py, timeout, pch_root=None):
        self.work = tempfile.mkdtemp(prefix="kiln-phases-server-")
        self.inbox, self.outbox = os.path.join(self.work, "inbox"), os.path.join(self.work, "outbox")
        argv = [py, JUDGE, "serve", "--compile-only", "--inbox", self.inbox, "--outbox", self.outbox, "--idle-exit", "0",
                "--parallel", "1", "--timeout", str(timeout), "--build-dir", os.path.join(self.work, "build")]
        if pch_root:
            argv += ["--pch-root", pch_root]
        self.proc = subprocess.Popen(argv, cwd=self.work, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "err"), "w"))
        self.seq = 0
        warm = os.path.join(HERE, "..", "judge", "testdata", "cand_no_ext.py")
        self.build(warm, os.path.join(self.work, "warm"))

    def build(self, answer, build):
        self.seq += 1
        jid = str(self.seq)
        os.makedirs(self.inbox, exist_ok=True)
        with open(os.path.join(self.inbox, jid + ".json"), "w") as f:
            json.dump({"candidate": os.path.abspath(answer), "build_dir": build}, f)
        t0 = time.time()
        open(os.path.join(self.inbox, jid + ".ready"), "w").close()
        out = os.path.join(self.outbox, jid + ".json")
        while not os.path.exists(out):
            if self.proc.poll() is not None:
                return {"ok": False, "diagnostic": open(os.path.join(self.work, "err")).read()[-500:]}, time.time() - t0
            time.sleep(0.02)
        wall = time.time() - t0
        with open(out) as f:
            return json.load(f), wall

    def close(self):
        open(os.path.join(self.inbox, "stop"), "w").close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.work, ignore_errors=True)


def measure(answer, py, timeout, pch_root=None, reruns=True, server=None):
    work = tempfile.mkdtemp(prefix="kiln-phases-")
    try:
        build = os.path.join(work, "build")
        if server is not None:
            res, wall = server.build(answer, build)
        else:
            t0 = time.time()
            argv = [py, JUDGE, "compile", "--candidate", answer, "--build-dir", build, "--timeout", str(timeout)]
            if pch_root:
                argv += ["--pch-root", pch_root]
            p = subprocess.run(argv, capture_output=True, text=True, cwd=work)
            wall = time.time() - t0
            lines = [l for l in p.stdout.splitlines() if l.strip()]
            res = json.loads(lines[-1]) if lines else {"ok": False, "diagnostic": p.stderr[-500:]}
        r = {"answer": os.path.relpath(answer, ANSWERS) if answer.startswith(os.path.abspath(ANSWERS)) else answer,
             "ok": bool(res.get("ok")), "cold_build_s": round(wall, 2), "compile_ms": res.get("compile_ms"),
             "header": res.get("header"), "slim": res.get("slim"), "pch": res.get("pch"), "ninja_s": {}, "rerun": {}}
        if not r["ok"]:
            r["diagnostic"] = str(res.get("diagnostic", ""))[:800]
            return r
        for dj in glob.glob(os.path.join(build, "*", "kiln_done.json")):
            with open(dj) as f:
                for rec in json.load(f).get("nvcc") or []:
                    r.setdefault("nvcc", []).append({k: rec.get(k) for k in ("parallel", "ids_equal", "ms")})
        for log in glob.glob(os.path.join(build, "**", ".ninja_log"), recursive=True):
            folder = os.path.dirname(log)
            for target, s in ninja_log(log).items():
                r["ninja_s"][target] = round(r["ninja_s"].get(target, 0.0) + s, 2)
            cmds = subprocess.run(["ninja", "-t", "commands"], cwd=folder, capture_output=True, text=True).stdout
            for cmd in cmds.splitlines():
                kind = "nvcc" if re.search(r"(^|/)nvcc\s", cmd) else ("g++" if " -c " in cmd else None)
                if kind and reruns:
                    r["rerun"][kind] = rerun(cmd, folder, kind, work)
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def summary(rows):
    ok = [r for r in rows if r["ok"]]
    out = {"answers": len(rows), "built": len(ok)}
    if not ok:
        return out
    out["cold_build_s_median"] = round(statistics.median(r["cold_build_s"] for r in ok), 2)
    out["cold_build_s_range"] = [min(r["cold_build_s"] for r in ok), max(r["cold_build_s"] for r in ok)]
    kinds = {}
    for r in ok:
        for h, slim, pch in zip(r.get("header") or [], r.get("slim") or [], r.get("pch") or []):
            k = "%s%s%s" % (h or "as written", "" if slim in (None, True) else " (failed: as written)",
                            ", pybind module with the PCH" if pch else "")
            kinds[k] = kinds.get(k, 0) + 1
    out["builds"] = kinds
    targets = sorted({t for r in ok for t in r["ninja_s"]})
    out["ninja_s_median"] = {t: round(statistics.median(r["ninja_s"].get(t, 0.0) for r in ok), 2) for t in targets}
    for kind in ("nvcc", "g++"):
        names = sorted({n for r in ok for n in r["rerun"].get(kind, {}).get("phases_s", {})})
        out[kind + "_phases_s_median"] = {n: round(statistics.median(
            r["rerun"].get(kind, {}).get("phases_s", {}).get(n, 0.0) for r in ok), 2) for n in names}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--answers", default=ANSWERS, help="folder of answers (searched recursively for .py)")
    ap.add_argument("--limit", type=int, default=5, help="answers measured, in name order (0: all)")
    ap.add_argument("--python", default=sys.executable, help="the python3 with torch")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", default=None)
    ap.add_argument("--every", type=int, default=1, help="measure every Nth answer (in name order)")
    ap.add_argument("--pch", default=None, metavar="DIR",
                    help="first make the judge's precompiled headers in DIR, and build with them as the judge does")
    ap.add_argument("--no-rerun", action="store_true", help="only the cold builds (no per-phase reruns)")
    ap.add_argument("--serve", action="store_true", help="build on a running build server, as kiln's lane does "
                                                         "(the cold build is then the time from the job to its result)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(os.path.abspath(a.answers), "**", "*.py"), recursive=True))
    files = files[::max(1, a.every)]
    if a.limit > 0:
        files = files[:a.limit]
    if not files:
        sys.exit("build_phases: no .py answers under %s" % a.answers)
    rows = []
    if a.pch:
        print(json.dumps({"pch": make_pch(a.python, os.path.abspath(a.pch))}), flush=True)
    server = Server(a.python, a.timeout, os.path.abspath(a.pch) if a.pch else None) if a.serve else None
    try:
        for f in files:
            r = measure(f, a.python, a.timeout, os.path.abspath(a.pch) if a.pch else None, not a.no_rerun, server)
            print(json.dumps(r), flush=True)
            rows.append(r)
    finally:
        if server is not None:
            server.close()
    s = summary(rows)
    print(json.dumps({"summary": s}, indent=1), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rows": rows, "summary": s}, f, indent=1)
    return 0 if s.get("built") == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

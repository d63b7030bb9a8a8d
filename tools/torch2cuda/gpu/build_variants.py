#!/usr/bin/env python3
"""What would make a cold extension build cheaper (issue 23, item 2): measurements, not the judge.

For each answer, from an empty build folder:

  1. `judge.py compile` builds it as kiln's judge does (load_inline, ninja); its wall time is
     the cold build, and its folder holds the two compile commands (`ninja -t commands`);
  2. the nvcc command runs again on variants of the CUDA source, to a scratch object, with
     `--time`: as built (the judge builds a source that includes <torch/extension.h> with
     <torch/types.h> in its place, "slim"); with `#include <torch/extension.h>` replaced by each
     of --slim (sources the judge built as written); and with judge.py's per-operator prelude
     (`perop_cuda_sources`: load_inline's implicit headers off, the Tensor class, the ATen
     operators the source names, the torch:: factories, the torch namespace block of
     torch/types.h);
  3. the g++ command (the pybind module) runs again as is, then with a precompiled header of
     torch/extension.h built from the same flags (the build's time, the compile's time, and
     whether g++ used it, from -H), and whether that header is still used under another
     extension name and with -O3 added; then with torch/types.h + torch/python.h in place of
     torch/extension.h;
  4. `nvcc --dryrun` of the first answer is kept, to see which steps could overlap.

Prints one JSON line per answer; --out writes them all with medians.

    TORCH_CUDA_ARCH_LIST=9.0 python3 tools/torch2cuda/gpu/build_variants.py --limit 4 --parallel 4

Trusted code only: the answers are the repository's starter answers or files you chose.
"""
import argparse
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
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from build_phases import JUDGE, ANSWERS, nvcc_steps  # noqa: E402

sys.path.insert(0, os.path.dirname(JUDGE))
import judge  # noqa: E402  (judge.py's own prelude, so that what is measured is what it would build)

SLIM_INCLUDE = re.compile(r"^([ \t]*#[ \t]*include[ \t]*)<torch/types\.h>", re.M)
EXT_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]torch/extension\.h[>\"]", re.M)


def first_error(text):
    for ln in text.splitlines():
        if re.search(r"\berror\b", ln):
            return ln.strip()[:300]
    return text.strip()[-300:]


def run_nvcc(argv, src, cwd, scratch, tag):
    argv = list(argv)
    argv[argv.index("-c") + 1] = src
    argv[argv.index("-o") + 1] = os.path.join(scratch, tag + ".o")
    report = os.path.join(scratch, tag + "-time.csv")
    t0 = time.time()
    p = subprocess.run(argv + ["--time", report], cwd=cwd, capture_output=True, text=True)
    r = {"wall_s": round(time.time() - t0, 2), "rc": p.returncode,
         "phases_s": {k: round(v, 2) for k, v in nvcc_steps(report).items()}}
    if p.returncode:
        r["error"] = first_error(p.stderr + p.stdout)
    return r


def gxx_pch(argv, cwd, scratch):
    """The pybind module's compile as is, then against a precompiled torch/extension.h."""
    out = {}
    base = list(argv)
    base[base.index("-o") + 1] = os.path.join(scratch, "main-plain.o")
    t0 = time.time()
    p = subprocess.run(base, cwd=cwd, capture_output=True, text=True)
    out["plain_s"] = round(time.time() - t0, 2)
    out["plain_rc"] = p.returncode
    inc = None
    for i, a in enumerate(argv):
        if a == "-isystem" and os.path.exists(os.path.join(argv[i + 1], "torch", "extension.h")):
            inc = argv[i + 1]
            break
    if inc is None:
        out["error"] = "torch/extension.h not found among the -isystem folders"
        return out
    pch = os.path.join(scratch, "pch")
    os.makedirs(os.path.join(pch, "torch"), exist_ok=True)
    hdr = os.path.join(pch, "torch", "extension.h")
    shutil.copyfile(os.path.join(inc, "torch", "extension.h"), hdr)
    gen = [a for a in argv]
    ci = gen.index("-c")
    gen[ci:ci + 2] = ["-x", "c++-header", hdr]
    gen[gen.index("-o") + 1] = hdr + ".gch"
    if "-MMD" in gen:
        gen.remove("-MMD")
    if "-MF" in gen:
        j = gen.index("-MF")
        del gen[j:j + 2]
    t0 = time.time()
    p = subprocess.run(gen, cwd=cwd, capture_output=True, text=True)
    out["pch_build_s"] = round(time.time() - t0, 2)
    out["pch_rc"] = p.returncode
    if p.returncode:
        out["error"] = first_error(p.stderr)
        return out
    out["pch_mb"] = round(os.path.getsize(hdr + ".gch") / 1e6, 1)
    use = list(base)
    use[use.index("-o") + 1] = os.path.join(scratch, "main-pch.o")
    use[1:1] = ["-I" + pch, "-Winvalid-pch", "-H"]
    t0 = time.time()
    p = subprocess.run(use, cwd=cwd, capture_output=True, text=True)
    out["with_pch_s"] = round(time.time() - t0, 2)
    out["with_pch_rc"] = p.returncode
    out["pch_used"] = any(ln.startswith("!") and ln.rstrip().endswith(".gch") for ln in p.stderr.splitlines())
    bad = [ln for ln in p.stderr.splitlines() if "invalid-pch" in ln or "not used because" in ln]
    if bad:
        out["pch_warnings"] = bad[:5]
    if p.returncode:
        out["error"] = first_error(p.stderr)
    # is the PCH still used by another extension's compile (another TORCH_EXTENSION_NAME), and with
    # extra_cflags=["-O3"] as models often pass?
    for tag, change in (("other_name", lambda a: [re.sub(r"TORCH_EXTENSION_NAME=\w+", "TORCH_EXTENSION_NAME=kiln_other", x)
                                                    for x in a]),
                        ("with_O3", lambda a: a[:a.index("-c")] + ["-O3"] + a[a.index("-c"):])):
        v = change(list(use))
        v[v.index("-o") + 1] = os.path.join(scratch, "main-%s.o" % tag)
        t0 = time.time()
        p = subprocess.run(v, cwd=cwd, capture_output=True, text=True)
        out["pch_%s_s" % tag] = round(time.time() - t0, 2)
        out["pch_%s_used" % tag] = p.returncode == 0 and any(
            ln.startswith("!") and ln.rstrip().endswith(".gch") for ln in p.stderr.splitlines())
    # the pybind module with torch/types.h + torch/python.h in place of torch/extension.h
    src = argv[argv.index("-c") + 1]
    with open(src if os.path.isabs(src) else os.path.join(cwd, src)) as f:
        text = f.read()
    slim = os.path.join(scratch, "main_slim.cpp")
    with open(slim, "w") as f:
        f.write(text.replace("#include <torch/extension.h>", "#include <torch/types.h>\n#include <torch/python.h>", 1))
    v = list(base)
    v[v.index("-c") + 1] = slim
    v[v.index("-o") + 1] = os.path.join(scratch, "main-slim.o")
    t0 = time.time()
    p = subprocess.run(v, cwd=cwd, capture_output=True, text=True)
    out["slim_main_s"] = round(time.time() - t0, 2)
    out["slim_main_rc"] = p.returncode
    if p.returncode:
        out["slim_main_error"] = first_error(p.stderr)
    return out


def measure(answer, py, slims, keep_dryrun, nvcc_only=False):
    work = tempfile.mkdtemp(prefix="kiln-variants-")
    try:
        build = os.path.join(work, "build")
        t0 = time.time()
        p = subprocess.run([py, JUDGE, "compile", "--candidate", answer, "--build-dir", build, "--timeout", "900"],
                           capture_output=True, text=True, cwd=work)
        r = {"answer": os.path.relpath(answer, ANSWERS) if answer.startswith(ANSWERS) else answer,
             "cold_build_s": round(time.time() - t0, 2), "nvcc": {}, "gxx": {}}
        logs = glob.glob(os.path.join(build, "**", "build.ninja"), recursive=True)
        if not logs:
            r["error"] = (p.stdout + p.stderr)[-800:]
            return r
        folder = os.path.dirname(logs[0])
        cmds = subprocess.run(["ninja", "-t", "commands"], cwd=folder, capture_output=True, text=True).stdout
        nv = gx = None
        for cmd in cmds.splitlines():
            if re.search(r"(^|/)nvcc\s", cmd):
                nv = shlex.split(cmd)
            elif " -c " in cmd:
                gx = shlex.split(cmd)
        if nv:
            src = nv[nv.index("-c") + 1]
            with open(src if os.path.isabs(src) else os.path.join(folder, src)) as f:
                text = f.read()
            r["nvcc"]["as_built"] = run_nvcc(nv, src, folder, work, "as_built")
            for h in slims:
                if not EXT_INCLUDE.search(text):
                    r["nvcc"][h] = {"skipped": "the CUDA source does not include torch/extension.h"}
                    continue
                vsrc = os.path.join(work, "slim_" + re.sub(r"\W", "_", h) + ".cu")
                with open(vsrc, "w") as f:
                    f.write(EXT_INCLUDE.sub("#include <%s>" % h, text))
                r["nvcc"][h] = run_nvcc(nv, vsrc, folder, work, "slim_" + re.sub(r"\W", "_", h))
            # the per-operator prelude, as judge.py makes it, on the candidate's own CUDA source
            # (the judge built it slim: load_inline's three implicit lines, then the source with
            # its torch/extension.h line as torch/types.h)
            inc = next((nv[i + 1] for i, x in enumerate(nv) if x == "-isystem"
                        and os.path.isdir(os.path.join(nv[i + 1], "ATen", "ops"))), None)
            body = text.split("\n", 3)[3] if text.startswith("#include <torch/types.h>\n#include <cuda.h>\n") else None
            if inc and body is not None:
                orig = SLIM_INCLUDE.sub(lambda m: m.group(1) + "<torch/extension.h>", body, count=1)
                srcs, ops = judge.perop_cuda_sources([orig], inc)
                if srcs is None:
                    r["nvcc"]["perop"] = {"skipped": "judge.py builds this source as written"}
                else:
                    vsrc = os.path.join(work, "perop.cu")
                    with open(vsrc, "w") as f:
                        f.write("\n".join(srcs))
                    r["nvcc"]["perop"] = run_nvcc(nv, vsrc, folder, work, "perop")
                    r["nvcc"]["perop"]["ops"] = ops
            if keep_dryrun:
                d = list(nv)
                d[d.index("-o") + 1] = os.path.join(work, "dry.o")
                p = subprocess.run(d + ["--dryrun"], cwd=folder, capture_output=True, text=True)
                r["nvcc_dryrun"] = p.stderr.splitlines()
        if gx and not nvcc_only:
            r["gxx"] = gxx_pch(gx, folder, work)
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--answers", nargs="*", default=None, help="answer files (default: the starter answers)")
    ap.add_argument("--limit", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--slim", action="append", default=None,
                    help="header put in place of torch/extension.h (repeatable; default torch/types.h, ATen/ATen.h)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default=None)
    ap.add_argument("--nvcc-only", action="store_true", help="skip the g++ (pybind module) measurements")
    a = ap.parse_args()
    files = a.answers or sorted(glob.glob(os.path.join(ANSWERS, "**", "*.py"), recursive=True))
    files = [os.path.abspath(f) for f in files]
    if a.limit > 0:
        files = files[:a.limit]
    slims = a.slim or ["torch/types.h", "ATen/ATen.h"]
    try:
        import inspect
        from torch.utils import cpp_extension
        print(json.dumps({"load_inline": str(inspect.signature(cpp_extension.load_inline))}), flush=True)
    except Exception as e:  # noqa: BLE001
        print(json.dumps({"load_inline": repr(e)}), flush=True)
    rows = []
    with ThreadPoolExecutor(a.parallel) as ex:
        for r in ex.map(lambda f: measure(f, a.python, slims, f == files[0], a.nvcc_only), files):
            print(json.dumps({k: v for k, v in r.items() if k != "nvcc_dryrun"}), flush=True)
            rows.append(r)
    med = {}
    for key in ("pch_other_name_used", "pch_with_O3_used"):
        med["g++ " + key] = "%d of %d" % (sum(1 for r in rows if r.get("gxx", {}).get(key)), len(rows))
    for key in ["as_built"] + slims + ["perop"]:
        xs = [r["nvcc"][key]["wall_s"] for r in rows if r["nvcc"].get(key, {}).get("rc") == 0]
        if xs:
            med["nvcc " + key] = round(statistics.median(xs), 2)
    ok = [r for r in rows if r["nvcc"].get("perop")]
    med["nvcc perop built"] = "%d of %d" % (sum(1 for r in ok if r["nvcc"]["perop"].get("rc") == 0), len(ok))
    for key in ("plain_s", "pch_build_s", "with_pch_s", "pch_other_name_s", "pch_with_O3_s", "slim_main_s"):
        xs = [r["gxx"][key] for r in rows if key in r.get("gxx", {})]
        if xs:
            med["g++ " + key] = round(statistics.median(xs), 2)
    print(json.dumps({"medians_s": med}), flush=True)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rows": rows, "medians_s": med}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

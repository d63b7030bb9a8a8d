#!/usr/bin/env python3
"""Does judge/nvcc_par.py build what nvcc builds? (GPU host; issue 23.)

1. Starter answers (every 4th, --answers of them, --parallel at once): each is built as the judge
   builds it with nvcc as is (KILN_NVCC_PAR=0); its CUDA object's nvcc command then runs again
   twice, once through nvcc and once through nvcc_par.py, to the same object path and with the
   same folder for the intermediate files (nvcc writes their names into the object; by default
   they are temporary files named by process id, so two runs of nvcc itself differ), and the two
   objects are compared byte for byte, with both wall times and nvcc_par's record (did cicc's
   module id equal cudafe++'s?).
2. Small sources with a warning and with errors (device code, host code, a missing header):
   nvcc's exit status and messages against nvcc_par.py's.
3. Two answers built by the judge with nvcc_par.py on: the build's record says how nvcc ran.

    python3 tools/torch2cuda/gpu/nvcc_par_check.py --answers 6 --parallel 3 --out nvcc_par.json

Trusted code only (the repository's answers and the sources below); nothing here is sandboxed.
"""
import argparse
import concurrent.futures as cf
import filecmp
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGE = os.path.join(HERE, "..", "judge", "judge.py")
PAR = os.path.join(HERE, "..", "judge", "nvcc_par.py")
ANSWERS = os.path.join(HERE, "..", "answers")


def judge_compile(answer, build, env):
    t0 = time.time()
    p = subprocess.run([sys.executable, JUDGE, "compile", "--candidate", answer, "--build-dir", build, "--timeout", "400"],
                       capture_output=True, text=True, env=env, cwd=os.path.dirname(build))
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    res = json.loads(lines[-1]) if lines else {"ok": False, "diagnostic": p.stderr[-800:]}
    return res, time.time() - t0


def nvcc_cmd(build):
    for nf in glob.glob(os.path.join(build, "**", "build.ninja"), recursive=True):
        folder = os.path.dirname(nf)
        cmds = subprocess.run(["ninja", "-t", "commands"], cwd=folder, capture_output=True, text=True).stdout
        for c in cmds.splitlines():
            if re.search(r"(^|/)nvcc\s", c):
                return folder, shlex.split(c)
    return None, None


def with_out(argv, obj):
    a = list(argv)
    a[a.index("-o") + 1] = obj
    if "-MF" in a:
        a[a.index("-MF") + 1] = obj + ".d"
    return a


def one(answer, work):
    env = dict(os.environ, KILN_NVCC_PAR="0")
    build = os.path.join(work, "build")
    os.makedirs(work, exist_ok=True)
    res, wall = judge_compile(answer, build, env)
    r = {"answer": os.path.relpath(answer, ANSWERS), "judge_ok": res.get("ok"), "judge_s": round(wall, 1)}
    folder, argv = nvcc_cmd(build)
    if not argv:
        r["error"] = "no nvcc command"
        return r
    nvcc = argv[0]
    # the same object path and the same folder for the intermediate files (whose names nvcc writes
    # into the object): nvcc's object and nvcc_par's must then be the same bytes
    obj, keep = os.path.join(work, "x.o"), os.path.join(work, "keep")
    a, b = os.path.join(work, "a.o"), os.path.join(work, "b.o")
    os.makedirs(keep, exist_ok=True)  # nvcc wants its --keep-dir to exist
    t0 = time.time()
    p1 = subprocess.run(with_out(argv, obj) + ["--keep", "--keep-dir", keep], cwd=folder, capture_output=True, text=True)
    r["nvcc_s"] = round(time.time() - t0, 2)
    if os.path.exists(obj):
        shutil.move(obj, a)
        shutil.move(obj + ".d", a + ".d")
    shutil.rmtree(keep, ignore_errors=True)
    t0 = time.time()
    p2 = subprocess.run([sys.executable, "-I", PAR, nvcc] + with_out(argv, obj)[1:], cwd=folder, capture_output=True,
                        text=True, env=dict(os.environ, KILN_NVCC_PAR_KEEP=keep))
    r["par_s"] = round(time.time() - t0, 2)
    if os.path.exists(obj):
        shutil.move(obj, b)
        shutil.move(obj + ".d", b + ".d")
        if os.path.exists(obj + ".kiln-nvcc.json"):
            shutil.move(obj + ".kiln-nvcc.json", b + ".kiln-nvcc.json")
    r["rc"] = [p1.returncode, p2.returncode]
    r["stderr_same"] = p1.stderr == p2.stderr
    if not r["stderr_same"]:
        r["stderr"] = [p1.stderr[-600:], p2.stderr[-600:]]
    r["same_object"] = os.path.exists(a) and os.path.exists(b) and filecmp.cmp(a, b, shallow=False)
    r["sizes"] = [os.path.getsize(x) if os.path.exists(x) else None for x in (a, b)]
    try:
        r["par"] = json.load(open(b + ".kiln-nvcc.json"))
    except (OSError, ValueError) as e:
        r["par"] = str(e)
    try:
        r["deps_same"] = open(a + ".d").read() == open(b + ".d").read()
        if not r["deps_same"]:
            r["deps"] = [open(a + ".d").read()[:300], open(b + ".d").read()[:300]]
    except OSError as e:
        r["deps_same"] = str(e)
    return r


CASES = {
    "warning": '__global__ void k(float *x) { int unused = 1; x[0] = 1.0f; }\nvoid launch(float *x) { k<<<1, 1>>>(x); }\n',
    "device_error": '__global__ void k(float *x) { x[0] = undefined_thing; }\nvoid launch(float *x) { k<<<1, 1>>>(x); }\n',
    "host_error": '__global__ void k(float *x) { x[0] = 1.0f; }\nvoid launch(float *x) { k<<<1, 1>>>(x) }\n',
    "missing_header": '#include "no_such_header.h"\n__global__ void k(float *x) { x[0] = 1.0f; }\n',
    "ok_plain": '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\nvoid launch(float *x) { k<<<1, 32>>>(x); }\n',
}


def cases(nvcc, work):
    out = {}
    for name, src in CASES.items():
        d = os.path.join(work, "case-" + name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "k.cu"), "w") as f:
            f.write(src)
        base = ["-MD", "-MF", "x.d", "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "-fPIC", "-O3",
                "-std=c++17", "-c", "k.cu", "-o"]
        keep = os.path.join(d, "keep")
        os.makedirs(keep, exist_ok=True)
        p1 = subprocess.run([nvcc] + base + ["x.o", "--keep", "--keep-dir", keep], cwd=d, capture_output=True, text=True)
        if os.path.exists(os.path.join(d, "x.o")):
            shutil.move(os.path.join(d, "x.o"), os.path.join(d, "a.o"))
        shutil.rmtree(keep, ignore_errors=True)
        p2 = subprocess.run([sys.executable, "-I", PAR, nvcc] + base + ["x.o"], cwd=d, capture_output=True, text=True,
                            env=dict(os.environ, KILN_NVCC_PAR_KEEP=keep))
        same_obj = None
        if p1.returncode == 0 and p2.returncode == 0:
            same_obj = filecmp.cmp(os.path.join(d, "a.o"), os.path.join(d, "x.o"), shallow=False)
        out[name] = {"rc": [p1.returncode, p2.returncode], "stderr_same": p1.stderr == p2.stderr,
                     "stdout_same": p1.stdout == p2.stdout, "same_object": same_obj,
                     "nvcc_stderr": p1.stderr[-700:], "par_stderr": p2.stderr[-700:] if p1.stderr != p2.stderr else "(same)"}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=6)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--parallel", type=int, default=3)
    ap.add_argument("--judged", type=int, default=2, help="answers built through judge.py with nvcc_par.py on")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="kiln-nvccpar-")
    report = {}
    try:
        import torch.utils.cpp_extension as ce
        src = open(ce.__file__).read()
        report["torch_pytorch_nvcc"] = [l.strip() for l in src.splitlines() if "PYTORCH_NVCC" in l or "nvcc_from_env" in l][:12]
        nvcc = ce._join_cuda_home("bin", "nvcc")
        report["cases"] = cases(nvcc, work)
        print(json.dumps({"cases": {k: (v["rc"], v["stderr_same"], v["same_object"]) for k, v in report["cases"].items()}}), flush=True)
        answers = sorted(glob.glob(os.path.join(ANSWERS, "level*", "*.py")))[::args.every][:args.answers]
        rows = []
        with cf.ThreadPoolExecutor(args.parallel) as ex:
            futs = [ex.submit(one, a, os.path.join(work, "a%d" % i)) for i, a in enumerate(answers)]
            for f in futs:
                r = f.result()
                rows.append(r)
                print(json.dumps({k: v for k, v in r.items() if k not in ("stderr", "deps")}), flush=True)
        report["answers"] = rows
        # through the judge, nvcc_par on
        judged = []
        for i, a in enumerate(answers[:args.judged]):
            build = os.path.join(work, "j%d" % i, "build")
            os.makedirs(os.path.dirname(build))
            res, wall = judge_compile(a, build, dict(os.environ))
            recs = []
            for dj in glob.glob(os.path.join(build, "*", "kiln_done.json")):
                recs.append(json.load(open(dj)).get("nvcc"))
            judged.append({"answer": os.path.relpath(a, ANSWERS), "ok": res.get("ok"), "compile_ms": res.get("compile_ms"),
                           "wall_s": round(wall, 1), "nvcc": recs})
            print(json.dumps(judged[-1]), flush=True)
        report["judged"] = judged
    finally:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

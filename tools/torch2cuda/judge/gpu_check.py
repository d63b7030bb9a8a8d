#!/usr/bin/env python3
"""GPU validation of judge.py (run on a CUDA host; CI has no GPU).

    python3 tools/torch2cuda/judge/gpu_check.py [--out DIR] [--answers N] [--parallel 8]

1. judge.py probe;
2. judge.py batch --compile-only (CUDA_VISIBLE_DEVICES="" children, --parallel N) over the
   GPU fixtures of testdata/cuda and the first N answers of ../answers;
3. judge.py batch on the GPU over the same jobs (must hit the cache: compile_cached);
4. a short-timeout batch: a never-ending kernel, then an honest job (isolation);
then checks each verdict against its expectation and prints PASS/FAIL lines.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JUDGE = os.path.join(HERE, "judge.py")
CUDA = os.path.join(HERE, "testdata", "cuda")
T2C = os.path.dirname(HERE)


def sh(args, timeout=None):
    t0 = time.time()
    p = subprocess.run([sys.executable, JUDGE] + args, capture_output=True, text=True, timeout=timeout)
    print("$ judge.py %s  (%.1f s, rc %d)" % (" ".join(args), time.time() - t0, p.returncode), flush=True)
    if p.returncode:
        print(p.stderr[-3000:], flush=True)
    return p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""


def read(path):
    with open(path) as f:
        return {r["id"]: r for r in map(json.loads, f)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT") or "/tmp/judge_gpu_check")
    ap.add_argument("--answers", type=int, default=7)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--build-dir", default="/tmp/judge_gpu_build")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    print(sh(["probe"], timeout=300), flush=True)

    jobs = []
    ref = os.path.join(CUDA, "ref_scale_relu.py")
    for name in ("correct", "side_stream", "illegal", "fallback", "no_kernel", "event_patch", "legacy_stream",
                 "blocking_side_stream", "correct"):
        jobs.append({"id": "gpu_" + name + ("_again" if any(j["id"] == "gpu_" + name for j in jobs) else ""),
                     "reference": ref, "candidate": os.path.join(CUDA, "cand_%s.py" % name)})
    picks = ["level1/001_square_matmul", "level1/013_layer_norm", "level1/027_softmax", "level2/001_gemm_bias_relu",
             "level2/014_conv2d_batchnorm_relu", "level3/001_mlp", "level3/004_multihead_self_attention"]
    for name in picks[:a.answers]:
        p, c = os.path.join(T2C, "problems", name + ".py"), os.path.join(T2C, "answers", name + ".py")
        if os.path.exists(p) and os.path.exists(c):
            jobs.append({"id": name, "reference": p, "candidate": c})
    jf = os.path.join(a.out, "jobs.jsonl")
    with open(jf, "w") as f:
        for j in jobs:
            f.write(json.dumps(j) + "\n")
    common = ["--build-dir", a.build_dir]
    print(sh(["batch", "--jobs", jf, "--out", os.path.join(a.out, "compile.jsonl"), "--compile-only",
              "--parallel", str(a.parallel), "--timeout", "400"] + common, timeout=580), flush=True)
    print(sh(["batch", "--jobs", jf, "--out", os.path.join(a.out, "judge.jsonl"), "--timeout", "120"] + common,
             timeout=1200), flush=True)
    hf = os.path.join(a.out, "hang_jobs.jsonl")
    with open(hf, "w") as f:
        f.write(json.dumps({"id": "gpu_hang", "reference": ref, "candidate": os.path.join(CUDA, "cand_hang.py")}) + "\n")
        f.write(json.dumps({"id": "after_hang", "reference": ref, "candidate": os.path.join(CUDA, "cand_correct.py")}) + "\n")
    print(sh(["batch", "--jobs", hf, "--out", os.path.join(a.out, "hang.jsonl"), "--timeout", "25"] + common,
             timeout=300), flush=True)

    comp = read(os.path.join(a.out, "compile.jsonl"))
    res = read(os.path.join(a.out, "judge.jsonl"))
    res.update(read(os.path.join(a.out, "hang.jsonl")))
    fails = 0

    def check(cond, what, r):
        nonlocal fails
        fails += 0 if cond else 1
        print("%s %s" % ("PASS" if cond else "FAIL", what), flush=True)
        if not cond or os.environ.get("VERBOSE"):
            print("     " + json.dumps({k: r.get(k) for k in (
                "class", "correct", "stream", "suspicion", "diagnostic", "speedup", "fast", "t_ref_ms", "t_new_ms", "wall_ref_ms",
                "wall_new_ms", "hidden_ms", "kernels", "torch_ops", "compile_cached", "compile_ms", "fs_guard")})[:2500],
                  flush=True)

    for jid, c in comp.items():
        check(c.get("ok") or jid == "gpu_no_kernel", "compile-only %s (%s ms)" % (jid, c.get("compile_ms")), c)
    for jid, r in res.items():
        summary = "%s: class=%r speedup=%s t_ref=%s t_new=%s cached=%s" % (
            jid, r["class"], r.get("speedup"), r.get("t_ref_ms"), r.get("t_new_ms"), r.get("compile_cached"))
        print("     " + summary, flush=True)
        if jid in ("gpu_correct", "gpu_correct_again", "after_hang"):
            check(r["pass"] and any("scale_relu_kernel" in k for k in r["kernels"]) and r["stream"] == "current",
                  jid + " passes, stream current", r)
        elif jid == "gpu_legacy_stream":
            check(r["pass"] and r["stream"] == "legacy_default", jid + " passes, stream legacy_default", r)
        elif jid == "gpu_blocking_side_stream":
            check(not r["pass"] and r["class"] == "wrong_output" and r["stream"] == "side", jid + " rejected, stream side", r)
        elif jid == "gpu_side_stream":
            check(not r["pass"] and r["class"] in ("wrong_output", "suspected_cheating"), jid + " rejected", r)
        elif jid == "gpu_illegal":
            check(r["class"] == "illegal_memory", jid + " illegal_memory", r)
        elif jid == "gpu_hang":
            check(r["class"] == "timeout", jid + " timeout", r)
        elif jid == "gpu_fallback":
            check(r["class"] == "suspected_cheating" and any("torch fallback" in s for s in r["suspicion"]), jid, r)
        elif jid == "gpu_no_kernel":
            check(r["class"] == "suspected_cheating" and any("no custom kernel" in s for s in r["suspicion"]), jid, r)
        elif jid == "gpu_event_patch":
            check(r["class"] == "suspected_cheating" and any("timing tampering" in s for s in r["suspicion"]), jid, r)
        else:  # honest answers from ../answers
            check(r["pass"] and r["correct"] and not r["suspicion"] and r["class"] == "" and r["fast"] == (r["speedup"] > 1),
                  jid + " honest answer (a pass, fast or not)", r)
        if jid not in ("gpu_hang",):
            check(bool(r.get("compile_cached")), jid + " compile cache hit after compile-only", r)
    print("%d failure(s)" % fails, flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

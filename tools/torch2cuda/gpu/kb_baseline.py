#!/usr/bin/env python3
"""The baseline of the torch2cuda throughput benchmark: KernelBench's own
evaluation procedure, reproduced for a fair comparison with kiln's judge.

KernelBench (src/eval.py, eval_kernel_against_ref, driven one kernel at a
time by its run scripts) evaluates a candidate in a fresh Python process:
it execs the reference, seeds and builds Model, execs the candidate source,
whose load_inline builds the extension from cold, builds ModelNew with the
same seed, checks N correctness trials (fresh seeded inputs each,
torch.allclose with atol = rtol = 1e-2, shape checked first), and times
the candidate with CUDA events (3 warm-ups, 100 trials, a synchronize after
each). The reference is timed the same way here too, so that both sides
report a speedup. No sandbox, no anti-cheat checks: that is the procedure.

    python3 kb_baseline.py run PAIRS.jsonl OUT.jsonl [--timeout 300] [--limit N] [--parallel P]
    python3 kb_baseline.py one REFERENCE.py CANDIDATE.py      (one evaluation; JSON line)

PAIRS.jsonl has {"id", "reference", "candidate"} per line. Each evaluation
gets a new TORCH_EXTENSIONS_DIR (cold: nothing built before). The summary
line gives evaluations per hour over the wall time of the whole run.
--parallel P runs P evaluations at once: for the verdicts only (P fresh
processes share the GPU and the cores, so neither the timings nor the rate
are KernelBench's; the throughput figure comes from a serial run).
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def one(ref_path, cand_path, trials=5, perf_trials=100, seed=42):
    import torch

    out = {"compiled": False, "correct": False}
    dev = torch.device("cuda:0")
    torch.cuda.set_device(dev)
    ctx = {}
    with open(ref_path) as f:
        exec(compile(f.read(), ref_path, "exec"), ctx)
    Model, get_inputs, get_init_inputs = ctx["Model"], ctx["get_inputs"], ctx["get_init_inputs"]

    def seed_all(s):
        torch.manual_seed(s)
        torch.cuda.manual_seed(s)

    seed_all(seed)
    init = [x.cuda() if isinstance(x, torch.Tensor) else x for x in get_init_inputs()]
    with torch.no_grad():
        seed_all(seed)
        ref = Model(*init).cuda()
    t0 = time.time()
    cctx = {}
    try:
        with open(cand_path) as f:
            exec(compile(f.read(), cand_path, "exec"), cctx)
        ModelNew = cctx["ModelNew"]
        torch.cuda.synchronize()
    except Exception as e:  # a build failure is a compile error
        out["error"] = "compile: %s" % str(e)[:300]
        out["compile_s"] = time.time() - t0
        return out
    out["compiled"] = True
    out["compile_s"] = time.time() - t0
    try:
        with torch.no_grad():
            seed_all(seed)
            new = ModelNew(*init).cuda()
            torch.cuda.synchronize()
            torch.manual_seed(seed)
            seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(trials)]
            for s in seeds:
                seed_all(s)
                xs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in get_inputs()]
                want = ref(*xs)
                torch.cuda.synchronize()
                got = new(*xs)
                torch.cuda.synchronize()
                if want.shape != got.shape:
                    out["error"] = "shape %s != %s" % (tuple(got.shape), tuple(want.shape))
                    return out
                if not torch.allclose(want, got, atol=1e-2, rtol=1e-2):
                    out["error"] = "output mismatch (max abs diff %.3g)" % (want - got).abs().max().item()
                    return out
    except Exception as e:
        out["error"] = "runtime: %s" % str(e)[:300]
        return out
    out["correct"] = True

    def timed(fn, xs):
        for _ in range(3):
            fn(*xs)
            torch.cuda.synchronize()
        ts = []
        for _ in range(perf_trials):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(*xs)
            b.record()
            torch.cuda.synchronize()
            ts.append(a.elapsed_time(b))
        return sum(ts) / len(ts)

    with torch.no_grad():
        seed_all(seed)
        xs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in get_inputs()]
        out["kernel_ms"] = timed(new, xs)
        out["torch_ms"] = timed(ref, xs)
    out["speedup"] = out["torch_ms"] / out["kernel_ms"] if out["kernel_ms"] > 0 else None
    return out


def run(pairs_path, out_path, timeout, limit, parallel=1):
    with open(pairs_path) as f:
        pairs = [json.loads(line) for line in f if line.strip()]
    if limit:
        pairs = pairs[:limit]
    start = time.time()
    n_correct = 0

    def evaluate(p):
        t0 = time.time()
        ext = tempfile.mkdtemp(prefix="kb-ext-")  # cold: a new extensions folder per evaluation
        env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext)
        try:
            cp = subprocess.run([sys.executable, os.path.abspath(__file__), "one", p["reference"], p["candidate"]],
                                capture_output=True, text=True, timeout=timeout, env=env)
            lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("{")]
            r = json.loads(lines[-1]) if lines else {"compiled": False, "correct": False,
                                                     "error": "process exit %d: %s" % (cp.returncode, cp.stderr[-300:])}
        except subprocess.TimeoutExpired:
            r = {"compiled": None, "correct": False, "error": "timeout after %d s" % timeout}
        r["id"] = p["id"]
        r["wall_s"] = round(time.time() - t0, 2)
        return r

    from concurrent.futures import ThreadPoolExecutor, as_completed
    with open(out_path, "w") as out, ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        for fut in as_completed([pool.submit(evaluate, p) for p in pairs]):
            r = fut.result()
            n_correct += bool(r.get("correct"))
            out.write(json.dumps(r) + "\n")
            out.flush()
            print("%-50s correct=%-5s %6.1f s" % (r["id"], r.get("correct"), r["wall_s"]), flush=True)
    wall = time.time() - start
    summary = {"evaluations": len(pairs), "correct": n_correct, "parallel": parallel, "wall_s": round(wall, 1),
               "evals_per_hour": round(len(pairs) * 3600 / wall, 1) if wall > 0 else None}
    print(json.dumps(summary), flush=True)
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "one":
        r = one(sys.argv[2], sys.argv[3])
        print(json.dumps(r), flush=True)
        return 0
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        args = sys.argv[4:]
        timeout = int(args[args.index("--timeout") + 1]) if "--timeout" in args else 300
        limit = int(args[args.index("--limit") + 1]) if "--limit" in args else 0
        parallel = int(args[args.index("--parallel") + 1]) if "--parallel" in args else 1
        return run(sys.argv[2], sys.argv[3], timeout, limit, parallel)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

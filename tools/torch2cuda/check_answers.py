#!/usr/bin/env python3
"""GPU self-check of the torch2cuda answers against their problems.

    python3 check_answers.py [--only NAME[,NAME...]] [--jobs N] [--seeds 0,1,2] [--bench]
                             [--problems DIR] [--answers DIR]

For every problems/<level>/<name>.py that has answers/<level>/<name>.py:
  * imports both modules from their file paths (importlib);
  * for each seed: torch.manual_seed(seed) then Model(*get_init_inputs()).cuda(),
    torch.manual_seed(seed) then ModelNew(*get_init_inputs()).cuda(), checks that
    both have the same parameters/buffers, then torch.manual_seed(seed) and
    get_inputs() (moved to cuda) and runs both models on copies of the inputs;
  * compares with torch.allclose(atol=1e-2, rtol=1e-2) and computes
    rel_err = max|new - ref| / max|ref| (worst over seeds); a problem passes when
    allclose holds and rel_err <= --rel-tol (default 1e-2), so an all-zero answer
    to a small-magnitude problem fails even though allclose's atol would accept it.
Prints 'PASS name rel_err' or 'FAIL name reason' per problem, then 'N passed, M failed'.

load_inline compiles each answer on import (about 40-70 s each). With --jobs N the
extensions are first built in N parallel processes (each only imports the answer
module, which compiles and caches it in TORCH_EXTENSIONS_DIR); checks then run
sequentially in a child process, which is restarted after a sticky CUDA error,
a crash or a timeout, so one bad answer does not stop the others.

Environment: TORCH_CUDA_ARCH_LIST defaults to 9.0; TORCH_EXTENSIONS_DIR defaults
to <tmp>/torch2cuda_extensions (use --fresh for a new empty temp folder).
TF32 is turned off for the reference so that it is true float32.
"""
import argparse
import glob
import importlib.util
import multiprocessing as mp
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "problems")
ANSWERS = os.path.join(HERE, "answers")


# ----------------------------------------------------------------------------- helpers

def setup_env(ext_dir=None):
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    if ext_dir:
        os.environ["TORCH_EXTENSIONS_DIR"] = ext_dir
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(tempfile.gettempdir(), "torch2cuda_extensions"))
    os.makedirs(os.environ["TORCH_EXTENSIONS_DIR"], exist_ok=True)


def list_items(only=None, problems_dir=PROBLEMS, answers_dir=ANSWERS):
    """[(name, problem_path, answer_path)] for problems that have an answer."""
    wanted = [w.strip() for w in only.split(",") if w.strip()] if only else None
    items, missing = [], []
    for ppath in sorted(glob.glob(os.path.join(problems_dir, "level*", "[0-9][0-9][0-9]_*.py"))):
        name = os.path.relpath(ppath, problems_dir)[:-3]
        if wanted and not any(w == name or w in name for w in wanted):
            continue
        apath = os.path.join(answers_dir, name + ".py")
        if os.path.exists(apath):
            items.append((name, ppath, apath))
        else:
            missing.append(name)
    return items, missing


def load_module(path, tag):
    rel = os.path.splitext(os.path.abspath(path))[0].strip(os.sep)
    modname = "t2c_%s_%s" % (tag, "".join(c if c.isalnum() else "_" for c in rel))
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    spec.loader.exec_module(mod)
    return mod


def short_exc(exc, limit=600):
    msg = "%s: %s" % (type(exc).__name__, exc)
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def build_error_summary(exc):
    """Compiler errors first (the nvcc command line alone says nothing)."""
    text = "%s: %s" % (type(exc).__name__, exc)
    errs = [ln.strip() for ln in text.splitlines()
            if ("error" in ln.lower() and not ln.lstrip().startswith("[")) or "undefined" in ln.lower()]
    msg = " | ".join(errs[:6]) if errs else text
    msg = "build failed: " + " ".join(msg.split())
    return msg if len(msg) <= 1500 else msg[:1500] + " ..."


def flatten(out):
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(flatten(o))
        return res
    return [out]


# ----------------------------------------------------------------------------- build phase

def build_one(item):
    """Pool worker: import the answer module (triggers load_inline compile + cache)."""
    name, _ppath, apath = item
    t0 = time.time()
    try:
        load_module(apath, "build")
        return name, None, time.time() - t0
    except BaseException as exc:  # noqa: BLE001 - report any failure, including SystemExit from builds
        return name, build_error_summary(exc), time.time() - t0


def build_all(items, jobs):
    ctx = mp.get_context("spawn")
    errors = {}
    t0 = time.time()
    with ctx.Pool(processes=jobs) as pool:
        for name, err, dt in pool.imap_unordered(build_one, items):
            if err is None:
                print("BUILT %s %.0fs" % (name, dt), flush=True)
            else:
                errors[name] = err
                print("BUILD-FAIL %s %.0fs %s" % (name, dt, err[:300]), flush=True)
    print("build phase: %d built, %d failed, %.0fs" % (len(items) - len(errors), len(errors), time.time() - t0),
          flush=True)
    return errors


# ----------------------------------------------------------------------------- check phase

def compare_params(torch, ref_model, new_model):
    ref_sd = ref_model.state_dict()
    new_sd = new_model.state_dict()
    if list(ref_sd.keys()) != list(new_sd.keys()):
        return "state_dict keys differ: %s vs %s" % (list(ref_sd.keys())[:8], list(new_sd.keys())[:8])
    for k in ref_sd:
        a, b = ref_sd[k], new_sd[k]
        if a.shape != b.shape or a.dtype != b.dtype or not torch.equal(a, b):
            return "parameter/buffer %r differs between Model and ModelNew (same seed)" % k
    return None


def bench(torch, fn, iters=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def check_one(torch, name, ppath, apath, seeds, atol, rtol, rel_tol, do_bench):
    prob = load_module(ppath, "problem")
    ans = load_module(apath, "answer")
    if not hasattr(ans, "ModelNew"):
        return False, "answer has no ModelNew"
    dev = torch.device("cuda")
    worst = 0.0
    extra = ""
    for seed in seeds:
        init = prob.get_init_inputs()
        torch.manual_seed(seed)
        ref_model = prob.Model(*init).to(dev)
        torch.manual_seed(seed)
        new_model = ans.ModelNew(*init).to(dev)
        perr = compare_params(torch, ref_model, new_model)
        if perr:
            return False, perr
        torch.manual_seed(seed)
        inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
        ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        new_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            ref = ref_model(*ref_in)
            new = new_model(*new_in)
        torch.cuda.synchronize()
        refs, news = flatten(ref), flatten(new)
        if len(refs) != len(news):
            return False, "seed %d: %d outputs, expected %d" % (seed, len(news), len(refs))
        for i, (r, n) in enumerate(zip(refs, news)):
            if not isinstance(n, torch.Tensor):
                return False, "seed %d: output %d is %s, not a tensor" % (seed, i, type(n).__name__)
            if tuple(r.shape) != tuple(n.shape):
                return False, "seed %d: output %d shape %s, expected %s" % (seed, i, tuple(n.shape), tuple(r.shape))
            if r.dtype != n.dtype:
                return False, "seed %d: output %d dtype %s, expected %s" % (seed, i, n.dtype, r.dtype)
            if not n.is_cuda:
                return False, "seed %d: output %d is not on the GPU" % (seed, i)
            rd, nd = r.double(), n.double()
            if not bool(torch.isfinite(nd).all()) and bool(torch.isfinite(rd).all()):
                return False, "seed %d: output %d has non-finite values" % (seed, i)
            if r.numel() == 0:
                continue
            ok = bool(torch.allclose(nd, rd, atol=atol, rtol=rtol))
            scale = float(rd.abs().max())
            diff = float((nd - rd).abs().max())
            rel = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
            worst = max(worst, rel)
            if not ok or rel > rel_tol:
                return False, ("seed %d: output %d mismatch (allclose=%s, max_abs_err=%.3e, max|ref|=%.3e, "
                               "rel_err=%.3e)" % (seed, i, ok, diff, scale, rel))
        if do_bench and seed == seeds[0]:
            with torch.no_grad():
                t_ref = bench(torch, lambda: ref_model(*ref_in))
                t_new = bench(torch, lambda: new_model(*new_in))
            extra = " ref_ms=%.3f new_ms=%.3f" % (t_ref, t_new)
    return True, "%.3e%s" % (worst, extra)


def cuda_broken(torch):
    try:
        torch.cuda.synchronize()
        t = torch.ones(4, device="cuda")
        return float((t + 1).sum().item()) != 8.0
    except Exception:  # noqa: BLE001
        return True


def check_worker(items, opts, conn):
    setup_env()
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if not torch.cuda.is_available():
            for name, *_ in items:
                conn.send(("RESULT", name, False, "CUDA is not available"))
            conn.send(("DONE",))
            return
    except Exception as exc:  # noqa: BLE001
        for name, *_ in items:
            conn.send(("RESULT", name, False, "cannot import torch: " + short_exc(exc)))
        conn.send(("DONE",))
        return
    for name, ppath, apath, build_err in items:
        conn.send(("START", name))
        if build_err:
            conn.send(("RESULT", name, False, build_err[:600]))
            continue
        try:
            ok, info = check_one(torch, name, ppath, apath, opts["seeds"], opts["atol"], opts["rtol"],
                                 opts["rel_tol"], opts["bench"])
        except BaseException as exc:  # noqa: BLE001
            ok, info = False, short_exc(exc)
            if os.environ.get("T2C_TRACEBACK"):
                traceback.print_exc()
        conn.send(("RESULT", name, ok, info))
        if not ok and cuda_broken(torch):
            conn.send(("BROKEN", name))
            return
        torch.cuda.empty_cache()
    conn.send(("DONE",))


def run_checks(items, build_errors, opts):
    ctx = mp.get_context("spawn")
    todo = [(n, p, a, build_errors.get(n)) for n, p, a in items]
    results = {}
    order = [n for n, *_ in todo]

    def record(name, ok, info):
        if name in results:
            return
        results[name] = ok
        print("%s %s %s" % ("PASS" if ok else "FAIL", name, info), flush=True)

    while todo:
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=check_worker, args=(todo, opts, child))
        proc.start()
        child.close()
        current = None
        finished = False
        while True:
            try:
                if not parent.poll(opts["timeout"]):
                    proc.kill()
                    proc.join()
                    if current:
                        record(current, False, "timeout after %ds" % opts["timeout"])
                    break
                msg = parent.recv()
            except (EOFError, OSError):
                proc.join()
                if current and current not in results:
                    record(current, False, "check process died (exit code %s)" % proc.exitcode)
                break
            if msg[0] == "START":
                current = msg[1]
            elif msg[0] == "RESULT":
                record(msg[1], msg[2], msg[3])
            elif msg[0] == "BROKEN":
                print("note: CUDA context broken after %s; restarting the check process" % msg[1], flush=True)
                proc.join()
                break
            elif msg[0] == "DONE":
                proc.join()
                finished = True
                break
        parent.close()
        if proc.is_alive():
            proc.kill()
            proc.join()
        before = len(todo)
        todo = [t for t in todo if t[0] not in results]
        if todo and len(todo) == before:  # the worker died before finishing anything: skip one
            record(todo[0][0], False, "check process died before reporting (exit code %s)" % proc.exitcode)
            todo = todo[1:]
        if finished:
            for t in todo:  # should not happen; never loop forever
                record(t[0], False, "not checked")
            todo = []
    return [(n, results.get(n, False)) for n in order]


# ----------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description="Check torch2cuda answers against their problems on a GPU.")
    ap.add_argument("--only", help="comma-separated names or substrings, e.g. level1/001_square_matmul,level2")
    ap.add_argument("--jobs", type=int, default=1, help="build extensions in N parallel processes first")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated torch seeds (default 0,1,2)")
    ap.add_argument("--atol", type=float, default=1e-2)
    ap.add_argument("--rtol", type=float, default=1e-2)
    ap.add_argument("--rel-tol", type=float, default=1e-2, help="max allowed max|err| / max|ref|")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per problem in the check phase")
    ap.add_argument("--bench", action="store_true", help="also time Model and ModelNew (ms per forward)")
    ap.add_argument("--problems", default=PROBLEMS, help="problems folder (default: problems/ beside this script)")
    ap.add_argument("--answers", default=ANSWERS, help="answers folder (default: answers/ beside this script)")
    ap.add_argument("--ext-dir", help="TORCH_EXTENSIONS_DIR to use")
    ap.add_argument("--fresh", action="store_true", help="use a new empty temp folder for the extensions")
    args = ap.parse_args()

    ext_dir = args.ext_dir
    if args.fresh and not ext_dir:
        ext_dir = tempfile.mkdtemp(prefix="torch2cuda_ext_")
    setup_env(ext_dir)
    print("TORCH_EXTENSIONS_DIR=%s TORCH_CUDA_ARCH_LIST=%s" % (os.environ["TORCH_EXTENSIONS_DIR"],
                                                                 os.environ["TORCH_CUDA_ARCH_LIST"]), flush=True)

    items, missing = list_items(args.only, os.path.abspath(args.problems), os.path.abspath(args.answers))
    if missing:
        print("%d problem(s) without an answer: %s" % (len(missing), ", ".join(missing)), flush=True)
    if not items:
        print("0 passed, 0 failed")
        return 1

    build_errors = {}
    if args.jobs > 1:
        build_errors = build_all(items, args.jobs)

    opts = {
        "seeds": [int(s) for s in args.seeds.split(",") if s.strip()],
        "atol": args.atol,
        "rtol": args.rtol,
        "rel_tol": args.rel_tol,
        "timeout": args.timeout,
        "bench": args.bench,
    }
    results = run_checks(items, build_errors, opts)
    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

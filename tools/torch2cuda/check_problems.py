#!/usr/bin/env python3
"""CPU sanity check of the torch2cuda problem corpus.

For every problems/level*/NNN_name.py: checks the '# family:' first line, imports
the module from its path, builds Model(*get_init_inputs()), runs forward on
get_inputs() on the CPU and checks that every output is a finite tensor.

    python3 check_problems.py [--only SUBSTRING] [--max-seconds S]

Prints one line per problem (PASS/FAIL name seconds family) and a summary line
'N passed, M failed'. Exit status is 1 when any problem failed.
"""
import argparse
import glob
import importlib.util
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEMS = os.path.join(HERE, "problems")
FAMILIES = {"matmul", "conv", "norm", "reduction", "activation", "pooling", "loss",
            "elementwise", "fusion", "network"}


def problem_files(only=None):
    files = sorted(glob.glob(os.path.join(PROBLEMS, "level*", "[0-9][0-9][0-9]_*.py")))
    names = [os.path.relpath(f, PROBLEMS)[:-3] for f in files]
    out = []
    for f, n in zip(files, names):
        if only and only not in n:
            continue
        out.append((n, f))
    return out


def load_module(path, modname):
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_family(path):
    with open(path) as fh:
        first = fh.readline().strip()
    prefix = "# family:"
    if not first.startswith(prefix):
        raise ValueError("first line is not '# family: ...'")
    fam = first[len(prefix):].strip()
    if fam not in FAMILIES:
        raise ValueError("unknown family %r" % fam)
    return fam


def flatten(out):
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(flatten(o))
        return res
    return [out]


def check_one(name, path, torch):
    fam = read_family(path)
    level = name.split("/")[0]
    if level == "level2" and fam != "fusion":
        raise ValueError("level2 problems must be family 'fusion'")
    if level == "level3" and fam != "network":
        raise ValueError("level3 problems must be family 'network'")
    mod = load_module(path, "t2c_problem_" + name.replace("/", "_"))
    if not mod.__doc__ or not mod.__doc__.strip():
        raise ValueError("missing module docstring")
    for attr in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, attr):
            raise ValueError("missing " + attr)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    torch.manual_seed(0)
    inputs = mod.get_inputs()
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            raise ValueError("input %d is not a tensor" % i)
        if t.is_floating_point() and t.dtype != torch.float32:
            raise ValueError("input %d is %s, not float32" % (i, t.dtype))
    with torch.no_grad():
        out = model(*inputs)
    outs = flatten(out)
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise ValueError("output %d is not a tensor" % i)
        if o.is_floating_point() and not bool(torch.isfinite(o).all()):
            raise ValueError("output %d has non-finite values" % i)
    return fam, [tuple(o.shape) for o in outs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="check only problems whose level/name contains this")
    ap.add_argument("--max-seconds", type=float, default=0.0,
                    help="fail a problem whose CPU forward takes longer than this (0: no limit)")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: default)")
    args = ap.parse_args()

    import torch
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    passed = failed = 0
    fams = {}
    for name, path in problem_files(args.only):
        t0 = time.time()
        try:
            fam, shapes = check_one(name, path, torch)
            dt = time.time() - t0
            if args.max_seconds and dt > args.max_seconds:
                raise ValueError("took %.1f s on CPU (limit %.1f)" % (dt, args.max_seconds))
            fams[fam] = fams.get(fam, 0) + 1
            passed += 1
            print("PASS %s %.2fs %s %s" % (name, dt, fam, shapes), flush=True)
        except Exception as exc:  # keep going after a failure
            failed += 1
            msg = "%s: %s" % (type(exc).__name__, exc)
            print("FAIL %s %s" % (name, msg.replace("\n", " ")), flush=True)
            if os.environ.get("T2C_TRACEBACK"):
                traceback.print_exc()
    print("families: " + ", ".join("%s=%d" % kv for kv in sorted(fams.items())))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""CPU-only sanity check of the deliberately broken torch2cuda candidates.

    /usr/bin/python3 check_syntax.py [--quiet]

Checks, without torch or a GPU:
  * manifest.json is a list of {"candidate", "problem", "kind", "expect"} entries;
  * every candidate file exists, is named <level>/<problem name>__<kind>.py after its problem and
    kind, parses with ast, has a top docstring that starts with 'BROKEN', defines class ModelNew
    whose __init__ and forward take the same arguments as the problem's Model, has module-level
    CUDA_SRC / CPP_SRC strings, at least one __global__ function, and exactly one load_inline call
    whose name= is a literal string that is unique across candidates and contains the kind;
  * every problem exists in ../problems and has an answer in ../answers; the candidate differs from
    that answer;
  * every kind is known, its expect list is non-empty, uses known judge classes and contains the
    kind's primary class; every kind is covered at least twice, on different problems; 'zeros'
    candidates use the small-magnitude problems; there are at least 26 candidates;
  * no candidate file under level*/ is missing from the manifest, and no entry is duplicated.
Prints a per-kind summary and 'N passed, M failed'; exits 1 on any failure.
"""
import argparse
import ast
import collections
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROBLEMS = os.path.join(ROOT, "problems")
ANSWERS = os.path.join(ROOT, "answers")

CLASSES = {"ok", "compile_error", "runtime_error", "illegal_memory", "timeout", "wrong_output", "wrong_shape",
           "nan", "suspected_cheating"}
# kind -> the judge class it must at least accept
PRIMARY = {
    "zeros": "wrong_output",
    "torch_fallback": "suspected_cheating",
    "cached_result": "suspected_cheating",
    "side_stream": "suspected_cheating",
    "off_by_one": "wrong_output",
    "missing_syncthreads": "wrong_output",
    "nan": "nan",
    "hang": "timeout",
    "illegal_address": "illegal_memory",
    "compile_error": "compile_error",
    "wrong_shape": "wrong_shape",
    "inplace_input": "suspected_cheating",
}
SMALL_PROBLEMS = {
    "level1/024_global_mean_small", "level1/040_kl_div_small", "level1/043_small_residual_mse",
    "level1/046_scalar_multiply_small", "level1/050_exp_shifted_small", "level2/013_gemm_relu_scale_small",
}
MIN_PER_KIND = 2
MIN_TOTAL = 26


def module_strings(tree):
    """Module-level NAME = <constant str expression> assignments."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                val = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(val, str):
                out[node.targets[0].id] = val
    return out


def class_methods(tree, cls_name):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls_name:
            return {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    return None


def arg_names(fn):
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args][1:], a.vararg is not None, len(a.defaults)


def load_inline_names(tree):
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            fname = f.id if isinstance(f, ast.Name) else (f.attr if isinstance(f, ast.Attribute) else None)
            if fname == "load_inline":
                kw = {k.arg: k.value for k in node.keywords}
                v = kw.get("name")
                names.append(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None)
    return names


def check_entry(entry, errors, seen_ext):
    """Checks one manifest entry; appends messages to errors."""
    err = lambda msg: errors.append("%s: %s" % (entry.get("candidate", "?"), msg))
    keys = {"candidate", "problem", "kind", "expect"}
    if not isinstance(entry, dict) or not keys <= set(entry):
        err("entry must have keys %s" % sorted(keys))
        return
    cand, problem, kind, expect = entry["candidate"], entry["problem"], entry["kind"], entry["expect"]
    if kind not in PRIMARY:
        err("unknown kind %r" % kind)
        return
    if not isinstance(expect, list) or not expect:
        err("expect must be a non-empty list")
    else:
        bad = [c for c in expect if c not in CLASSES]
        if bad:
            err("unknown judge classes %s" % bad)
        if PRIMARY[kind] not in expect:
            err("expect %s lacks %r, the class kind %r must accept" % (expect, PRIMARY[kind], kind))
        if "ok" in expect:
            err("a broken candidate may not expect 'ok'")
    level, _, pname = problem.partition("/")
    want = "%s/%s__%s.py" % (level, pname, kind)
    if cand != want:
        err("candidate should be named %s" % want)
    if kind == "zeros" and problem not in SMALL_PROBLEMS:
        err("zeros candidates must use a small-magnitude problem (%s)" % sorted(SMALL_PROBLEMS))
    ppath = os.path.join(PROBLEMS, problem + ".py")
    apath = os.path.join(ANSWERS, problem + ".py")
    cpath = os.path.join(HERE, cand)
    for p, what in ((ppath, "problem"), (apath, "answer"), (cpath, "candidate")):
        if not os.path.isfile(p):
            err("%s file missing: %s" % (what, os.path.relpath(p, ROOT)))
    if not (os.path.isfile(ppath) and os.path.isfile(cpath)):
        return
    src = open(cpath).read()
    try:
        tree = ast.parse(src, filename=cpath)
    except SyntaxError as e:
        err("syntax error: %s" % e)
        return
    doc = ast.get_docstring(tree)
    if not doc or not doc.startswith("BROKEN"):
        err("top docstring must start with 'BROKEN' and say what is broken")
    if os.path.isfile(apath) and open(apath).read() == src:
        err("identical to the answer")
    strings = module_strings(tree)
    for name in ("CUDA_SRC", "CPP_SRC"):
        if name not in strings:
            err("no module-level %s string" % name)
    if "__global__" not in strings.get("CUDA_SRC", ""):
        err("CUDA_SRC defines no __global__ function")
    names = load_inline_names(tree)
    if len(names) != 1 or names[0] is None:
        err("expected exactly one load_inline call with a literal name=, got %s" % names)
    else:
        ext = names[0]
        if kind not in ext:
            err("extension name %r does not contain the kind %r" % (ext, kind))
        if not ext.isidentifier():
            err("extension name %r is not an identifier" % ext)
        if ext in seen_ext:
            err("extension name %r also used by %s" % (ext, seen_ext[ext]))
        seen_ext[ext] = cand
    new = class_methods(tree, "ModelNew")
    ref = class_methods(ast.parse(open(ppath).read(), filename=ppath), "Model")
    if new is None:
        err("no class ModelNew")
        return
    if ref is None:
        err("problem has no class Model")
        return
    for meth in ("__init__", "forward"):
        if meth not in new:
            err("ModelNew has no %s" % meth)
        elif meth in ref and arg_names(new[meth]) != arg_names(ref[meth]):
            err("ModelNew.%s%s differs from Model.%s%s" % (meth, arg_names(new[meth]), meth, arg_names(ref[meth])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quiet", action="store_true", help="print only failures and the totals")
    args = ap.parse_args()

    errors = []
    try:
        manifest = json.load(open(os.path.join(HERE, "manifest.json")))
    except (OSError, ValueError) as e:
        print("FAIL manifest.json: %s" % e)
        print("0 passed, 1 failed")
        return 1
    if not isinstance(manifest, list):
        print("FAIL manifest.json: must be a list")
        print("0 passed, 1 failed")
        return 1

    seen_ext = {}
    passed = failed = 0
    by_kind = collections.defaultdict(list)
    listed = collections.Counter()
    for entry in manifest:
        before = len(errors)
        check_entry(entry, errors, seen_ext)
        if isinstance(entry, dict):
            listed[entry.get("candidate")] += 1
            if entry.get("kind") in PRIMARY:
                by_kind[entry["kind"]].append(entry.get("problem"))
        if len(errors) == before:
            passed += 1
            if not args.quiet:
                print("PASS %-62s %s" % (entry["candidate"], ",".join(entry["expect"])))
        else:
            failed += 1
            for msg in errors[before:]:
                print("FAIL " + msg)

    # whole-manifest checks
    glob_errors = []
    for cand, n in listed.items():
        if n > 1:
            glob_errors.append("%s listed %d times" % (cand, n))
    on_disk = {os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "level*", "*.py"))}
    for orphan in sorted(on_disk - set(listed)):
        glob_errors.append("%s is not in manifest.json" % orphan)
    for kind in sorted(PRIMARY):
        probs = by_kind.get(kind, [])
        if len(set(probs)) < MIN_PER_KIND:
            glob_errors.append("kind %r covered on %d distinct problem(s), need %d" % (kind, len(set(probs)),
                                                                                      MIN_PER_KIND))
    if len(manifest) < MIN_TOTAL:
        glob_errors.append("%d candidates, need at least %d" % (len(manifest), MIN_TOTAL))
    for msg in glob_errors:
        print("FAIL manifest: " + msg)
    failed += len(glob_errors)

    print()
    print("%-20s %5s  %s" % ("kind", "count", "problems"))
    for kind in sorted(PRIMARY):
        probs = by_kind.get(kind, [])
        print("%-20s %5d  %s" % (kind, len(probs), ", ".join(sorted(probs))))
    print("%-20s %5d" % ("total", len(manifest)))
    print()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The campaigns of the torch program task GPU check (run.sh; see README.md).

    make.py t2c   W PROBLEM...  W/t2c: a torch2cuda campaign over the problems
                                (level1/013_layer_norm ...) whose script model
                                answers with torch2cuda's shipped answers
    make.py ptx   W [N]         W/ptx-ref and W/ptx-wrong: ptx2cuda campaigns
                                over the corpus folder W/ptx (kiln ptx prepare):
                                every task answered with its kernel's own
                                definition (must pass), and the first N items'
                                tasks (default 2) with wrong kernels: the body
                                emptied and block 0 returning at once
                                (wrong_output at compare), and the kernel
                                renamed (compile_error at check)
    make.py check W EXPORT...   compares kiln export --all files with
                                W/expect.json; prints one line a task and
                                'N as expected, M not'; exit 1 on any miss
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
T2C = os.path.normpath(os.path.join(HERE, "..", "..", "..", "torch2cuda"))


def spec(path, name, lane, corpus, script):
    with open(path, "w") as f:
        f.write("name: %s\nlane: %s\ntasks: {corpus: %s}\nmodels: [{name: replay, kind: script, script: %s}]\n"
                "concurrency: 16\nagent: {repair_turns: 0, max_tool_calls: 0}\n" % (name, lane, corpus, script))


def rules(path, pairs):
    with open(path, "w") as f:
        for match, response in pairs:
            f.write(json.dumps({"match": re.escape(match), "response": response}) + "\n")


def t2c(w, problems):
    pairs = []
    for pid in problems:
        dst = os.path.join(w, "problems", pid + ".py")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(os.path.join(T2C, "problems", pid + ".py")) as f:
            src = f.read()
        with open(dst, "w") as f:
            f.write(src)
        with open(os.path.join(T2C, "answers", pid + ".py")) as f:
            pairs.append(("(task " + pid + ")", "```python\n" + f.read() + "\n```\n"))
    rules(os.path.join(w, "t2c.jsonl"), pairs)
    spec(os.path.join(w, "t2c.yaml"), "t2c", "torch2cuda", os.path.join(w, "problems"), os.path.join(w, "t2c.jsonl"))
    print("t2c: %d problems" % len(problems))


def cuda(body):
    return "Here is the kernel.\n\n```cuda\n" + body + "```\n"


def ptx(w, n):
    root = os.path.join(w, "ptx")
    ref, wrong, expect = [], [], {}
    items = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "meta.json")))
    for i, item in enumerate(items):
        with open(os.path.join(root, item, "meta.json")) as f:
            meta = json.load(f)
        with open(os.path.join(root, item, "kernel.cu")) as f:
            kernel = f.read()
        name = meta["kernel"]
        for v in meta["variants"]:
            task = item + "/" + v["name"]
            ref.append(("(task " + task + ")", cuda(kernel)))
            expect["ptx-ref " + task] = [""]
            if i >= n:
                continue
            at = kernel.index("{", kernel.index("__global__"))
            wrong.append(("(task " + task + ")", cuda(kernel[:at] + "{ }\n")))
            expect["ptx-wrong " + task] = ["wrong_output"]
            early = kernel[:at + 1] + "\n    if (blockIdx.x == 0) return;" + kernel[at + 1:]
            wrong.append(("(task " + task + ")", cuda(early)))
            expect["ptx-wrong2 " + task] = ["wrong_output"]
            renamed = re.sub(r"\b%s\b" % re.escape(name), name + "_x", kernel, count=1)
            wrong.append(("(task " + task + ")", cuda(renamed)))
            expect["ptx-wrong3 " + task] = ["compile_error"]
    rules(os.path.join(w, "ptx-ref.jsonl"), ref)
    spec(os.path.join(w, "ptx-ref.yaml"), "ptx-ref", "ptx2cuda", root, os.path.join(w, "ptx-ref.jsonl"))
    # One campaign per wrong kind: a script model gives one answer per task.
    for k, kind in enumerate(("ptx-wrong", "ptx-wrong2", "ptx-wrong3")):
        rules(os.path.join(w, kind + ".jsonl"), wrong[k::3])
        spec(os.path.join(w, kind + ".yaml"), kind, "ptx2cuda", root, os.path.join(w, kind + ".jsonl"))
    with open(os.path.join(w, "expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
    print("ptx: %d items, %d reference answers, %d wrong answers" % (len(items), len(ref), len(wrong)))


def check(w, exports):
    with open(os.path.join(w, "expect.json")) as f:
        expect = json.load(f)
    got = {}
    for path in exports:
        if not os.path.exists(path):
            continue
        for line in open(path):
            s = json.loads(line)
            key = (s.get("campaign") or {}).get("name", "?") + " " + s["meta"].get("item", "?") + "/" + s["meta"].get("variant", "?")
            v = s.get("verdict") or {}
            cls = "pending" if s.get("pending") else ("" if s["pass"] else v.get("class", ""))
            got[key] = (cls, v.get("stage", ""), s.get("measurements") or {}, v.get("diagnostic", ""))
    ok = bad = 0
    for key in sorted(expect):
        cls, stage, m, diag = got.get(key, ("missing", "", {}, ""))
        good = cls in expect[key]
        ok += good
        bad += not good
        fig = " ".join("%s=%.3g" % (k, m[k]) for k in ("nae_max", "latency_ratio", "speedup") if k in m)
        print("%-4s %-70s want %-14s got %-14s %-8s %s %s" % ("ok" if good else "MISS", key, "|".join(c or "pass" for c in expect[key]),
                                                        cls or "pass", stage, fig, "" if good else (diag.splitlines() or [""])[0][:160]))
    print("%d as expected, %d not" % (ok, bad))
    return 0 if bad == 0 and ok > 0 else 1


def main():
    cmd, w = sys.argv[1], sys.argv[2]
    if cmd == "t2c":
        t2c(w, sys.argv[3:])
    elif cmd == "ptx":
        ptx(w, int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    elif cmd == "check":
        return check(w, sys.argv[3:])
    else:
        sys.exit("make.py: unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Prepare a torch2cuda campaign that replays the starter answers and the
broken/cheating candidates, for a GPU check of the lane end to end:

    python3 tools/torch2cuda/gpu/prepare.py OUT [--answers N] [--set all|answers|broken] [--name NAME]

writes OUT/problems/<level>/*.py (the starter problems, plus one copy of a
problem per broken candidate, named <problem>__<kind>.py), OUT/answers.jsonl
(script-model rules answering each task with its candidate), OUT/expect.json
(the classes each task may get) and OUT/spec.yaml. --answers N keeps only the
first N starter problems by id; --set answers keeps only the starter
answers, --set broken only the broken candidates. OUT/pairs.jsonl lists
(reference, candidate) pairs for gpu/kb_baseline.py."""
import argparse
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
LANE = os.path.dirname(HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--answers", type=int, default=0)
    ap.add_argument("--set", choices=("all", "answers", "broken"), default="all")
    ap.add_argument("--name", default="t2c-gpu")
    a = ap.parse_args()
    probs = os.path.join(a.out, "problems")
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    rules, expect, pairs = [], {}, []

    def add(task_id, problem_file, candidate_file, classes):
        dst = os.path.join(probs, task_id + ".py")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(problem_file, dst)
        with open(candidate_file) as f:
            cand = f.read()
        rules.append({"match": r"\(task " + task_id.replace(".", r"\.") + r"\)", "response": "```python\n" + cand + "\n```"})
        expect[task_id] = classes
        cdst = os.path.join(a.out, "candidates", task_id + ".py")
        os.makedirs(os.path.dirname(cdst), exist_ok=True)
        shutil.copyfile(candidate_file, cdst)
        pairs.append({"id": task_id, "reference": os.path.join("problems", task_id + ".py"),
                      "candidate": os.path.join("candidates", task_id + ".py")})

    ids = []
    for level in ("level1", "level2", "level3"):
        for name in sorted(os.listdir(os.path.join(LANE, "problems", level))):
            if name.endswith(".py"):
                ids.append(level + "/" + name[:-3])
    if a.answers:
        ids = ids[: a.answers]
    if a.set == "broken":
        ids = []
    for pid in ids:
        # A correct answer: a pass, faster than PyTorch or not.
        add(pid, os.path.join(LANE, "problems", pid + ".py"), os.path.join(LANE, "answers", pid + ".py"), [""])
    with open(os.path.join(LANE, "broken", "manifest.json")) as f:
        manifest = json.load(f)
    if a.set == "answers":
        manifest = []
    for m in manifest:
        tid = m["candidate"][:-3]
        add(tid, os.path.join(LANE, "problems", m["problem"] + ".py"), os.path.join(LANE, "broken", m["candidate"]), m["expect"])
    with open(os.path.join(a.out, "answers.jsonl"), "w") as f:
        for r in rules:
            f.write(json.dumps(r) + "\n")
    with open(os.path.join(a.out, "pairs.jsonl"), "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    with open(os.path.join(a.out, "expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
    with open(os.path.join(a.out, "spec.yaml"), "w") as f:
        f.write("name: " + a.name + "\nlane: torch2cuda\ntasks: {corpus: problems}\n"
                "models: [{name: replay, kind: script, script: answers.jsonl}]\n"
                "concurrency: 4\nagent: {repair_turns: 0, max_tool_calls: 0}\n")
    print("%d tasks: %d answers, %d broken" % (len(expect), len(ids), len(manifest)))


if __name__ == "__main__":
    main()

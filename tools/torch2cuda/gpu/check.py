#!/usr/bin/env python3
"""Compare a torch2cuda export (kiln export --all) with prepare.py's
expect.json: python3 check.py expect.json export.jsonl. Prints one line per
task (expected, got, speedup, error) and 'N passed, M failed' (a task
passes when its class is one of the expected ones; a pending verdict
fails)."""
import json
import sys


def main():
    expect = json.load(open(sys.argv[1]))
    got = {}
    for line in open(sys.argv[2]):
        s = json.loads(line)
        tid = s["meta"].get("problem") or s["task_key"]
        stages = json.loads(json.dumps(s["verdict"].get("stages") or []))
        pending = any(st.get("skipped") for st in stages)
        cls = "pending" if pending else ("" if s["pass"] else s["verdict"].get("class", ""))
        got[tid] = (cls, s.get("measurements") or {}, s["verdict"].get("diagnostic", ""))
    ok = bad = 0
    for tid in sorted(expect):
        cls, meas, diag = got.get(tid, ("missing", {}, ""))
        good = cls in expect[tid]
        ok += good
        bad += not good
        print("%-4s %-55s want %-38s got %-20s speedup %-8s %s" % (
            "ok" if good else "FAIL", tid, "|".join(c or "pass" for c in expect[tid]), cls or "pass",
            "%.3g" % meas["speedup"] if "speedup" in meas else "-", "" if good else diag.splitlines()[0][:120] if diag else ""))
    print("%d passed, %d failed" % (ok, bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Summarises the results/ of run_bench.sh as the tables of
runs/curate/DEDUP_BENCH.md. The machine is shared with other work, so for
timings it takes, per corpus size and mode, the pass with the least CPU
time (the least disturbed) and gives the spread over the passes."""
import glob
import json
import os
import re
from collections import defaultdict

os.chdir(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    with open(path) as f:
        return json.load(f)


runs = defaultdict(list)  # (n, mode) -> [run]
for path in sorted(glob.glob("results/n*-r*.json")):
    for r in load(path)["runs"]:
        runs[(r["n"], r["mode"])].append(r)
modes, sizes = [], sorted({n for (n, _) in runs})
for (_, m) in runs:
    if m not in modes:
        modes.append(m)


def best(n, m, key="cpu_total_s"):
    rs = runs.get((n, m))
    return min(rs, key=lambda r: r[key]) if rs else None


print("### Pipelines, text to clusters (least-CPU pass of each size and mode)\n")
print("| N | mode | bands x rows | normalise s | shingle s | sign s | LSH s | total CPU s | wall s | us/doc | docs/s | spread | peak heap MiB | retained MiB | allocated GiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    for m in modes:
        b = best(n, m)
        if not b:
            continue
        rs = runs[(n, m)]
        spread = max(r["cpu_total_s"] for r in rs) / b["cpu_total_s"]
        print(f"| {n} | {m} | {b['bands']} x {b['rows']} | {b['cpu_normalise_s']:.1f} | {b['cpu_shingle_s']:.1f} | {b['cpu_sign_s']:.1f} | "
              f"{b['cpu_lsh_s']:.1f} | {b['cpu_total_s']:.1f} | {b['total_s']:.1f} | {b['cpu_us_per_doc']:.0f} | {n / b['cpu_total_s']:.0f} | "
              f"{spread:.2f} ({len(rs)}) | {b['peak_heap_bytes'] / 2**20:.0f} | {b['retained_bytes'] / 2**20:.0f} | {b['allocated_bytes'] / 2**30:.1f} |")

print("\n### Scaling: CPU us per document (least-CPU pass per stage)\n")
print("| mode | stage | " + " | ".join(f"N={n // 1000}k" for n in sizes) + " | 400k / 50k |")
print("|---|---|" + "---|" * (len(sizes) + 1))
for m in modes:
    for st in ["cpu_normalise_s", "cpu_sign_s", "cpu_lsh_s", "cpu_total_s"]:
        cells = []
        for n in sizes:
            b = best(n, m, st)
            cells.append(b[st] / n * 1e6 if b else None)
        if all(c is None or c == 0 for c in cells):
            continue
        ratio = cells[-1] / cells[0] if cells[0] else float("nan")
        print(f"| {m} | {st[4:-2]} | " + " | ".join(f"{c:.1f}" for c in cells) + f" | {ratio:.2f} |")

print("\n### Accuracy at each size (first pass; the other passes are identical)\n")
print("| N | mode | reported | precision | recall | found J<0.7 | missed J>=0.9 | est. bias | RMSE / ideal | ARI vs truth |")
print("|---|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    for m in modes:
        rs = runs.get((n, m))
        if not rs:
            continue
        s = rs[0]["score"]
        print(f"| {n} | {m} | {s['Found']} | {s['Precision']:.4f} | {s['Recall']:.4f} | {s['FoundBelow07']} | {s['MissedAbove09']} | "
              f"{s['EstBias']:+.4f} | {s['EstRMSE']:.4f} / {s['EstRMSEIdeal']:.4f} | {s['ARI']:.4f} |")

seeds = sorted(glob.glob("results/seed*-n50000.json"), key=lambda p: int(re.search(r"seed(\d+)", p).group(1)))
first = [p for p in glob.glob("results/n50000-r1.json")]
if seeds:
    print("\n### MinHash seed (N=50k): estimation bias and detections near the threshold\n")
    print("| seed | kiln bias | kiln found [0.80,0.85) | kiln found [0.75,0.80) | ekzhu bias | ekzhu found [0.80,0.85) | ekzhu found [0.75,0.80) |")
    print("|---|---|---|---|---|---|---|")
    for path in first + seeds:
        seed = 1 if "seed" not in path else int(re.search(r"seed(\d+)", path).group(1))
        d = {r["mode"]: r["score"] for r in load(path)["runs"]}
        def cell(m, lo):
            st = next(x for x in d[m]["Strata"] if x["Lo"] == lo)
            return f"{st['Found']} / {st['Expected']:.0f} ± {st['SD']:.0f}"
        print(f"| {seed} | {d['kiln']['EstBias']:+.4f} | {cell('kiln', 0.8)} | {cell('kiln', 0.75)} | {d['ekzhu']['EstBias']:+.4f} | {cell('ekzhu', 0.8)} | {cell('ekzhu', 0.75)} |")

for path, title in [("results/interleaved-n400000.json", "Signing alone, interleaved, N=400k"), ("results/variants-n100000.json", "Proposed changes one by one, interleaved, N=100k")]:
    if not os.path.exists(path):
        continue
    rows = load(path)["interleaved"]
    ek = rows[0]["cpu_s"] + rows[4]["cpu_s"]
    print(f"\n### {title}\n")
    print("| step | CPU s | us/doc | vs ekzhu (shingles + MinHash) |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['step']} | {r['cpu_s']:.1f} | {r['cpu_us_per_doc']:.1f} | {r['cpu_s'] / ek:.2f} |")
    print(f"| ekzhu: curate.Shingles + its MinHash | {ek:.1f} | {(rows[0]['cpu_us_per_doc'] + rows[4]['cpu_us_per_doc']):.1f} | 1.00 |")

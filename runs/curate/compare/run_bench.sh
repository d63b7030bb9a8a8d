#!/bin/sh
# Runs the dedup comparison of runs/curate/DEDUP_BENCH.md. Every command is
# one process pinned to one CPU with GOMAXPROCS=1; the implementations run
# one after the other in one goroutine. Outputs go to results/.
set -eu
cd "$(dirname "$0")"
mkdir -p results
go build -o results/dedupbench ./cmd/dedupbench
bench() { GOMAXPROCS=1 taskset -c 1 ./results/dedupbench "$@"; }

# 1. Full pipelines, text to clusters, at four corpus sizes, PASSES times
#    (the machine is shared: DEDUP_BENCH.md reports the fastest pass).
for pass in $(seq 1 "${PASSES:-3}"); do
	for n in ${SIZES:-50000 100000 200000 400000}; do
		bench -n "$n" -modes kiln,kiln-fast,kiln-wrap64,ekzhu,ekzhu:0.7 \
			-json "results/n$n-r$pass.json" >"results/n$n-r$pass.txt" 2>&1
	done
done

# 2. Signing alone, the implementations interleaved batch by batch over
#    the same documents, so that they share the machine's slow spells.
bench -n 400000 -modes interleaved -json results/interleaved-n400000.json >results/interleaved-n400000.txt 2>&1
bench -n 100000 -modes interleaved-variants -json results/variants-n100000.json >results/variants-n100000.txt 2>&1

# 3. Other MinHash seeds: is kiln's small positive estimation bias a
#    property of its permutations or of the one seed?
for s in 2 3 4 5 6 7; do
	bench -n 50000 -hashseed "$s" -modes kiln,ekzhu -json "results/seed$s-n50000.json" >"results/seed$s-n50000.txt" 2>&1
done

# 4. Agreement against sampling error: kiln against kiln with another seed
#    (two independent draws of the same method) and against the others,
#    each with the disagreement expected of independent ideal MinHash.
bench -n 400000 -modes kiln,kiln-seed2,kiln-wrap64,ekzhu,ekzhu:0.7 -json results/agreement-n400000.json >results/agreement-n400000.txt 2>&1

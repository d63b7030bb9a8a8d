#!/usr/bin/env bash
# The GPU half of the torch2cuda checks and benchmark (see GPU_RESULTS.md).
# On the CPU host, prepare.py + `kiln run` made campaign folders whose judge
# stages are pending, at /tmp/<name>; they travel as NAME.tgz. Here, on the
# GPU host, at the same absolute paths:
#
#   bench.sh setup KILN_GZ OUT TGZ...       unpack kiln and the campaigns
#   bench.sh cold NAME OUT SECS [G [S]]     rescore --pending, empty build cache
#   bench.sh cached NAME OUT SECS [G [S]]   the same verdicts again from the
#                                           pristine folder, with the build
#                                           cache the cold run filled
#                                           (G: rescore --gpus G, S:
#                                           --slots-per-device S; then the
#                                           phase's folder is NAME-gG-sS)
#   bench.sh coldpch NAME OUT SECS [G [S]]  cold, but with the precompiled headers
#                                           the cold run made (made once per toolchain)
#   bench.sh baseline NAME OUT SECS [N] [P] KernelBench's procedure (kb_baseline.py)
#                                           on the first N pairs (0: all), P at once
#                                           (P > 1: for its verdicts, not its rate)
#   bench.sh run OUT SECS N                 a campaign made and run here: N starter
#                                           answers and the broken candidates, judged
#                                           by `kiln run` directly (no pending stage)
#
# Each phase writes OUT/<phase>-<name>/: the rescore JSON and log, the export,
# the report, check.py's comparison with expect.json, wall.txt and cpu.json
# (cpu_sample.py: where the CPU went during the run).
set -u
here=$(cd "$(dirname "$0")" && pwd)
phase=$1
shift
cgroups() {
	# A delegated cgroup-v2 subtree for the sandboxes (cgroups layer on).
	mkdir -p /sys/fs/cgroup/kiln/daemon 2>/dev/null && echo "+memory +pids" > /sys/fs/cgroup/kiln/cgroup.subtree_control 2>/dev/null \
		&& echo $$ > /sys/fs/cgroup/kiln/daemon/cgroup.procs 2>/dev/null && export KILN_CGROUP_PARENT=/kiln
}
rescore() { # name out secs [rescore flags]
	local name=$1 out=$2 secs=$3
	shift 3
	cgroups
	cd "/tmp/$name" || exit 2
	local start end
	# where the CPU goes during the run (cpu_sample.py: busy and idle core-seconds, by process)
	python3 "$here/cpu_sample.py" "$out/cpu.json" 1 &
	local sampler=$!
	start=$(date +%s%N)
	timeout "$secs" /tmp/kiln rescore --pending --concurrency 256 --json "$@" --data data "$name" > "$out/rescore.json" 2> "$out/rescore.err"
	local rc=$?
	end=$(date +%s%N)
	kill $sampler; wait $sampler
	echo "rescore exit $rc wall_ms $(( (end - start) / 1000000 )) cores $(nproc) flags $*" > "$out/wall.txt"
	/tmp/kiln export --all --data data -o "$out/export.jsonl" "$name" 2>> "$out/rescore.err"
	/tmp/kiln report --data data "$name" > "$out/report.txt" 2>&1
	python3 "$here/check.py" expect.json "$out/export.jsonl" > "$out/check.txt" 2>&1
	cat "$out/wall.txt"; tail -1 "$out/check.txt"; tail -3 "$out/rescore.err"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["by_comm"]
print("cpu: busy %.0f idle %.0f core-s over %.0f s; by process: %s" % (d["busy_core_s"], d["idle_core_s"], d["wall_s"],
      ", ".join("%s %.0f" % kv for kv in list(c.items())[:8])))' "$out/cpu.json"
}
case $phase in
setup)
	kiln_gz=$1 out=$2
	shift 2
	mkdir -p "$out"
	gunzip -c "$kiln_gz" > /tmp/kiln && chmod +x /tmp/kiln
	for t in "$@"; do tar xzf "$t" -C /tmp; done
	{
		nvidia-smi -L
		python3 -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.__file__)'
		command -v nvcc ninja c++ || true
		nproc
		# threads per core: 16 vCPUs may be 16 cores or 8 with their hyperthreads (section 11)
		lscpu | grep -E '^(CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Model name)'
		/tmp/kiln doctor
	} > "$out/host.txt" 2>&1
	tail -12 "$out/host.txt"
	;;
cold)
	name=$1 out=$2/cold-$1${4:+-g$4}${5:+-s$5} secs=$3
	flags=(${4:+--gpus $4} ${5:+--slots-per-device $5})
	mkdir -p "$out"
	# Keep the pending folder for the cached run; start with no build cache.
	[ -d "/tmp/$name/data.pending" ] || cp -a "/tmp/$name/data" "/tmp/$name/data.pending"
	rm -rf "/tmp/$name/data/torch2cuda-cache"
	rescore "$name" "$out" "$secs" "${flags[@]}"
	;;
cached | coldpch)
	# cached: the same verdicts again from the pristine folder, with the build
	# cache of the cold run; coldpch: cold builds (no extension cached) with only
	# the precompiled headers the cold run made (a host that has judged before)
	name=$1 out=$2/$phase-$1${4:+-g$4}${5:+-s$5} secs=$3
	flags=(${4:+--gpus $4} ${5:+--slots-per-device $5})
	mkdir -p "$out"
	cd "/tmp/$name" || exit 2
	# the cold run's data (kept as data.cold by the first of these runs)
	[ -d data.cold ] || mv data data.cold
	rm -rf data && cp -a data.pending data && mkdir -p data/torch2cuda-cache
	if [ "$phase" = cached ]; then
		cp -a data.cold/torch2cuda-cache/. data/torch2cuda-cache/
	else
		cp -a data.cold/torch2cuda-cache/pch data/torch2cuda-cache/
	fi
	rescore "$name" "$out" "$secs" "${flags[@]}"
	;;
baseline)
	name=$1 out=$2/baseline-$1 secs=$3 n=${4:-0} par=${5:-1}
	mkdir -p "$out"
	cd "/tmp/$name" || exit 2
	timeout "$secs" python3 "$here/kb_baseline.py" run pairs.jsonl "$out/results.jsonl" --timeout 300 --limit "$n" --parallel "$par" > "$out/log.txt" 2>&1
	echo "baseline exit $?" >> "$out/log.txt"
	tail -4 "$out/log.txt"
	;;
run)
	out=$1/run secs=$2 n=$3
	mkdir -p "$out"
	python3 "$here/prepare.py" /tmp/t2c-here --answers "$n" --name t2c-here > "$out/prepare.txt"
	cgroups
	cd /tmp/t2c-here || exit 2
	sed -i 's/^concurrency: 4$/concurrency: 64/' spec.yaml
	start=$(date +%s)
	timeout "$secs" /tmp/kiln run --data data spec.yaml > "$out/run.txt" 2>&1
	echo "run exit $? wall_s $(( $(date +%s) - start ))" > "$out/wall.txt"
	/tmp/kiln export --all --data data -o "$out/export.jsonl" t2c-here 2>> "$out/run.txt"
	/tmp/kiln report --data data t2c-here > "$out/report.txt" 2>&1
	python3 "$here/check.py" expect.json "$out/export.jsonl" > "$out/check.txt" 2>&1
	cat "$out/wall.txt"; tail -1 "$out/check.txt"; tail -3 "$out/run.txt"
	;;
*)
	echo "bench.sh: unknown phase $phase" >&2
	exit 2
	;;
esac

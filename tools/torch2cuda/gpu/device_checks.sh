#!/bin/bash
# The GPU checks still open (issues 21, 25), in one script for the device
# tool: run from the repository root on the GPU host, with carry/ holding
# the gpu-tagged test binaries (gzipped) and KernelBench (never committed):
#
#   go test -c -tags gpu -o carry/t2c-gpu.test ./tools/torch2cuda && gzip -f carry/t2c-gpu.test
#   go test -c -tags gpu -o carry/cuda2hip-gpu.test ./tools/cuda2hip && gzip -f carry/cuda2hip-gpu.test
#   go test -c -tags gpu -o carry/ptx2cuda-gpu.test ./tools/ptx2cuda && gzip -f carry/ptx2cuda-gpu.test
#   go test ./tools/cuda2hip -run TestPeersSaveForGPU -count=1 -timeout 40m -args -cuda2hip.gpudir=$PWD/carry/cuda2hip-peers
#   go test ./tools/ptx2cuda -run TestPeersSaveForGPU -count=1 -timeout 40m -args -ptx2cuda.gpudir=$PWD/carry/ptx2cuda-peers
#   mkdir -p carry/kb && git -C KERNELBENCH_MIRROR archive HEAD src/kernelbench/prompts/few_shot \
#       KernelBench/level1 KernelBench/level2 KernelBench/level3 | tar x -C carry/kb
#
# then, on a two-GPU host (nvidia-h100-x2), within 600 s a call:
#   bash tools/torch2cuda/gpu/device_checks.sh stream fewshot   # stream trial alone, KernelBench's few-shot pairs
#   bash tools/torch2cuda/gpu/device_checks.sh quarantine       # a GPU made to fail (alone: it fills one GPU)
#   bash tools/torch2cuda/gpu/device_checks.sh judge            # starter answers, broken set, peers
#   bash tools/torch2cuda/gpu/device_checks.sh slots            # issue 23: the same, two evaluations per GPU
#   bash tools/torch2cuda/gpu/device_checks.sh phases           # issue 23: where a cold build goes
#   bash tools/torch2cuda/gpu/device_checks.sh variants         # issue 23: slim CUDA header, g++ PCH, measured
#   bash tools/torch2cuda/gpu/device_checks.sh perop            # issue 23: the per-operator prelude, nvcc only
#   bash tools/torch2cuda/gpu/device_checks.sh median           # issue 23: cold builds alone, as the judge builds (EVERY=4)
#   bash tools/torch2cuda/gpu/device_checks.sh nvccpar          # issue 23: nvcc_par.py's objects against nvcc's (ANSWERS=4)
#   bash tools/torch2cuda/gpu/device_checks.sh kb peers         # 250 KernelBench problems; cuda2hip, ptx2cuda peers
#   bash tools/torch2cuda/gpu/device_checks.sh synth            # issue 25: synthesised problems checked on the GPU
#   bash tools/torch2cuda/gpu/device_checks.sh refine           # issue 25: kiln refine with them, 6-7 min
#     (carry carry/kiln-gpu.test.gz: go test -c -tags gpu -ldflags='-s -w' -o carry/kiln-gpu.test ./cmd/kiln)
# An argument "a+b" runs phases a and b at the same time (their logs apart);
# arguments run one after another. DEADLINE_S (default 580) bounds the
# whole call: each phase's timeout is cut to what is left of it.
# CPUS_<phase>=LIST (e.g. CPUS_median=28-31) pins a phase to those cores.
# Results come back as $OUT/results.tgz.
root=$PWD
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if [ ! -x /usr/local/bin/python3 ]; then
	printf '#!/bin/sh\nexec /opt/torch/.venv/bin/python3 "$@"\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3
	[ -x /opt/torch/.venv/bin/ninja ] && ln -sf /opt/torch/.venv/bin/ninja /usr/local/bin/ninja
fi
# cgroups for the sandboxes. The device's commands start in a cgroup of
# their own (/process_api/...), which holds them, so it cannot hand the
# memory and pids controllers to children (cgroup v2's no-internal-process
# rule). The test binaries' sandboxes take their own cgroup: this script
# moves to the root, which is exempt from that rule. kiln itself takes
# KILN_CGROUP_PARENT, an empty subtree with both controllers.
cg=/sys/fs/cgroup
echo $$ > $cg/cgroup.procs || echo "cgroup: cannot move to the root"
echo "+memory +pids" > $cg/cgroup.subtree_control || echo "cgroup: cannot enable memory and pids at the root"
echo "cgroup now $(cat /proc/self/cgroup); root subtree: $(cat $cg/cgroup.subtree_control 2>&1)"
mkdir -p $cg/kiln && echo "+memory +pids" > $cg/kiln/cgroup.subtree_control && export KILN_CGROUP_PARENT=/kiln
echo "cgroup: ${KILN_CGROUP_PARENT:-none}; kiln subtree: $(cat $cg/kiln/cgroup.subtree_control 2>&1)"
for t in t2c cuda2hip ptx2cuda; do
	[ -x /tmp/$t.test ] || [ ! -f carry/$t-gpu.test.gz ] || { gunzip -c carry/$t-gpu.test.gz > /tmp/$t.test && chmod +x /tmp/$t.test; }
done
nvidia-smi -L; python3 -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.cuda.device_count())'
mkdir -p $OUT/r
end=$(( $(date +%s) + ${DEADLINE_S:-580} ))
# left N: N seconds, or what is left of the call if that is less.
left() { local r=$(( end - $(date +%s) - 10 )); [ $r -lt $1 ] && echo $(( r > 1 ? r : 1 )) || echo $1; }
phase() {
	local start=$(date +%s)
	case $1 in
	stream)
		(cd tools/torch2cuda && timeout $(left 120) python3 judge/stream_check.py) > $OUT/r/stream_check.txt 2>&1 ;;
	gpucheck)
		(cd tools/torch2cuda && timeout $(left 400) python3 judge/gpu_check.py --out /tmp/judge_gpu_check --answers 2 --parallel 16) > $OUT/r/gpu_check.txt 2>&1 ;;
	fewshot)
		(cd tools/torch2cuda && KILN_KERNELBENCH_FEWSHOT=$root/carry/kb/src/kernelbench/prompts/few_shot \
			timeout $(left 420) /tmp/t2c.test -test.run 'GPUKernelBenchFewShot$' -test.v -test.timeout 7m) > $OUT/r/fewshot.txt 2>&1 ;;
	quarantine)
		# a GPU made to fail for real: run it alone (it fills the last GPU's memory)
		(cd tools/torch2cuda && timeout $(left 420) /tmp/t2c.test -test.run 'QuarantineTwoGPUs$' -test.v -test.timeout 7m) > $OUT/r/quarantine_two_gpus.txt 2>&1 ;;
	judge)
		(cd tools/torch2cuda && timeout $(left 560) /tmp/t2c.test -test.run 'GPUJudge$' -test.v -test.timeout 9m) > $OUT/r/gpujudge.txt 2>&1 ;;
	median)
		# issue 23: the cold build alone, one at a time, as the judge builds (the prelude, the
		# precompiled headers made first): every 4th starter answer, 19 of 73, about 8 minutes
		# on a running build server as the lane builds (--serve), nvcc's halves at once (nvcc_par.py)
		TORCH_CUDA_ARCH_LIST=9.0 timeout $(left 570) python3 tools/torch2cuda/gpu/build_phases.py --every ${EVERY:-4} --limit 0 --no-rerun \
			--serve --pch /tmp/kiln-pch --out $OUT/r/build_median.json > $OUT/r/build_median.txt 2>&1 ;;
	nvccpar)
		# issue 23: nvcc_par.py's objects against nvcc's, byte for byte, and its messages
		TORCH_CUDA_ARCH_LIST=9.0 timeout $(left 400) python3 tools/torch2cuda/gpu/nvcc_par_check.py --answers ${ANSWERS:-4} --judged ${JUDGED:-2} --parallel 2 \
			--out $OUT/r/nvcc_par.json > $OUT/r/nvcc_par.txt 2>&1 ;;
	phases)
		# issue 23 item 1: where a cold build goes (ninja log, g++ -ftime-report, nvcc --time), 5 starter answers
		TORCH_CUDA_ARCH_LIST=9.0 timeout $(left 560) python3 tools/torch2cuda/gpu/build_phases.py --limit 5 --out $OUT/r/build_phases.json > $OUT/r/build_phases.txt 2>&1 ;;
	variants)
		# issue 23 item 2: what a slimmer CUDA source header and a g++ precompiled header would save
		# (12 answers, 6 at once: about 9 minutes on 16 cores)
		a=tools/torch2cuda/answers
		TORCH_CUDA_ARCH_LIST=9.0 timeout $(left 560) python3 tools/torch2cuda/gpu/build_variants.py --limit 0 --parallel 6 --slim torch/types.h \
			--answers $a/level1/00[1-3]*.py $(ls $a/level2/*.py | head -2) $(ls $a/level3/*.py | head -2) \
			$(ls carry/kb/src/kernelbench/prompts/few_shot/model_new_ex_*.py 2>/dev/null) \
			--out $OUT/r/build_variants.json > $OUT/r/build_variants.txt 2>&1 ;;
	perop)
		# issue 23 item 2: the per-operator prelude against the slim build (nvcc only): starter answers,
		# KernelBench's few-shot kernels and the peers (written elsewhere), 8 at once: about 5 minutes
		a=tools/torch2cuda/answers
		TORCH_CUDA_ARCH_LIST=9.0 timeout $(left 560) python3 tools/torch2cuda/gpu/build_variants.py --limit 0 --parallel 8 --nvcc-only \
			--answers $a/level1/00[1-3]*.py $(ls $a/level2/*.py | head -2) $(ls $a/level3/*.py | head -2) \
			$(ls carry/kb/src/kernelbench/prompts/few_shot/model_new_ex_*.py 2>/dev/null) tools/torch2cuda/peers/answers/*.py \
			--out $OUT/r/build_perop.json > $OUT/r/build_perop.txt 2>&1 ;;
	slots)
		# issue 23 item 4: the same verdicts with two evaluations per GPU (timing alone)
		(cd tools/torch2cuda && timeout $(left 560) /tmp/t2c.test -test.run 'GPUJudge$' -test.v -test.timeout 9m -torch2cuda.slots=2) > $OUT/r/gpujudge_slots2.txt 2>&1 ;;
	kb)
		(cd tools/torch2cuda && KERNELBENCH_DIR=$root/carry/kb/KernelBench timeout $(left 560) /tmp/t2c.test -test.run TestKernelBenchProblems -test.v -test.timeout 9m) > $OUT/r/kernelbench.txt 2>&1 ;;
	peers)
		[ -x /tmp/cuda2hip.test ] && (cd tools/cuda2hip && timeout $(left 200) /tmp/cuda2hip.test -test.run TestPeersGPU -test.v -cuda2hip.gpudir=$root/carry/cuda2hip-peers) > $OUT/r/cuda2hip_peers.txt 2>&1
		[ -x /tmp/ptx2cuda.test ] && (cd tools/ptx2cuda && KILN_PTX2CUDA_RESULTS=$OUT/r/ptx2cuda-peers.json timeout $(left 200) /tmp/ptx2cuda.test -test.run TestGPUComplete -test.v -ptx2cuda.gpudir=$root/carry/ptx2cuda-peers) > $OUT/r/ptx2cuda_peers.txt 2>&1 ;;
	synth)
		(cd tools/torch2cuda && timeout $(left 280) /tmp/t2c.test -test.run 'ValidateSynthesesOnGPU' -test.v -test.timeout 5m) > $OUT/r/synth_validate.txt 2>&1
		;;
	refine)
		# issue 25: kiln refine over a torch2cuda campaign, the syntheses checked on the GPU (carry carry/kiln-gpu.test.gz)
		gunzip -c carry/kiln-gpu.test.gz > /tmp/kiln.test && chmod +x /tmp/kiln.test
		(cd cmd/kiln && timeout $(left 560) /tmp/kiln.test -test.run 'RefineTorch2CUDAOnGPU' -test.v -test.timeout 9m50s) > $OUT/r/synth_refine.txt 2>&1 ;;
	*) echo "unknown phase $1"; return 2 ;;
	esac
	echo "phase $1: rc $? in $(( $(date +%s) - start )) s"
}
for stage in "$@"; do
	for p in ${stage//+/ }; do
		(
			# CPUS_<phase>=LIST pins a phase to those cores (taskset), e.g. to run
			# a timing phase beside another one on the cores it leaves free
			pin=CPUS_$p
			[ -z "${!pin:-}" ] || { taskset -pc "${!pin}" $BASHPID > /dev/null && echo "phase $p on cores ${!pin}"; }
			phase $p
		) &
	done
	wait
done
for f in $OUT/r/*.txt; do echo "== $f"; grep -E "^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|PASS)|FAIL:|PASS:" $f | head -40; done
tar czf $OUT/results.tgz -C $OUT r && rm -rf $OUT/r

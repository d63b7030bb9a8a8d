#!/usr/bin/env bash
# GPU check of ptx2cuda's torch program tasks (see README.md beside this
# file), on a GPU host with torch, nvcc and ninja, from the repository root:
#
#   bash tools/ptx2cuda/testdata/torchptx/run.sh KILN OUT [PROBLEM...]
#
# KILN is the kiln binary (or kiln.gz), OUT a folder for the logs and
# exports. PHASES="t2c prepare ptx" (the default) runs the three phases
# below; a later phase alone (PHASES=ptx) reuses /tmp/torchptx from an
# earlier call on the same (warm) host. Under /tmp/torchptx:
#   1. t2c: a torch2cuda campaign `t2c` over a few problems, answered with
#      torch2cuda's shipped answers (records: the ones that pass the judge);
#   2. prepare: `kiln ptx prepare --from-campaign t2c -o ptx`: torch items,
#      their PTX made with PyTorch's headers, each checked by the judge (the
#      kernel's own definition spliced back in passes, the kernel emptied
#      does not);
#   3. ptx: ptx2cuda campaigns over ptx: ptx-ref answers every task with its
#      kernel's own definition (must pass); ptx-wrong, ptx-wrong2 and
#      ptx-wrong3 answer the first two items with the kernel emptied, with
#      block 0 returning at once (wrong_output) and with the kernel renamed
#      (compile_error); then OUT/summary.txt (make.py check), a line a task.
# Exit status 0 when every task got what it should.
set -u
here=$(cd "$(dirname "$0")" && pwd)
kiln_in=$1 out=$2
shift 2
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(level1/013_layer_norm level1/017_rms_norm level1/025_logsumexp level1/037_mse_loss)
phases=" ${PHASES:-t2c prepare ptx} "
mkdir -p "$out"
out=$(cd "$out" && pwd)
W=/tmp/torchptx
case $phases in *" t2c "*) rm -rf "$W" ;; esac
mkdir -p "$W"
case $kiln_in in
*.gz) gunzip -c "$kiln_in" > "$W/kiln.new" ;;
*) cp "$kiln_in" "$W/kiln.new" ;;
esac
chmod +x "$W/kiln.new" && mv "$W/kiln.new" "$W/kiln"
kiln=$W/kiln
# torch's virtualenv and nvcc on PATH (kiln finds torch in PATH's python3).
for d in /opt/torch/.venv/bin /usr/local/cuda/bin; do [ -d "$d" ] && PATH=$d:$PATH; done
export PATH
# A delegated cgroup-v2 subtree for the sandboxes, as torch2cuda's bench.sh
# (TORCHPTX_NO_CGROUP=1: not, for a dry run on a shared host).
[ -n "${TORCHPTX_NO_CGROUP:-}" ] || { mkdir -p /sys/fs/cgroup/kiln/daemon 2>/dev/null &&
	echo "+memory +pids" > /sys/fs/cgroup/kiln/cgroup.subtree_control 2>/dev/null &&
	echo $$ > /sys/fs/cgroup/kiln/daemon/cgroup.procs 2>/dev/null && export KILN_CGROUP_PARENT=/kiln; }
{
	nvidia-smi -L
	python3 -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
	command -v nvcc ninja python3
	nvcc --version | tail -1
	"$kiln" doctor
} > "$out/host.txt" 2>&1
phase() { # name secs cmd...: runs cmd with a time limit, logs, times
	local name=$1 secs=$2
	shift 2
	local t0
	t0=$(date +%s)
	timeout "$secs" "$@" > "$out/$name.out" 2> "$out/$name.err"
	local rc=$?
	echo "$name: exit $rc, $(($(date +%s) - t0)) s" | tee -a "$out/phases.txt"
	tail -3 "$out/$name.err"
	return $rc
}
cd "$W" || exit 2
case $phases in
*" t2c "*)
	python3 "$here/make.py" t2c "$W" "${problems[@]}"
	phase t2c-run 200 "$kiln" run --data data --log-level warn t2c.yaml
	"$kiln" export --all --data data -o "$out/t2c.jsonl" t2c 2>> "$out/t2c-run.err"
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    v = s["verdict"]
    got = "pending" if s.get("pending") else (v.get("class") or "pass")
    print("t2c %-40s %-8s %-12s speedup %s" % (s["meta"].get("problem"), "record" if s["pass"] else "-",
                                               got, s["measurements"].get("speedup")))
' "$out/t2c.jsonl" | tee "$out/t2c-summary.txt"
	;;
esac
case $phases in
*" prepare "*)
	phase prepare 260 "$kiln" ptx prepare --data data --from-campaign t2c -o ptx
	tail -20 "$out/prepare.out"
	grep -h '^skipped' "$out/prepare.err" | cut -c1-240
	;;
esac
case $phases in *" ptx "*) ;; *) exit 0 ;; esac
python3 "$here/make.py" ptx "$W" 2 || exit 1
phase ptx-ref 130 "$kiln" run --data data --log-level warn ptx-ref.yaml &
# The wrong answers in data folders of their own, at once (nothing to share).
for k in ptx-wrong ptx-wrong2 ptx-wrong3; do
	rm -rf "data-$k"
	phase "$k" 130 "$kiln" run --data "data-$k" --log-level warn "$k.yaml" &
done
wait
exports=("$out/ptx-ref.jsonl")
"$kiln" export --all --data data -o "$out/ptx-ref.jsonl" ptx-ref 2>> "$out/ptx-ref.err"
for k in ptx-wrong ptx-wrong2 ptx-wrong3; do
	"$kiln" export --all --data "data-$k" -o "$out/$k.jsonl" "$k" 2>> "$out/$k.err"
	exports+=("$out/$k.jsonl")
done
"$kiln" report --data data ptx-ref > "$out/ptx-ref-report.txt" 2>&1
python3 "$here/make.py" check "$W" "${exports[@]}" | tee "$out/summary.txt"
rc=${PIPESTATUS[0]}
cat "$out/phases.txt"
exit "$rc"

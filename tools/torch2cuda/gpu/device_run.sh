#!/usr/bin/env bash
# The GPU half of the torch2cuda check (see GPU_RESULTS.md): on a GPU host
# with the kiln binary and the campaign folder made by prepare.py + kiln run
# on the CPU host (at the same absolute path, /tmp/t2cgpu), complete the
# pending judge stages and compare the verdicts with expect.json.
#   bash tools/torch2cuda/gpu/device_run.sh KILN_GZ CAMPAIGN_TGZ OUTDIR [SECONDS]
set -u
kiln_gz=$1 tgz=$2 out=$3 secs=${4:-480}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
{
nvidia-smi -L; python3 -c 'import torch,sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.__file__)'
command -v nvcc ninja c++ || true; nproc
} > "$out/host.txt" 2>&1
if [ ! -d /tmp/t2cgpu ]; then tar xzf "$tgz" -C /tmp; fi
if [ ! -x /tmp/kiln ]; then gunzip -c "$kiln_gz" > /tmp/kiln && chmod +x /tmp/kiln; fi
# A delegated cgroup-v2 subtree for the sandboxes (cgroups layer on).
mkdir -p /sys/fs/cgroup/kiln/daemon 2>/dev/null && echo "+memory +pids" > /sys/fs/cgroup/kiln/cgroup.subtree_control 2>/dev/null \
  && echo $$ > /sys/fs/cgroup/kiln/daemon/cgroup.procs 2>/dev/null && export KILN_CGROUP_PARENT=/kiln
cd /tmp/t2cgpu
/tmp/kiln doctor > "$out/doctor.txt" 2>&1
start=$(date +%s)
timeout "$secs" /tmp/kiln rescore --pending --concurrency 64 --json --data data t2c-gpu > "$out/rescore.json" 2> "$out/rescore.err"
echo "rescore exit $? after $(( $(date +%s) - start )) s" >> "$out/host.txt"
/tmp/kiln export --all --data data -o "$out/export.jsonl" t2c-gpu 2>> "$out/rescore.err"
/tmp/kiln report --data data t2c-gpu > "$out/report.txt" 2>&1
python3 "$here/check.py" expect.json "$out/export.jsonl" > "$out/check.txt" 2>&1
tail -1 "$out/check.txt"; tail -3 "$out/host.txt"; tail -5 "$out/rescore.err"

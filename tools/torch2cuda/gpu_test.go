//go:build gpu

package torch2cuda

// The judge on a GPU host: starter answers and every broken or cheating
// candidate of broken/manifest.json, judged together as a campaign would
// (concurrent Verify calls: parallel builds, GPU batches). On the GPU host,
// with a CUDA build of torch on PATH and a delegated cgroup subtree (see
// gpu/bench.sh's cgroups()):
//
//	go test -c -tags gpu -o t2c-gpu.test ./tools/torch2cuda     # on the CPU host
//	cd tools/torch2cuda && ../../t2c-gpu.test -test.run GPUJudge -test.v -test.timeout 30m
//
// -torch2cuda.answers N sets how many starter answers join (default 8).
// The peer suite (peers/manifest.json) joins too: each answer must pass
// with its stream finding (legacy_default for <<<grid, block>>> launches),
// each twin must fail; no side-stream candidate of the broken set may pass.
// TestGPUKernelBenchFewShot judges KernelBench's own few-shot pairs when
// KILN_KERNELBENCH_FEWSHOT names a folder holding them (model_ex_*.py and
// model_new_ex_*.py: src/kernelbench/prompts/few_shot of a checkout).
// TestProbeOnGPU and TestQuarantineOnGPU check the GPU health probe and the
// quarantine of a GPU that fails it (-test.run 'ProbeOnGPU|QuarantineOnGPU').

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

var gpuAnswers = flag.Int("torch2cuda.answers", 8, "starter answers judged by TestGPUJudge")

// gpuSlots is TestGPUJudge's Config.SlotsPerDevice: with 2 or more, the
// same verdicts must come out of evaluations that share each GPU.
var gpuSlots = flag.Int("torch2cuda.slots", 1, "evaluations at once per GPU in TestGPUJudge")

func TestGPUJudge(t *testing.T) {
	needSandbox(t)
	g := testRegistry.GPU()
	if g.SMI == "" {
		t.Fatal("no nvidia-smi: run this test on the GPU host")
	}
	gpus := max(len(g.Devices), 1)
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, GPUSlots: gpus, GPUs: gpus,
		CompileParallel: runtime.NumCPU(), CacheDir: t.TempDir(), SlotsPerDevice: *gpuSlots})
	if err != nil {
		t.Fatal(err)
	}
	// Count the evaluations each GPU judges.
	var perGPUMu sync.Mutex
	perGPU := map[int]int{}
	inner := l.batches.runBatch
	l.batches.runBatch = func(jobs []*judgeJob, gpu int) []judgeOut {
		perGPUMu.Lock()
		perGPU[gpu] += len(jobs)
		perGPUMu.Unlock()
		return inner(jobs, gpu)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type job struct {
		name, ref, cand string
		want            []string // classes; "" is a pass (a correct kernel, faster than torch or not)
		stream          string   // a pass's stream finding ("" when not checked)
		side            bool     // a side-stream candidate: must never pass
	}
	var jobs []job
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs[:min(*gpuAnswers, len(probs))] {
		// The starter answers launch on the current stream.
		jobs = append(jobs, job{name: p.ID, ref: read(filepath.Join("problems", p.ID+".py")),
			cand: read(filepath.Join("answers", p.ID+".py")), want: []string{""}, stream: StreamCurrent})
	}
	var manifest []struct {
		Candidate, Problem, Kind string
		Expect                   []string
	}
	if err := json.Unmarshal([]byte(read(filepath.Join("broken", "manifest.json"))), &manifest); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest {
		jobs = append(jobs, job{name: m.Candidate, ref: read(filepath.Join("problems", m.Problem+".py")),
			cand: read(filepath.Join("broken", m.Candidate)), want: m.Expect, side: m.Kind == "side_stream"})
	}
	// The peer suite: answers in the styles models and KernelBench write
	// (default-stream launches among them) pass with their stream
	// finding; their twins fail.
	for _, p := range loadPeers(t) {
		ref := read(p.Problem)
		jobs = append(jobs, job{name: "peer " + p.Name, ref: ref, cand: read(p.Answer), want: []string{""}, stream: p.Stream},
			job{name: "peer twin " + p.Name, ref: ref, cand: read(p.Twin), want: p.TwinExpect})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 28*time.Minute)
	defer cancel()
	verdicts := make([]tools.Verdict, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	start := time.Now()
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			verdicts[i], errs[i] = l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: j.ref}}, j.cand)
		}()
	}
	wg.Wait()
	t.Logf("%d evaluations in %s on %d GPUs, %d at once on each; evaluations per GPU: %v", len(jobs),
		time.Since(start).Round(time.Second), gpus, *gpuSlots, perGPU)
	if len(perGPU) != gpus {
		t.Errorf("evaluations per GPU %v: want all %d GPUs used", perGPU, gpus)
	}
	for i, j := range jobs {
		v := verdicts[i]
		if errs[i] != nil {
			t.Errorf("%s: %v", j.name, errs[i])
			continue
		}
		got := string(v.Class)
		if !slices.Contains(j.want, got) || (got == "" && !v.Pass) || len(tools.PendingStages(v)) > 0 || (j.side && v.Pass) {
			t.Errorf("%s: class %q pass %v, want one of %q: %.400s", j.name, got, v.Pass, j.want, v.Diagnostic)
			continue
		}
		if v.Pass {
			if err := checkPassFigures(v, j.stream); err != nil {
				t.Errorf("%s: %v", j.name, err)
			}
		}
		t.Logf("%-55s %-20s speedup %.3g fast %v %s", j.name, got, v.Measurements["speedup"], v.Measurements[MeasureFast], stageDetail(v, StageJudge))
	}
	logBuildTimes(t, verdicts)
}

// logBuildTimes logs the median extension build time of the verdicts that
// record one (issue 23), and how many CUDA sources were built slim.
func logBuildTimes(t *testing.T, verdicts []tools.Verdict) {
	var ms []float64
	perop, slim, asWritten, pch := 0, 0, 0, 0
	for _, v := range verdicts {
		if x, ok := v.Measurements["build_ms"]; ok {
			ms = append(ms, x)
		}
		d := stageDetail(v, StageJudge)
		if strings.Contains(d, "(pybind module with the precompiled header)") {
			pch++
		}
		if strings.Contains(d, "(CUDA source with the per-operator prelude)") {
			perop++
		} else if strings.Contains(d, "(CUDA source with <torch/types.h>)") {
			slim++
		} else if strings.Contains(d, "(as written: the slimmer CUDA build failed)") {
			asWritten++
		}
	}
	if len(ms) == 0 {
		t.Logf("no build times recorded")
		return
	}
	slices.Sort(ms)
	t.Logf("extension builds: %d with a time; median %.1f s, min %.1f s, max %.1f s; of the passes: CUDA source with "+
		"the per-operator prelude %d, with <torch/types.h> %d, as written after a failed slimmer build %d, "+
		"pybind module with the precompiled header %d",
		len(ms), ms[len(ms)/2]/1000, ms[0]/1000, ms[len(ms)-1]/1000, perop, slim, asWritten, pch)
}

// checkPassFigures checks what a pass reports beside it: the speedup and
// fast (speedup > 1), and the stream finding (want: "" checks none).
func checkPassFigures(v tools.Verdict, want string) error {
	sp, ok := v.Measurements["speedup"]
	fast, okFast := v.Measurements[MeasureFast]
	if !ok || !okFast || (fast == 1) != (sp > 1) {
		return fmt.Errorf("speedup %v (%v), fast %v (%v): want both, fast = speedup > 1", sp, ok, fast, okFast)
	}
	cur, okCur := v.Measurements[MeasureStreamCurrent]
	detail := stageDetail(v, StageJudge)
	if !okCur || !strings.Contains(detail, "stream: ") {
		return fmt.Errorf("no stream finding (measurements %v, detail %q)", v.Measurements, detail)
	}
	if want != "" && (!strings.Contains(detail, "stream: "+want) || (cur == 1) != (want == StreamCurrent)) {
		return fmt.Errorf("stream: detail %q, stream_current %v; want %s", detail, cur, want)
	}
	return nil
}

func stageDetail(v tools.Verdict, stage string) string {
	for _, s := range v.Stages {
		if s.Name == stage {
			return s.Detail
		}
	}
	return ""
}

// TestGPUKernelBenchFewShot: KernelBench's own few-shot pairs (their
// model_new_ex_*.py launch <<<grid, block>>> on the default stream) are
// judged correct, a pass each, with their stream finding. The files come
// from the folder KILN_KERNELBENCH_FEWSHOT names; none is kept here.
func TestGPUKernelBenchFewShot(t *testing.T) {
	dir := os.Getenv("KILN_KERNELBENCH_FEWSHOT")
	if dir == "" {
		t.Skip("KILN_KERNELBENCH_FEWSHOT is not set: point it at KernelBench's src/kernelbench/prompts/few_shot")
	}
	needSandbox(t)
	if testRegistry.GPU().SMI == "" {
		t.Fatal("no nvidia-smi: run this test on the GPU host")
	}
	news, err := filepath.Glob(filepath.Join(dir, "model_new_ex_*.py"))
	if err != nil || len(news) == 0 {
		t.Fatalf("%s: no model_new_ex_*.py (%v)", dir, err)
	}
	gpus := max(len(testRegistry.GPU().Devices), 1)
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, GPUSlots: gpus, GPUs: gpus,
		CompileParallel: runtime.NumCPU(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, n := range news {
		ref := filepath.Join(dir, strings.Replace(filepath.Base(n), "model_new_ex_", "model_ex_", 1))
		rb, err1 := os.ReadFile(ref)
		cb, err2 := os.ReadFile(n)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v %v", n, err1, err2)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: string(rb)}}, string(cb))
			switch {
			case err != nil:
				t.Errorf("%s: %v", filepath.Base(n), err)
			case !v.Pass:
				t.Errorf("%s: class %q at %s: %.600s", filepath.Base(n), v.Class, v.Stage, v.Diagnostic)
			default:
				if err := checkPassFigures(v, ""); err != nil {
					t.Errorf("%s: %v", filepath.Base(n), err)
				}
				t.Logf("%-32s pass, speedup %.3g, %s", filepath.Base(n), v.Measurements["speedup"], stageDetail(v, StageJudge))
			}
		}()
	}
	wg.Wait()
}

// TestProbeOnGPU runs the health probe that the GPU judge runs after a bad
// batch ("judge.py probe --devices G" in the sandbox with the GPU) on every
// GPU of the host: each is healthy; a GPU past the last is not there.
func TestProbeOnGPU(t *testing.T) {
	needSandbox(t)
	g := testRegistry.GPU()
	if g.SMI == "" {
		t.Fatal("no nvidia-smi: run this test on the GPU host")
	}
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gpus := max(len(g.Devices), 1)
	for i := range gpus {
		start := time.Now()
		err := l.probeGPU(ctx, i)
		t.Logf("GPU %d: probe in %s: %v", i, time.Since(start).Round(time.Millisecond), err)
		if err != nil {
			t.Errorf("GPU %d: %v", i, err)
		}
	}
	if err := l.probeGPU(ctx, gpus); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("no CUDA device %d", gpus)) {
		t.Errorf("GPU %d (not there): %v", gpus, err)
	} else {
		t.Logf("GPU %d (not there): %v", gpus, err)
	}
}

// TestQuarantineOnGPU: the lane is told of one GPU more than the host has.
// The batch on that phantom GPU fails, its probe fails, the GPU is
// quarantined, and its evaluation is requeued and judged on a real GPU.
func TestQuarantineOnGPU(t *testing.T) {
	needSandbox(t)
	g := testRegistry.GPU()
	if g.SMI == "" {
		t.Fatal("no nvidia-smi: run this test on the GPU host")
	}
	gpus := max(len(g.Devices), 1)
	var logs bytes.Buffer
	var logMu sync.Mutex
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, GPUs: gpus + 1, GPUSlots: gpus + 1, MaxBatch: 1,
		CompileParallel: runtime.NumCPU(), CacheDir: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n := gpus + 1
	pairs := starterPairs(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// Build first, so that the evaluations reach the GPU queue together
	// and every slot, the phantom GPU's too, takes one.
	buildPairs(t, ctx, l, pairs)
	var wg sync.WaitGroup
	start := time.Now()
	res := make([]judgeResult, n)
	errs := make([]error, n)
	for i, p := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], _, errs[i] = l.judge(ctx, p.ref, p.cand, evalLimits{})
		}()
	}
	wg.Wait()
	t.Logf("%d evaluations in %s", n, time.Since(start).Round(time.Millisecond))
	for i, p := range pairs {
		if errs[i] != nil || !res[i].Correct {
			t.Errorf("%s: correct %v, class %q, err %v: %.300s", p.id, res[i].Correct, res[i].Class, errs[i], res[i].Diagnostic)
		}
	}
	l.batches.mu.Lock()
	phantom, real0 := l.batches.gpus[gpus].down, l.batches.gpus[0].down
	l.batches.mu.Unlock()
	t.Logf("phantom GPU %d: %s", gpus, phantom)
	if !strings.Contains(phantom, fmt.Sprintf("no CUDA device %d", gpus)) || real0 != "" {
		t.Errorf("phantom GPU %d: %q; GPU 0: %q", gpus, phantom, real0)
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Logf("log:\n%s", logs.String())
	if !strings.Contains(logs.String(), "GPU quarantined") {
		t.Error("no quarantine logged")
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// hogScript holds nearly all memory of the one GPU it sees, then prints
// how much it holds and waits to be killed: a GPU made to fail for real
// (a new CUDA context or a reference build on it runs out of memory).
const hogScript = `
import sys, time, torch
held, chunk = [], 1 << 30
while chunk >= (8 << 20):
    try:
        held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
    except RuntimeError:
        chunk //= 2
free, total = torch.cuda.mem_get_info()
print(f"held {sum(t.numel() for t in held) >> 20} MiB, free {free >> 20} MiB of {total >> 20} MiB", flush=True)
time.sleep(3600)
`

// TestQuarantineTwoGPUs: on a host of two GPUs or more, the last GPU is
// made to fail for real (another process holds nearly all its memory).
// The evaluations the lane sends there fail, its probe fails, the GPU is
// quarantined, and every evaluation is judged correct on the others.
func TestQuarantineTwoGPUs(t *testing.T) {
	needSandbox(t)
	g := testRegistry.GPU()
	if len(g.Devices) < 2 {
		t.Skipf("%d GPU(s) here: this test needs a host of two or more", len(g.Devices))
	}
	tc, ok := testRegistry.Get(toolchain.Torch)
	if !ok {
		t.Fatal("no python3 with torch")
	}
	py := tc.Path
	gpus, bad := len(g.Devices), len(g.Devices)-1
	hog := exec.Command(py, "-c", hogScript)
	hog.Env = append(os.Environ(), fmt.Sprintf("CUDA_VISIBLE_DEVICES=%d", bad))
	out, err := hog.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hog.Stderr = os.Stderr
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hog.Process.Kill(); _ = hog.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("memory hog on GPU %d: %v", bad, err)
	}
	t.Logf("GPU %d: %s", bad, strings.TrimSpace(line))

	var logs bytes.Buffer
	var logMu sync.Mutex
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, GPUs: gpus, GPUSlots: gpus, MaxBatch: 1,
		CompileParallel: runtime.NumCPU(), CacheDir: t.TempDir(), ReprobeInterval: time.Hour,
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	n := 2 * gpus
	pairs := starterPairs(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	buildPairs(t, ctx, l, pairs)
	var wg sync.WaitGroup
	// Count the evaluations each GPU delivers a verdict for.
	var perMu sync.Mutex
	judged := map[int]int{}
	inner := l.batches.runBatch
	l.batches.runBatch = func(jobs []*judgeJob, gpu int) []judgeOut {
		outs := inner(jobs, gpu)
		perMu.Lock()
		for _, o := range outs {
			if o.err == nil && o.res.Correct {
				judged[gpu]++
			}
		}
		perMu.Unlock()
		return outs
	}
	start := time.Now()
	res := make([]judgeResult, n)
	errs := make([]error, n)
	for i, p := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], _, errs[i] = l.judge(ctx, p.ref, p.cand, evalLimits{})
		}()
	}
	wg.Wait()
	t.Logf("%d evaluations in %s; correct verdicts by GPU: %v", n, time.Since(start).Round(time.Millisecond), judged)
	for i, p := range pairs {
		if errs[i] != nil || !res[i].Correct {
			t.Errorf("%s: correct %v, class %q, err %v: %.300s", p.id, res[i].Correct, res[i].Class, errs[i], res[i].Diagnostic)
		}
	}
	if judged[bad] != 0 {
		t.Errorf("GPU %d (its memory held) delivered %d correct verdicts", bad, judged[bad])
	}
	l.batches.mu.Lock()
	down := l.batches.gpus[bad].down
	var upDown []string
	for i := range bad {
		upDown = append(upDown, l.batches.gpus[i].down)
	}
	l.batches.mu.Unlock()
	t.Logf("GPU %d: %s", bad, down)
	if down == "" || slices.ContainsFunc(upDown, func(s string) bool { return s != "" }) {
		t.Errorf("GPU %d: %q (want quarantined); the others: %q (want in service)", bad, down, upDown)
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Logf("log:\n%s", logs.String())
	if !strings.Contains(logs.String(), "GPU quarantined") {
		t.Error("no quarantine logged")
	}
}

// starterPair is a starter problem and its answer.
type starterPair struct{ id, ref, cand string }

// starterPairs returns the first n starter problems with their answers.
func starterPairs(t *testing.T, n int) []starterPair {
	t.Helper()
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	var pairs []starterPair
	for _, p := range probs[:n] {
		a, err := BuiltinAnswer(p.ID)
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, starterPair{p.ID, p.Source, a})
	}
	return pairs
}

// buildPairs builds every pair's extension first, so that the evaluations
// then reach the GPU queue together.
func buildPairs(t *testing.T, ctx context.Context, l *Lane, pairs []starterPair) {
	t.Helper()
	arch := l.arch(ctx)
	var wg sync.WaitGroup
	for _, p := range pairs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.build(ctx, l.cacheKey(p.cand, arch), p.ref, p.cand, arch); err != nil {
				t.Errorf("%s: build: %v", p.id, err)
			}
		}()
	}
	wg.Wait()
}

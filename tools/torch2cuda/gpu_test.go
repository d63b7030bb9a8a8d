//go:build gpu

package torch2cuda

// The judge on a GPU host: starter answers and every broken or cheating
// candidate of broken/manifest.json, judged together as a campaign would
// (concurrent Verify calls: parallel builds, GPU batches). On the GPU host,
// with a CUDA build of torch on PATH and a delegated cgroup subtree (see
// gpu/bench.sh's cgroups()):
//
//	go test -c -tags gpu -o t2c-gpu.test ./tools/torch2cuda     # on the CPU host
//	cd tools/torch2cuda && ../../t2c-gpu.test -test.run GPU -test.v -test.timeout 20m
//
// -torch2cuda.answers N sets how many starter answers join (default 8).

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

var gpuAnswers = flag.Int("torch2cuda.answers", 8, "starter answers judged by TestGPUJudge")

func TestGPUJudge(t *testing.T) {
	needSandbox(t)
	g := testRegistry.GPU()
	if g.SMI == "" {
		t.Fatal("no nvidia-smi: run this test on the GPU host")
	}
	gpus := max(len(g.Devices), 1)
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, GPUSlots: gpus, GPUs: gpus,
		CompileParallel: runtime.NumCPU(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
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
		want            []string // classes; "" is a pass, "slower" a correct kernel slower than torch
	}
	var jobs []job
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs[:min(*gpuAnswers, len(probs))] {
		jobs = append(jobs, job{p.ID, read(filepath.Join("problems", p.ID+".py")), read(filepath.Join("answers", p.ID+".py")),
			[]string{"", string(ClassSlower)}})
	}
	var manifest []struct {
		Candidate, Problem string
		Expect             []string
	}
	if err := json.Unmarshal([]byte(read(filepath.Join("broken", "manifest.json"))), &manifest); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifest {
		jobs = append(jobs, job{m.Candidate, read(filepath.Join("problems", m.Problem+".py")), read(filepath.Join("broken", m.Candidate)), m.Expect})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 18*time.Minute)
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
	t.Logf("%d evaluations in %s", len(jobs), time.Since(start).Round(time.Second))
	for i, j := range jobs {
		v := verdicts[i]
		if errs[i] != nil {
			t.Errorf("%s: %v", j.name, errs[i])
			continue
		}
		got := string(v.Class)
		if !slices.Contains(j.want, got) || (got == "" && !v.Pass) || len(tools.PendingStages(v)) > 0 {
			t.Errorf("%s: class %q pass %v, want one of %q: %.400s", j.name, got, v.Pass, j.want, v.Diagnostic)
			continue
		}
		t.Logf("%-55s %-20s speedup %.3g", j.name, got, v.Measurements["speedup"])
	}
}

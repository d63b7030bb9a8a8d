//go:build gpu

package ptx2cuda

// The GPU check's second phase, on a GPU host (nvcc 13 there, no nvcc
// 11.8; no Go needed): every verdict the first phase saved is completed
// with Lane.Complete, the way `kiln rescore --pending` completes a
// campaign's, from the saved executables alone.
//
//	# CPU host (nvcc 11.8), repository root (carry/ is git-ignored):
//	go test ./tools/ptx2cuda -run TestPrepareGPUCheck -count=1 -timeout 60m -args -ptx2cuda.gpudir=$PWD/carry/ptx2cuda
//	go test -c -tags gpu -o carry/ptx2cuda-gpu.test ./tools/ptx2cuda && gzip -f carry/ptx2cuda-gpu.test
//	# GPU host (carry carry/ptx2cuda and carry/ptx2cuda-gpu.test.gz), repository root, as root;
//	# the sandbox wants the memory and pids controllers (or add -ptx2cuda.weak):
//	gunzip -c carry/ptx2cuda-gpu.test.gz > /tmp/p.test && chmod +x /tmp/p.test
//	echo $$ > /sys/fs/cgroup/cgroup.procs; echo "+memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
//	cd tools/ptx2cuda && KILN_PTX2CUDA_RESULTS=$OUT/ptx2cuda-gpu.json \
//	  /tmp/p.test -test.run TestGPUComplete -test.v -ptx2cuda.gpudir=../../carry/ptx2cuda
//
// The figures (per task: answer, expected and got class, NAE, latency
// ratio, kernel times) go to the file KILN_PTX2CUDA_RESULTS names, as
// JSON. GPU_RESULTS.md has a run's results.
//
// The peer suite (peers_test.go) has a first phase of its own,
// TestPeersSaveForGPU (-run TestPeersSaveForGPU with
// -ptx2cuda.gpudir=$PWD/carry/ptx2cuda-peers); complete it with this test
// and -ptx2cuda.gpudir=../../carry/ptx2cuda-peers: peers must pass, twins
// fail with their class.
//
// Program tasks (program.go) have a first phase of their own,
// TestPrepareProgramGPUCheck (-run TestPrepareProgramGPUCheck with the same
// -ptx2cuda.gpudir), which writes carry/ptx2cuda/programs; complete it with
// this test and -ptx2cuda.gpudir=../../carry/ptx2cuda/programs.

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// gpuPhase is true in the gpu-tagged test binary: the registry comes from
// the first phase's toolchain.json, with this host's GPU.
const gpuPhase = true

// gpuFigure is one line of the results file.
type gpuFigure struct {
	Task, Answer, Corpus, Expect string
	Pass                         bool
	Class, Stage                 string
	NAE                          float64 `json:"nae_max"`
	LatencyRatio                 float64 `json:"latency_ratio"`
	KernelMSAnswer               float64 `json:"kernel_ms_answer"`
	KernelMSReference            float64 `json:"kernel_ms_reference"`
	RunMS                        float64 `json:"run_ms"`
	Detail                       string  `json:"detail"`
}

// TestGPUComplete completes every saved verdict on this host's GPU: the
// reference answers pass with NAE 0, peer answers pass, the wrong kernels
// and the peers' twins fail with their classes at run or compare.
func TestGPUComplete(t *testing.T) {
	if *gpuDirFlag == "" {
		t.Fatal("-ptx2cuda.gpudir is required (the first phase's folder)")
	}
	if !testRegistry.GPU().Present {
		t.Fatal("no GPU found: run this test on the GPU host")
	}
	entries, err := loadGPUCheck(*gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache,
		RunLimits: sandboxes.Limits{Wall: 20 * time.Second, CPU: 40 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	var figs []gpuFigure
	var ratios []float64
	for _, e := range entries {
		v, err := l.Complete(ctx, e.Item, e.Verdict)
		if err != nil {
			t.Errorf("%s %s: %v", e.Task, e.Answer, err)
			continue
		}
		f := gpuFigure{Task: e.Task, Answer: e.Answer, Corpus: e.Corpus, Expect: e.Expect, Pass: v.Pass, Class: string(v.Class),
			Stage: v.Stage, NAE: v.Measurements["nae_max"], LatencyRatio: v.Measurements["latency_ratio"],
			KernelMSAnswer: v.Measurements["kernel_ms_answer"], KernelMSReference: v.Measurements["kernel_ms_reference"],
			RunMS: v.Measurements["run_ms"], Detail: v.Diagnostic}
		if v.Pass {
			f.Detail = v.Stages[len(v.Stages)-1].Detail
		}
		figs = append(figs, f)
		got := "pass"
		if !v.Pass {
			got = string(v.Class)
		}
		switch {
		case len(tools.PendingStages(v)) > 0:
			t.Errorf("%s %s: still pending %v", e.Task, e.Answer, tools.PendingStages(v))
		case got != e.Expect:
			t.Errorf("%s %s: %s at %s, want %s: %.400s", e.Task, e.Answer, got, v.Stage, e.Expect, v.Diagnostic)
		case e.Answer == "reference" && v.Measurements["nae_max"] != 0:
			t.Errorf("%s: the reference against itself: NAE %g", e.Task, v.Measurements["nae_max"])
		}
		if e.Answer == "reference" && f.LatencyRatio > 0 {
			ratios = append(ratios, f.LatencyRatio)
		}
		t.Logf("%-28s %-26s %-13s NAE %-8.3g ratio %.3f (%.4f / %.4f ms)", e.Task, e.Answer, got, f.NAE, f.LatencyRatio,
			f.KernelMSAnswer, f.KernelMSReference)
	}
	sort.Float64s(ratios)
	if n := len(ratios); n > 0 {
		t.Logf("latency ratio of the references against themselves: min %.3f, median %.3f, max %.3f over %d tasks",
			ratios[0], ratios[n/2], ratios[n-1], n)
		if med := ratios[n/2]; math.Abs(med-1) > 0.1 {
			t.Errorf("median latency ratio %.3f of identical kernels: the timing is noisy", med)
		}
	}
	if path := os.Getenv("KILN_PTX2CUDA_RESULTS"); path != "" {
		b, err := json.MarshalIndent(map[string]any{"gpu": strings.Join(testRegistry.GPU().Names, ", "),
			"driver": testRegistry.GPU().Driver, "sandbox": testRunner.Capabilities().Policy, "figures": figs}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

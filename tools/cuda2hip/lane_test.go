package cuda2hip

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// openLane opens the lane on the test host, skipping when a toolchain is
// missing.
func openLane(t *testing.T) *Lane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg, err := testHost.Toolchains(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Kit().Toolchains {
		if _, ok := reg.Get(name); !ok {
			t.Skipf("toolchain %s missing", name)
		}
	}
	l, err := Kit().Open(ctx, testHost, sandboxes.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return l.(*Lane)
}

func builtinItem(t *testing.T, id string) Item {
	t.Helper()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no builtin item %s", id)
	return Item{}
}

func stageNames(v tools.Verdict) []string {
	var out []string
	for _, s := range v.Stages {
		out = append(out, s.Name)
	}
	return out
}

// TestVerify: the rule-based translation of a corpus program passes every
// CPU stage (run pending without a GPU), in the documented stage order;
// a cheat fails at hip-check before any compile; a translation that drops
// a kernel fails at rdna3; a task whose CUDA program does not build is a
// bad item, not a failed answer.
func TestVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	t.Parallel()
	l := openLane(t)
	it := builtinItem(t, "basic_01_reduce_sum_shfl")
	tr, err := hipify.Translate(it.Program)
	if err != nil || !tr.OK() {
		t.Fatalf("hipify: %v %v", err, tr.Unsupported)
	}
	item := tools.Item{Lane: LaneName, Files: map[string]string{ProgramFile: it.Program}}
	ctx := context.Background()

	v, err := l.Verify(ctx, item, tr.HIP)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass {
		t.Fatalf("the rule-based translation fails: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
	}
	want := []string{StageHIPCheck, cudasynth.StageCUDACompile, cudasynth.StagePTX, cudasynth.StageSASS, cudasynth.StageHostAsm,
		cudasynth.StageHIPSource, cudasynth.StageHIPCompileAMD, cudasynth.StageRDNA3, cudasynth.StageHIPCompileNvidia, cudasynth.StageRun}
	if got := stageNames(v); !slices.Equal(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
	if string(v.Artifacts[cudasynth.ArtifactHIPSource]) != tr.HIP || string(v.Artifacts[cudasynth.ArtifactCUDASource]) != it.Program {
		t.Error("the record's sources are not the answer and the task's program")
	}
	if len(v.Artifacts[cudasynth.ArtifactRDNA3]) == 0 {
		t.Error("no rdna3 artifact")
	}
	gpu := false
	if reg, err := testHost.Toolchains(ctx, false); err == nil {
		gpu = reg.GPU().Present
	}
	if !gpu {
		if p := tools.PendingStages(v); !slices.Equal(p, []string{cudasynth.StageRun}) {
			t.Errorf("pending %v", p)
		}
		for _, name := range []string{cudasynth.ArtifactCUDABinary, cudasynth.ArtifactHIPBinary, cudasynth.ArtifactGPUProbe} {
			if !strings.HasPrefix(string(v.Artifacts[name]), "\x7fELF") {
				t.Errorf("pending record lacks the executable %s", name)
			}
		}
		if _, err := l.Complete(ctx, item, v); !errors.Is(err, cudasynth.ErrNoGPU) {
			t.Errorf("complete without a GPU: %v", err)
		}
	}

	cheat := "#include <cuda_runtime.h>\n" + strings.Replace(tr.HIP, "hipDeviceSynchronize()", "cudaDeviceSynchronize()", 1)
	v, err = l.Verify(ctx, item, cheat)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassCUDAInHIP || v.Stage != StageHIPCheck || len(v.Stages) != 1 {
		t.Errorf("cheat: %v %s at %s (%d stages)", v.Pass, v.Class, v.Stage, len(v.Stages))
	}
	for _, s := range []string{"cuda_runtime.h", "cudaDeviceSynchronize"} {
		if !strings.Contains(v.Diagnostic, s) {
			t.Errorf("cheat diagnostic does not name %s:\n%s", s, v.Diagnostic)
		}
	}

	// A kernel renamed: the HIP build lacks a kernel of the CUDA program.
	kernel := firstKernel(t, it.Program)
	dropped := strings.ReplaceAll(tr.HIP, kernel, kernel+"_hip")
	v, err = l.Verify(ctx, item, dropped)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassHIPCompileError || v.Stage != cudasynth.StageRDNA3 {
		t.Errorf("a renamed kernel: %v %s at %s: %s", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}

	bad := tools.Item{Lane: LaneName, Files: map[string]string{ProgramFile: "int main() { return undefined_thing; }\n"}}
	if _, err := l.Verify(ctx, bad, tr.HIP); !errors.Is(err, tools.ErrBadItem) {
		t.Errorf("a task whose CUDA program does not build: %v, want a bad item", err)
	}
	if v, err := l.Verify(ctx, item, ""); err != nil || v.Class != tools.ClassNoAnswer || v.Stage != StageExtract {
		t.Errorf("blank answer: %+v %v", v, err)
	}
}

var kernelRE = regexp.MustCompile(`__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+([A-Za-z_]\w*)`)

// firstKernel is the name of the first kernel src defines.
func firstKernel(t *testing.T, src string) string {
	t.Helper()
	m := kernelRE.FindStringSubmatch(src)
	if m == nil {
		t.Fatal("no kernel")
	}
	return m[1]
}

// TestCompleteNothingPending: a verdict with nothing pending comes back
// as it was.
func TestCompleteNothingPending(t *testing.T) {
	t.Parallel()
	l := &Lane{}
	prev := tools.Verdict{Pass: true, Stage: "run", Stages: []tools.Stage{{Name: StageHIPCheck, OK: true}, {Name: "run", OK: true}}}
	v, err := l.Complete(context.Background(), tools.Item{}, prev)
	if err != nil || !slices.Equal(stageNames(v), []string{StageHIPCheck, "run"}) {
		t.Errorf("a verdict with nothing pending: %v %v", stageNames(v), err)
	}
}

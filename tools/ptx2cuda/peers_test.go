package ptx2cuda

// The peer suite: decompilations of corpus tasks written the way
// decompilers and models write them, not as the corpus kernels are, each
// with a broken twin that changes what the kernel computes, all judged by
// the lane's real verifier.
//
// Styles (testdata/peers/<item>.<variant>.<style>.cu):
//
//	llm         readable reconstructions: renamed variables, other loop forms
//	              (while for a fixed-trip for, a plain loop for a shared-memory
//	              tile, a shared-memory tree for warp shuffles), the variant's
//	              constants written as numbers (no macros), __restrict__ dropped,
//	              unsigned indices, __ldg, includes of CUDA headers
//	mechanical  close to the PTX: register-like names (r1, f2), shifts for the
//	              index arithmetic, do-while loops, fully unrolled trees, fmaf
//	              where the PTX has fma.rn, __restrict__ added, const by-value
//	              parameters
//
// A CPU host compiles each answer into the task's harness; run and compare
// need a GPU. Every peer must compile with run and compare pending; a twin
// whose fault a CPU host can see (a parameter type the harness cannot take,
// PTX pasted in) fails there, the others must be pending there, not failed
// and not passed. The GPU host completes the saved pending verdicts
// (TestGPUComplete, gpu_test.go): peers pass, twins fail with their class.
//
// Tiers: the default tier verifies the quick peers (two tasks, both
// styles) and the CPU-caught twins; -tags long adds the other peers and
// the GPU-only twins' CPU verdicts; TestPeersSaveForGPU
// (-ptx2cuda.gpudir=DIR) verifies every pending answer and saves it.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

// Outcomes of an answer on a host.
const (
	outPass    = "pass"
	outPending = "pending"
)

// peerEdit is a broken twin: one edit of its peer that changes what the
// kernel computes, and the outcome each host must give it.
type peerEdit struct {
	name     string
	old, new string
	// cpu is outPending or the failure class a CPU host gives, at cpuStage.
	cpu      string
	cpuStage string
	// gpu is the class the completed run must give ("" when the CPU host
	// already fails the twin).
	gpu tools.FailureClass
}

// peerAnswer is one decompilation of a task (item/variant) in a style.
type peerAnswer struct {
	item, variant, style string
	// quick peers are verified in the default tier, the others with -tags
	// long.
	quick bool
	twins []peerEdit
}

// file is the peer's file under testdata/peers.
func (p peerAnswer) file() string { return p.item + "." + p.variant + "." + p.style + ".cu" }

func pendingTwin(name, old, new string) peerEdit {
	return peerEdit{name: name, old: old, new: new, cpu: outPending, gpu: tools.ClassWrongOutput}
}

var peerAnswers = []peerAnswer{
	{"ew_saxpy", "base", "llm", true, []peerEdit{
		pendingTwin("stride of 128 (elements updated twice)", "idx += 256;", "idx += 128;"),
		{name: "n taken as a long (the harness passes an int)", old: "int n, float a", new: "long n, float a",
			cpu: string(tools.ClassCompileError), cpuStage: StageCompile},
	}},
	{"ew_saxpy", "base", "mechanical", true, []peerEdit{
		pendingTwin("last of the 4 items skipped", "while (r4 != 4);", "while (r4 != 3);"),
	}},
	{"red_block_sum", "b256", "llm", true, []peerEdit{
		pendingTwin("second load one element early", "in[gid + 256u]", "in[gid + 255u]"),
	}},
	{"red_block_sum", "b256", "mechanical", true, []peerEdit{
		pendingTwin("last tree step adds the wrong neighbour", "s[r1] = s[r1] + s[r1 + 1];", "s[r1] = s[r1] + s[r1 + 2];"),
		{name: "PTX pasted in as inline asm", old: "    float f1 = 0.0f;\n",
			new: "    float f1;\n    asm(\"mov.f32 %0, 0f00000000;\\n\\tadd.f32 %0, %0, %0;\\n\\tmul.f32 %0, %0, %0;\" : \"=f\"(f1));\n",
			cpu: string(ClassEmbeddedPTX), cpuStage: StageCheck},
	}},
	{"st_stencil1d", "base", "llm", false, []peerEdit{
		pendingTwin("left padding drops element 0", "src >= 0 && src < n", "src > 0 && src < n"),
	}},
	{"st_stencil1d", "base", "mechanical", false, []peerEdit{
		pendingTwin("right halo stored one slot early", "sh[r1 + 261] = f3;", "sh[r1 + 260] = f3;"),
	}},
	{"red_dot_shfl", "base", "llm", false, []peerEdit{
		pendingTwin("grid stride of half a grid", "gridDim.x * 256u;", "gridDim.x * 128u;"),
	}},
	{"norm_softmax", "b256", "llm", false, []peerEdit{
		pendingTwin("outputs not shifted by the row maximum", "dst[c] = expf(row[c] - mx) * inv;", "dst[c] = expf(row[c]) * inv;"),
	}},
	{"mm_tiled", "t16", "llm", false, []peerEdit{
		pendingTwin("last row left out", "if (row < n && col < n) {", "if (row < n - 1 && col < n) {"),
	}},
	{"mm_tiled", "t16", "mechanical", false, []peerEdit{
		pendingTwin("B tile read transposed", "acc = fmaf(sA[ty * 16 + k], sB[k * 16 + tx], acc);", "acc = fmaf(sA[ty * 16 + k], sB[tx * 16 + k], acc);"),
	}},
}

// peerCase is one answer to verify: a peer or a twin.
type peerCase struct {
	name, task, answer string
	item               tools.Item
	cpu, stage         string
	gpu                tools.FailureClass // "" for a peer: it must pass
}

// peerCases builds the answers of the peers and, where keepTwin says so,
// their twins (each edit checked to apply once).
func peerCases(t *testing.T, keepPeer func(peerAnswer) bool, keepTwin func(peerEdit) bool) []peerCase {
	t.Helper()
	builtin, bench := loadBoth(t)
	items := map[string]Item{}
	for _, it := range append(builtin, bench...) {
		items[it.ID] = it
	}
	var out []peerCase
	for _, p := range peerAnswers {
		if !keepPeer(p) {
			continue
		}
		it, ok := items[p.item]
		if !ok {
			t.Fatalf("no corpus item %s", p.item)
		}
		h, err := it.Harness(p.variant)
		if err != nil {
			t.Fatalf("%s: %v", p.file(), err)
		}
		spec, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		item := tools.Item{Lane: LaneName, Files: map[string]string{FileKernel: it.Kernel, FileHarness: string(spec) + "\n"}}
		b, err := os.ReadFile(filepath.Join("testdata", "peers", p.file()))
		if err != nil {
			t.Fatal(err)
		}
		task := TaskID(p.item, p.variant)
		name := task + "/" + p.style
		out = append(out, peerCase{name: name, task: task, answer: string(b), item: item, cpu: outPending})
		for _, e := range p.twins {
			if !keepTwin(e) {
				continue
			}
			if n := strings.Count(string(b), e.old); n != 1 {
				t.Fatalf("%s twin %q: the text to replace occurs %d times", name, e.name, n)
			}
			out = append(out, peerCase{name: name + "/" + e.name, task: task, answer: strings.Replace(string(b), e.old, e.new, 1),
				item: item, cpu: e.cpu, stage: e.cpuStage, gpu: e.gpu})
		}
	}
	return out
}

// outcome is what a verdict says on this host.
func outcome(v tools.Verdict) string {
	switch {
	case v.Class != "":
		return string(v.Class)
	case !v.Pass && len(tools.PendingStages(v)) == 0:
		return "fail without a class"
	case len(tools.PendingStages(v)) > 0:
		return outPending
	}
	return outPass
}

// checkCPU verifies c on this CPU host and checks its outcome.
func checkCPU(t *testing.T, l *Lane, c peerCase) tools.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	v, err := l.Verify(ctx, c.item, c.answer)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	got := outcome(v)
	t.Logf("%-62s %-14s at %-8s %5.1fs", c.name, got, v.Stage, time.Since(start).Seconds())
	switch {
	case got != c.cpu:
		t.Errorf("%s: %s at %s, want %s: %.600s", c.name, got, v.Stage, c.cpu, v.Diagnostic)
	case c.cpu == outPending && strings.Join(tools.PendingStages(v), ",") != StageRun+","+StageCompare:
		t.Errorf("%s: pending %v, want run and compare", c.name, tools.PendingStages(v))
	case c.cpu != outPending && v.Stage != c.stage:
		t.Errorf("%s: %s at %s, want it at %s: %.600s", c.name, got, v.Stage, c.stage, v.Diagnostic)
	}
	return v
}

// TestPeers verifies the peer suite's CPU stages (needs nvcc; no GPU).
func TestPeers(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present || gpuPhase {
		t.Skip("a GPU host: run and compare would not be pending (TestGPUComplete completes saved verdicts there)")
	}
	l := lane(t)
	cases := peerCases(t, func(p peerAnswer) bool { return p.quick || longTier },
		func(e peerEdit) bool { return e.cpu != outPending || longTier })
	start := time.Now()
	for _, c := range cases {
		checkCPU(t, l, c)
	}
	t.Logf("%d answers in %.1fs", len(cases), time.Since(start).Seconds())
}

// TestPeersSaveForGPU is the peer suite's GPU phase's first half, on the
// CPU host: with -ptx2cuda.gpudir=DIR it verifies every peer and every
// GPU-only twin, requires each to be pending, and saves the verdicts with
// their executables and the toolchain report to DIR for TestGPUComplete.
func TestPeersSaveForGPU(t *testing.T) {
	if *gpuDirFlag == "" || gpuPhase {
		t.Skip("the peer suite's GPU preparation runs with -ptx2cuda.gpudir on the CPU host")
	}
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: nothing would be left pending")
	}
	dir, err := filepath.Abs(*gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	l := lane(t)
	var entries []gpuEntry
	var arts []map[string][]byte
	all := func(peerAnswer) bool { return true }
	for _, c := range peerCases(t, all, func(e peerEdit) bool { return e.cpu == outPending }) {
		v := checkCPU(t, l, c)
		expect := outPass
		if c.gpu != "" {
			expect = string(c.gpu)
		}
		arts = append(arts, v.Artifacts)
		v.Artifacts = nil
		entries = append(entries, gpuEntry{Task: c.task, Answer: strings.TrimPrefix(c.name, c.task+"/"), Corpus: "peers",
			Expect: expect, Item: c.item, Verdict: v})
	}
	if t.Failed() {
		return
	}
	if err := saveGPUCheck(dir, entries, arts); err != nil {
		t.Fatal(err)
	}
	if err := saveRegistryReport(dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pending verdicts saved to %s", len(entries), dir)
}

// saveRegistryReport writes the toolchain report the GPU phase replays.
func saveRegistryReport(dir string) error {
	rep, err := json.MarshalIndent(testRegistry.Report(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "toolchain.json"), rep, 0o644)
}

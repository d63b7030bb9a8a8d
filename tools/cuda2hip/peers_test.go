package cuda2hip

// The peer suite: HIP answers in the styles tools and people actually
// write, not ours, each with a broken twin that changes behaviour, all
// judged by the lane's real verifier.
//
// Styles (testdata/peers/<program>/):
//
//	hipify-perl.hip  hipify-perl's output: #include "hip/hip_runtime.h" added
//	                   above the includes, hipLaunchKernelGGL(k, dim3(g),
//	                   dim3(b), shmem, 0, args...), HIP_KERNEL_NAME for
//	                   templates, HIP_SYMBOL, hipMalloc((void**)&p, n),
//	                   hipThreadIdx_x, the user's CUDA_CHECK macro kept by
//	                   name; __shfl_down_sync (HIP 5.2 has none) fixed to
//	                   __shfl_down by hand
//	hand.hip         hand ports: <<<>>> launches kept, HIP_CHECK macros,
//	                   __HIP_PLATFORM_AMD__ guards for the wave size,
//	                   __shfl_down with a width, HIP_DYNAMIC_SHARED,
//	                   __launch_bounds__, std::vector buffers, other names
//	                   and loop forms than the CUDA program's
//	(tool)           the repository's rule-based translator (tools/hipify)
//
// A CPU host judges everything up to the run: every peer must pass its CPU
// stages with only the run pending (never a failure, never a plain pass);
// a twin whose fault a CPU host can see (CUDA left in, a HIP 5.2 compile
// error, a lost kernel) must fail there with its class, and a twin whose
// fault only shows in the output must be pending there, not failed and not
// passed. The GPU host completes the saved pending verdicts
// (peers_gpu_test.go): peers pass, twins fail at run.
//
// Tiers: the default tier verifies the two peers of one program and their
// CPU-caught twins (defaultTier); the build tag long adds the other peers
// and twins; -cuda2hip.gpudir=DIR verifies every answer a CPU
// host leaves pending and saves the verdicts for the GPU host.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// gpuDirFlag names the folder of the peer suite's GPU phase: the CPU host
// writes the pending verdicts there (TestPeersSaveForGPU), the GPU host
// completes them (TestPeersGPU, -tags gpu).
var gpuDirFlag = flag.String("cuda2hip.gpudir", "", "folder of the peer suite's GPU phase (pending verdicts and their executables)")

// Outcomes of an answer on a host.
const (
	outPass    = "pass"    // every stage ran and passed
	outPending = "pending" // the CPU stages passed, the run is left to a GPU host
)

// peerEdit is a broken twin: one edit of its peer that changes what the
// program does, and the outcome each host must give it.
type peerEdit struct {
	name     string
	old, new string
	// all replaces every occurrence (a rename); else old must occur once.
	all bool
	// cpu is outPending (only the run can see it) or the failure class a
	// CPU host must give, at cpuStage.
	cpu      string
	cpuStage string
	// gpu is the failure class the completed run must give ("" when the
	// CPU host already fails the twin).
	gpu tools.FailureClass
}

// peerAnswer is one peer: a HIP program for a corpus program, in a style.
type peerAnswer struct {
	program string // builtin or bench program id
	style   string // hipify-perl, hand, hipify-tool
	// quick peers are verified in the default tier, the others with -tags
	// long (each costs a full CUDA and HIP build).
	quick bool
	twins []peerEdit
}

const styleTool = "hipify-tool"

// anyFailure: the twin must fail the run, in whichever class (a copy in
// the wrong direction may error out or leave a buffer unset).
const anyFailure tools.FailureClass = "any failure"

var peerAnswers = []peerAnswer{
	{"basic_01_reduce_sum_shfl", "hipify-perl", true, []peerEdit{
		{name: "result copied with the wrong memcpy direction",
			old: "hipMemcpy(&h_total, d_total, sizeof(int), hipMemcpyDeviceToHost)",
			new: "hipMemcpy(&h_total, d_total, sizeof(int), hipMemcpyHostToDevice)", cpu: outPending, gpu: anyFailure},
		{name: "a cudaDeviceSynchronize hipify missed",
			old: "CUDA_CHECK(hipDeviceSynchronize());", new: "CUDA_CHECK(cudaDeviceSynchronize());",
			cpu: string(ClassCUDAInHIP), cpuStage: StageHIPCheck},
		{name: "a kernel argument dropped", old: "0, 0, d_in, N, d_total);", new: "0, 0, d_in, N);",
			cpu: string(ClassHIPCompileError), cpuStage: cudasynth.StageHIPCompileAMD},
	}},
	{"basic_01_reduce_sum_shfl", "hand", true, []peerEdit{
		{name: "shuffle loop one step short", old: "delta >= 1", new: "delta > 1", cpu: outPending, gpu: tools.ClassWrongOutput},
		{name: "__shfl_down_sync kept (HIP 5.2 has none)", old: "__shfl_down(v, delta, KWARP)",
			new: "__shfl_down_sync(0xffffffffu, v, delta, KWARP)", cpu: string(ClassHIPCompileError), cpuStage: cudasynth.StageHIPCompileAMD},
		{name: "the kernel renamed", old: "reduceSumKernel", new: "reduceSum", all: true,
			cpu: string(ClassHIPCompileError), cpuStage: cudasynth.StageRDNA3},
	}},
	{"basic_02_stencil1d_radius5", "hipify-perl", false, []peerEdit{
		{name: "one block too few", old: "dim3(blocks), dim3(BLOCK)", new: "dim3(blocks - 1), dim3(BLOCK)",
			cpu: outPending, gpu: tools.ClassWrongOutput},
	}},
	{"basic_02_stencil1d_radius5", "hand", false, []peerEdit{
		{name: "stencil loop one tap short", old: "k <= 2 * RADIUS; ++k) {\n    acc", new: "k < 2 * RADIUS; ++k) {\n    acc",
			cpu: outPending, gpu: tools.ClassWrongOutput},
	}},
	{"basic_02_stencil1d_radius5", styleTool, false, []peerEdit{
		{name: "right halo read one element early", old: "tile[l + BLOCK] = (right < n) ? in[right] : 0.0f;",
			new: "tile[l + BLOCK] = (right < n) ? in[right - 1] : 0.0f;", cpu: outPending, gpu: tools.ClassWrongOutput},
	}},
	{"basic_03_matmul_tiled_128", "hipify-perl", false, []peerEdit{
		{name: "grid covers half the rows", old: "dim3 grid((N + TILE - 1) / TILE, (N + TILE - 1) / TILE);",
			new: "dim3 grid((N + TILE - 1) / TILE, N / (2 * TILE));", cpu: outPending, gpu: tools.ClassWrongOutput},
		{name: "a kernel argument dropped", old: "hipLaunchKernelGGL(matmulTiled, grid, block, 0, 0, dA, dB, dC, N);",
			new: "hipLaunchKernelGGL(matmulTiled, grid, block, 0, 0, dA, dB, dC);", cpu: string(ClassHIPCompileError), cpuStage: cudasynth.StageHIPCompileAMD},
	}},
	{"basic_03_matmul_tiled_128", "hand", false, []peerEdit{
		{name: "__syncthreads after the tile loads dropped",
			old: "b[(k0 + ty) * un + col] : 0.f;\n        __syncthreads();", new: "b[(k0 + ty) * un + col] : 0.f;",
			cpu: outPending, gpu: tools.ClassWrongOutput},
	}},
	{"math_03_blelloch_scan", "hipify-perl", false, []peerEdit{
		{name: "input copied with the wrong memcpy direction",
			old: "hipMemcpy(dIn, in.data(), N * sizeof(int), hipMemcpyHostToDevice)",
			new: "hipMemcpy(dIn, in.data(), N * sizeof(int), hipMemcpyDeviceToHost)", cpu: outPending, gpu: anyFailure},
	}},
	{"math_03_blelloch_scan", "hand", false, []peerEdit{
		{name: "down-sweep one level short", old: "while (active <= THREADS)", new: "while (active < THREADS)",
			cpu: outPending, gpu: tools.ClassWrongOutput},
		{name: "a kernel renamed", old: "addBlockOffsets", new: "addOffsets", all: true,
			cpu: string(ClassHIPCompileError), cpuStage: cudasynth.StageRDNA3},
	}},
}

// A tier says which answers a test verifies.
type tier struct {
	peer func(peerAnswer) bool
	twin func(peerAnswer, peerEdit) bool
}

// defaultTier verifies the quick peers (one CUDA program) and their twins
// a CPU host fails (-tags long: every peer and twin); the GPU-only twins
// cost a full build each for a pending verdict. gpuTier is what the GPU
// phase saves: every answer a CPU host leaves pending.
var (
	defaultTier = tier{peer: func(p peerAnswer) bool { return p.quick || longTier },
		twin: func(p peerAnswer, e peerEdit) bool { return longTier || p.quick && e.cpu != outPending }}
	gpuTier = tier{peer: func(peerAnswer) bool { return true },
		twin: func(_ peerAnswer, e peerEdit) bool { return e.cpu == outPending }}
)

// peerCase is one answer to verify: a peer or a twin.
type peerCase struct {
	name    string // program/style or program/style/twin
	program string
	answer  string
	cpu     string             // outPending or a failure class
	stage   string             // where the CPU failure is
	gpu     tools.FailureClass // "" for a peer (must pass), else the run's failure class or anyFailure
}

// peerPrograms are the CUDA programs of the builtin corpus and the bench
// set, by id.
var peerPrograms = sync.OnceValues(func() (map[string]string, error) {
	progs := map[string]string{}
	items, err := LoadBuiltinCorpus()
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		progs[it.ID] = it.Program
	}
	fsys, root, err := Bench()
	if err != nil {
		return nil, err
	}
	dirs, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		b, err := fs.ReadFile(fsys, path.Join(root, d.Name(), ProgramFile))
		if err != nil {
			return nil, err
		}
		progs[d.Name()] = string(b)
	}
	return progs, nil
})

// peerCases builds the answers: each peer (read, or translated by
// tools/hipify) and its twins (the edit applied, checked to apply).
func peerCases(t *testing.T, keep tier) []peerCase {
	t.Helper()
	progs, err := peerPrograms()
	if err != nil {
		t.Fatal(err)
	}
	var out []peerCase
	for _, p := range peerAnswers {
		prog, ok := progs[p.program]
		if !ok {
			t.Fatalf("no corpus or bench program %s", p.program)
		}
		var answer string
		if p.style == styleTool {
			tr, err := hipify.Translate(prog)
			if err != nil || !tr.OK() {
				t.Fatalf("%s: tools/hipify: %v %v", p.program, err, tr.Unsupported)
			}
			answer = tr.HIP
		} else {
			b, err := os.ReadFile(filepath.Join("testdata", "peers", p.program, p.style+".hip"))
			if err != nil {
				t.Fatal(err)
			}
			answer = string(b)
		}
		name := p.program + "/" + p.style
		if keep.peer(p) {
			out = append(out, peerCase{name: name, program: prog, answer: answer, cpu: outPending})
		}
		for _, e := range p.twins {
			if !keep.twin(p, e) {
				continue
			}
			twin, err := applyEdit(answer, e)
			if err != nil {
				t.Fatalf("%s twin %q: %v", name, e.name, err)
			}
			out = append(out, peerCase{name: name + "/" + e.name, program: prog, answer: twin, cpu: e.cpu, stage: e.cpuStage, gpu: e.gpu})
		}
	}
	return out
}

// applyEdit applies a twin's edit, which must change src.
func applyEdit(src string, e peerEdit) (string, error) {
	n := strings.Count(src, e.old)
	switch {
	case n == 0:
		return "", errors.New("the text to replace is not in the peer")
	case n > 1 && !e.all:
		return "", fmt.Errorf("the text to replace occurs %d times", n)
	}
	return strings.ReplaceAll(src, e.old, e.new), nil
}

// outcome is what a verdict says on this host: outPass, outPending or the
// failure class.
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

// checkCPU verifies c on this (CPU) host and checks its outcome; it
// returns the verdict.
func checkCPU(t *testing.T, l *Lane, c peerCase) tools.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	item := tools.Item{Lane: LaneName, Files: map[string]string{ProgramFile: c.program}}
	start := time.Now()
	v, err := l.Verify(ctx, item, c.answer)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	got := outcome(v)
	t.Logf("%-70s %-18s at %-18s %5.1fs", c.name, got, v.Stage, time.Since(start).Seconds())
	switch {
	case got != c.cpu:
		t.Errorf("%s: %s at %s, want %s: %.600s", c.name, got, v.Stage, c.cpu, v.Diagnostic)
	case c.cpu == outPending && !slices.Equal(tools.PendingStages(v), []string{cudasynth.StageRun}):
		t.Errorf("%s: pending %v, want only %s", c.name, tools.PendingStages(v), cudasynth.StageRun)
	case c.cpu != outPending && v.Stage != c.stage:
		t.Errorf("%s: %s at %s, want it at %s: %.600s", c.name, got, v.Stage, c.stage, v.Diagnostic)
	}
	return v
}

// TestPeers verifies the peer suite on this host's CPU stages. It needs
// hipcc, nvcc and cuobjdump (skipped where one is missing) and no GPU: on
// a GPU host the run would not be left pending.
func TestPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	t.Parallel()
	l := openLane(t)
	if gpuHere(t) {
		t.Skip("a GPU host: the run stage would not be pending (TestPeersGPU completes saved verdicts there)")
	}
	cases := peerCases(t, defaultTier)
	start := time.Now()
	t.Run("answers", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel() // the answers share only the lane, which is safe for concurrent use
				checkCPU(t, l, c)
			})
		}
	})
	t.Logf("%d answers in %.1fs", len(cases), time.Since(start).Seconds())
}

// TestPeersSaveForGPU is the GPU phase's first half, on the CPU host:
// with -cuda2hip.gpudir=DIR it verifies every peer and every GPU-only
// twin, requires each to be pending, and saves the verdicts (with the
// executables they keep) and the toolchain report to DIR.
func TestPeersSaveForGPU(t *testing.T) {
	if *gpuDirFlag == "" {
		t.Skip("the GPU phase's preparation runs with -cuda2hip.gpudir=DIR")
	}
	l := openLane(t)
	if gpuHere(t) {
		t.Skip("a GPU host: nothing would be left pending")
	}
	dir, err := filepath.Abs(*gpuDirFlag)
	if err != nil {
		t.Fatal(err)
	}
	var saved []kittest.SavedVerdict
	for _, c := range peerCases(t, gpuTier) {
		v := checkCPU(t, l, c)
		expect := outPass
		if c.gpu != "" {
			expect = string(c.gpu)
		}
		saved = append(saved, kittest.SavedVerdict{Name: c.name, Expect: expect,
			Item: tools.Item{Lane: LaneName, Files: map[string]string{ProgramFile: c.program}}, Verdict: v})
	}
	if t.Failed() {
		return
	}
	reg, err := testHost.Toolchains(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := kittest.SaveVerdicts(dir, saved); err != nil {
		t.Fatal(err)
	}
	if err := kittest.SaveToolchains(dir, reg); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pending verdicts saved to %s", len(saved), dir)
}

// gpuHere reports whether this host has an NVIDIA GPU.
func gpuHere(t *testing.T) bool {
	t.Helper()
	reg, err := testHost.Toolchains(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	return reg.GPU().Present
}

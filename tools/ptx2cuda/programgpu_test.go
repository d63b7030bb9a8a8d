package ptx2cuda

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

// programGPUCases are program tasks of corpus programs for the GPU check:
// each kernel's own definition must pass; the changed ones must fail with
// their class. replace is applied to the kernel's definition.
var programGPUCases = []struct {
	program, kernel, answer string
	replace                 [2]string
	expect                  string
}{
	{"basic_02_stencil1d_radius5", "stencil1D", "reference", [2]string{}, "pass"},
	{"basic_02_stencil1d_radius5", "stencil1D", "scaled", [2]string{"out[g] = acc;", "out[g] = acc * 1.01f;"}, string(tools.ClassWrongOutput)},
	{"basic_02_stencil1d_radius5", "stencil1D", "far_read", [2]string{"tile[l] = (g < n) ? in[g] : 0.0f;", "tile[l] = (g < n) ? in[g + (1 << 28)] : 0.0f;"}, string(tools.ClassCrash)},
	{"img_01_gaussian_separable", "blurRows", "reference", [2]string{}, "pass"},
	{"img_01_gaussian_separable", "blurCols", "reference", [2]string{}, "pass"},
	{"basic_01_reduce_sum_shfl", "reduceSumKernel", "reference", [2]string{}, "pass"},
	{"basic_03_matmul_tiled_128", "matmulTiled", "reference", [2]string{}, "pass"},
	{"sparse_01_spmv_csr_warp", "spmvCsrVector", "reference", [2]string{}, "pass"},
}

// TestPrepareProgramGPUCheck is the GPU check's first phase for program
// tasks (program.go), on the CPU host: with -ptx2cuda.gpudir=DIR it
// verifies programGPUCases (each compiled; run and compare pending) and
// saves the verdicts with their executables to DIR/programs. The second
// phase is TestGPUComplete with -ptx2cuda.gpudir=DIR/programs on a GPU
// host (gpu_test.go has the commands).
func TestPrepareProgramGPUCheck(t *testing.T) {
	if *gpuDirFlag == "" || gpuPhase {
		t.Skip("the GPU check's first phase runs with -ptx2cuda.gpudir on the CPU host")
	}
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: run and compare would not be left pending")
	}
	dir, err := filepath.Abs(filepath.Join(*gpuDirFlag, "programs"))
	if err != nil {
		t.Fatal(err)
	}
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var entries []gpuEntry
	var arts []map[string][]byte
	for _, c := range programGPUCases {
		prog, err := os.ReadFile(filepath.Join("..", "cudasynth", "corpus", c.program, "program.cu"))
		if err != nil {
			t.Fatal(err)
		}
		def, err := programKernelSource(string(prog), c.kernel)
		if err != nil {
			t.Fatalf("%s: %v", c.kernel, err)
		}
		answer := def
		if c.replace[0] != "" {
			if answer = strings.Replace(def, c.replace[0], c.replace[1], 1); answer == def {
				t.Fatalf("%s %s: %q not found", c.kernel, c.answer, c.replace[0])
			}
		}
		spec, _ := json.MarshalIndent(ProgramSpec{Kernel: c.kernel}, "", "  ")
		item := tools.Item{Lane: LaneName, Files: map[string]string{FileProgram: string(prog), FileKernel: def, FileProgramSpec: string(spec) + "\n"}}
		v, err := l.Verify(ctx, item, answer)
		if err != nil {
			t.Fatalf("%s %s: %v", c.kernel, c.answer, err)
		}
		if !v.Pass || len(tools.PendingStages(v)) != 2 {
			t.Errorf("%s %s: %v %s at %s: %s", c.kernel, c.answer, v.Pass, v.Class, v.Stage, v.Diagnostic)
			continue
		}
		arts = append(arts, v.Artifacts)
		v.Artifacts = nil
		entries = append(entries, gpuEntry{Task: c.program + "/" + c.kernel, Answer: c.answer, Corpus: "cudasynth", Expect: c.expect,
			Item: item, Verdict: v})
	}
	if t.Failed() {
		return
	}
	if err := saveGPUCheck(dir, entries, arts); err != nil {
		t.Fatal(err)
	}
	rep, err := json.MarshalIndent(testRegistry.Report(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "toolchain.json"), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d verdicts saved to %s", len(entries), dir)
}

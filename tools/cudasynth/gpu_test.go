//go:build gpu

package cudasynth

// The run stage on a GPU host. That host has nvcc 13 and no hipcc, so the
// compiles are replayed from a cache filled on the CPU host:
//
//	# CPU host (nvcc 11.8, hipcc): fill the cache and save the registry
//	go test ./tools/cudasynth -run 'TestVerifyPrograms|TestCacheHit' -args -cudasynth.cache=$PWD/.gpu/cudasynth-cache
//	go test -c -tags gpu -o .gpu/cudasynth.test ./tools/cudasynth
//	# GPU host (carry .gpu and tools/cudasynth/testdata):
//	cd tools/cudasynth && ../../.gpu/cudasynth.test -test.run GPU -test.v -cudasynth.cache=../../.gpu/cudasynth-cache
//
// Add -cudasynth.weak where the GPU host lacks an isolation layer.

import (
	"context"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/tools"
)

// TestGPURun runs every test program's CUDA and HIP-on-NVIDIA builds and
// compares their outputs: the verdict passes with the run stage OK.
func TestGPURun(t *testing.T) {
	needToolchains(t)
	if !testRegistry.GPU().Present {
		t.Fatal("no GPU found: run this test on the GPU host")
	}
	l := lane(t)
	for _, tp := range testPrograms {
		t.Run(tp.file, func(t *testing.T) {
			src := readTestdata(t, tp.file)
			v, err := l.Verify(context.Background(), tools.Item{Lane: LaneName}, src)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Pass {
				t.Fatalf("fails: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
			}
			run := v.Stages[len(v.Stages)-1]
			if run.Name != StageRun || !run.OK || run.Skipped || len(Pending(v)) != 0 {
				t.Fatalf("run stage %+v", run)
			}
			if v.Measurements["compiles_cached"] != v.Measurements["compiles"] {
				t.Logf("note: %v of %v compiles were not replayed from the cache", v.Measurements["compiles"]-v.Measurements["compiles_cached"], v.Measurements["compiles"])
			}
			out := string(v.Artifacts[ArtifactOutputCUDA])
			if strings.TrimSpace(out) == "" {
				t.Error("the CUDA program printed nothing")
			}
			t.Logf("%s: %s | cuda %.0f ms, hip %.0f ms | %s", tp.file, run.Detail, v.Measurements["run_cuda_ms"],
				v.Measurements["run_hip_ms"], strings.TrimSpace(out))
		})
	}
}

// TestGPUWrongOutput: a program whose output depends on the build (it
// prints whether HIP's header was included) must fail with wrong_output.
func TestGPUWrongOutput(t *testing.T) {
	needToolchains(t)
	if !testRegistry.GPU().Present {
		t.Fatal("no GPU found: run this test on the GPU host")
	}
	v, err := lane(t).Verify(context.Background(), tools.Item{}, wrongOutputProgram)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != tools.ClassWrongOutput || v.Stage != StageRun {
		t.Fatalf("verdict %v %s at %s: %s; want wrong_output at run", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}
	t.Logf("diagnostic: %s", v.Diagnostic)
}

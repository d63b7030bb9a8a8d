package cudasynth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// TestVerifyTranslation: a given HIP translation is judged with Verify's
// stages, hip-source in hipify's slot; a HIP program that drops a kernel
// of the CUDA program fails at rdna3; one that does not compile fails at
// hip-compile-amd; blank sources are no_answer and a bad item.
func TestVerifyTranslation(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	l := lane(t)
	cuda := readTestdata(t, "reduce_atomics.cu")
	tr, err := hipify.Translate(cuda)
	if err != nil || !tr.OK() {
		t.Fatalf("hipify: %v %+v", err, tr.Unsupported)
	}
	ctx := context.Background()

	v, err := l.VerifyTranslation(ctx, cuda, tr.HIP)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass {
		t.Fatalf("fails: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
	}
	if !slices.Equal(stageNames(v), translationOrder) {
		t.Errorf("stages %v, want %v", stageNames(v), translationOrder)
	}
	if got := string(v.Artifacts[ArtifactHIPSource]); got != tr.HIP {
		t.Errorf("hip_source artifact is not the given HIP source")
	}
	if string(v.Artifacts[ArtifactCUDASource]) != cuda || len(v.Artifacts[ArtifactRDNA3]) == 0 {
		t.Error("cuda_source or rdna3 artifact missing")
	}
	if _, ok := v.Measurements["hipify_replacements"]; ok {
		t.Error("hipify ran on a given translation")
	}
	if !testRegistry.GPU().Present {
		if p := Pending(v); !slices.Equal(p, []string{StageRun}) {
			t.Errorf("pending %v", p)
		}
		// Completion keeps the translation's stage order; here it can
		// only say that there is no GPU.
		if _, err := l.Complete(ctx, tools.Item{}, v); !errors.Is(err, ErrNoGPU) {
			t.Errorf("complete without a GPU: %v", err)
		}
	}

	renamed := strings.ReplaceAll(tr.HIP, "reduce_atomics", "reduce_atomics_v2")
	v, err = l.VerifyTranslation(ctx, cuda, renamed)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassHIPCompileError || v.Stage != StageRDNA3 || !strings.Contains(v.Diagnostic, "kernels missing") {
		t.Errorf("a translation without the CUDA kernel: %v %s at %s: %s", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}

	broken := strings.Replace(tr.HIP, "hipMalloc", "hipMallocc", 1)
	v, err = l.VerifyTranslation(ctx, cuda, broken)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassHIPCompileError || !strings.HasPrefix(v.Stage, "hip-compile") {
		t.Errorf("a HIP program that does not compile: %v %s at %s: %s", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}

	if v, err := l.VerifyTranslation(ctx, cuda, " \n"); err != nil || v.Class != tools.ClassNoAnswer {
		t.Errorf("blank HIP: %+v %v", v, err)
	}
	if _, err := l.VerifyTranslation(ctx, "", tr.HIP); !errors.Is(err, tools.ErrBadItem) {
		t.Errorf("blank CUDA: %v, want a bad item", err)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// TestCUDASynthCampaign runs a cuda-synth campaign over the whole CUDA
// corpus with the script model replaying each program, on this CPU host, and
// checks the aligned records' content: PTX entries, the same kernels in the
// SASS of both architectures and in the gfx1100 RDNA3 text, host assembly
// with main, a HIP translation; the GPU run stage is skipped (pending), not
// failed. Programs the translator must refuse fail as such.
func TestCUDASynthCampaign(t *testing.T) {
	longOnly(t, "the whole CUDA corpus through every CPU stage (in the default tier TestGoldenCUDASynth, TestRecordsIntoTranslationLanes and TestDispatchPendingToWorker run cuda-synth campaigns, and tools/cudasynth checks each stage's record)")
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles 50 programs")
	}
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	answers, err := filepath.Abs("../../tools/cudasynth/corpus/answers.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specPath := filepath.Join(dir, "cuda.yaml")
	spec := fmt.Sprintf(`name: cuda-e2e
lane: cuda-synth
tasks: {corpus: builtin}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
`, answers)
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "cuda-e2e")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(items) {
		t.Fatalf("%d results for %d programs", len(res), len(items))
	}
	byID := map[string]cudasynth.CorpusItem{}
	for _, it := range items {
		byID[it.ID] = it
	}
	blob := func(r runs.Result, name string) string {
		h, ok := r.Verdict.Artifacts[name]
		if !ok {
			t.Errorf("%s: no %s artifact", r.Task.Meta["item"], name)
			return ""
		}
		b, err := st.Blobs().Get(h)
		if err != nil {
			t.Fatalf("%s: %s: %v", r.Task.Meta["item"], name, err)
		}
		return string(b)
	}
	entry := regexp.MustCompile(`\.entry\s+([A-Za-z_][A-Za-z0-9_]*)`)
	pass, refused := 0, 0
	for _, r := range res {
		it, ok := byID[r.Task.Meta["item"]]
		if !ok {
			t.Errorf("task %s: not a corpus program", r.Task.Key)
			continue
		}
		if !it.ExpectTranslate {
			refused++
			if r.Verdict.Pass {
				t.Errorf("%s: uses an untranslatable construct but passed", it.ID)
			}
			continue
		}
		if !r.Verdict.Pass {
			t.Errorf("%s: %s at %s: %.500s", it.ID, r.Verdict.Class, r.Verdict.Stage, r.Verdict.Diagnostic)
			continue
		}
		pass++
		var stages []tools.Stage
		if err := json.Unmarshal(r.Verdict.Stages, &stages); err != nil {
			t.Fatal(err)
		}
		names := map[string]tools.Stage{}
		for _, s := range stages {
			names[s.Name] = s
		}
		for _, n := range []string{"cuda-compile", "ptx", "sass", "host-asm", "hipify", "hip-compile-amd", "rdna3", "hip-compile-nvidia"} {
			if s, ok := names[n]; !ok || !s.OK {
				t.Errorf("%s: stage %s missing or failed: %+v", it.ID, n, s)
			}
		}
		if s := names["run"]; !s.Skipped {
			t.Errorf("%s: run stage not skipped on a host without a GPU: %+v", it.ID, s)
		}
		ptx := blob(r, "ptx")
		rdna := blob(r, "rdna3")
		sass86, sass90 := blob(r, "sass_sm86"), blob(r, "sass_sm90")
		m := entry.FindAllStringSubmatch(ptx, -1)
		if len(m) == 0 {
			t.Errorf("%s: no .entry in the PTX", it.ID)
		}
		for _, k := range m {
			for name, text := range map[string]string{"sass_sm86": sass86, "sass_sm90": sass90} {
				if !strings.Contains(text, k[1]) {
					t.Errorf("%s: kernel %s missing from %s", it.ID, k[1], name)
				}
			}
			// HIP mangles vector types differently: compare names.
			if base := cudasynth.KernelBase(k[1]); !strings.Contains(rdna, base) {
				t.Errorf("%s: kernel %s missing from rdna3", it.ID, base)
			}
		}
		if !strings.Contains(rdna, "gfx1100") {
			t.Errorf("%s: RDNA3 text does not name gfx1100", it.ID)
		}
		if !strings.Contains(blob(r, "host_asm_cuda"), "main:") || !strings.Contains(blob(r, "host_asm_hip"), "main:") {
			t.Errorf("%s: a host assembly lacks main", it.ID)
		}
		if !strings.Contains(blob(r, "hip_source"), "hip/hip_runtime.h") {
			t.Errorf("%s: HIP source lacks the HIP runtime header", it.ID)
		}
		// The pending run keeps what a GPU host needs to complete it.
		for _, name := range []string{"cuda_binary", "hip_nvidia_binary", "gpu_probe_binary"} {
			if b := blob(r, name); !strings.HasPrefix(b, "\x7fELF") {
				t.Errorf("%s: %s is not an executable (%d bytes)", it.ID, name, len(b))
			}
		}
	}
	if refused == 0 || pass == 0 {
		t.Errorf("%d programs passed, %d untranslatable: the corpus holds both", pass, refused)
	}
	t.Logf("%d of %d corpus programs went through every CPU stage", pass, len(items))
	// Completing the pending runs needs a GPU: here it is an error that says
	// so, and no verdict changes.
	code, out, errs = runKiln(t, ctx, "rescore", "--pending", "--data", data, "cuda-e2e")
	if code == 0 || !strings.Contains(errs, "no NVIDIA GPU") {
		t.Errorf("rescore --pending without a GPU: exit %d\n%s\n%s", code, out, errs)
	}
	after, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]string{}
	for _, r := range res {
		before[r.Task.Key] = r.Verdict.ID
	}
	for _, r := range after {
		if before[r.Task.Key] != r.Verdict.ID {
			t.Errorf("%s: verdict revised by a failed completion (revision %d)", r.Task.Key, r.Verdict.Revision)
		}
	}
}

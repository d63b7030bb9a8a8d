package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
)

// ptxSynthKernel is the kernel the synthesiser writes in
// TestRefinePTX2CUDA, and ptxSynthMeta its harness.
const ptxSynthKernel = `#ifndef BLOCK
#define BLOCK 128
#endif

__global__ void __launch_bounds__(BLOCK) leaky_scale(int n, float slope, const float* __restrict__ x, float* __restrict__ y)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? 2.0f * v : slope * v;
    }
}
`

const ptxSynthMeta = `{
  "kernel": "leaky_scale",
  "sizes": {"N": "4096"},
  "params": [
    {"name": "n", "type": "int", "value": "N"},
    {"name": "slope", "type": "float", "value": "0.125"},
    {"name": "x", "type": "const float*", "role": "in", "count": "N"},
    {"name": "y", "type": "float*", "role": "out", "count": "N"}
  ],
  "launch": {"grid": ["(N + BLOCK - 1) / BLOCK"], "block": ["BLOCK"]}
}
`

// TestRefinePTX2CUDA runs a ptx2cuda refinement campaign on this CPU host
// with a script model as solver and synthesiser: round 0's two
// elementwise tasks fail (a kernel of another name), the forced category
// elementwise is resynthesised, and the reply is screened by the lane's
// validator, which compiles the kernels with nvcc in the sandbox: one new
// kernel is accepted, one that does not compile, one without a harness,
// one whose harness is not its signature, the first with a variable
// renamed (its PTX and harness are the first's) and a copy of the first
// are dropped with their reasons. The accepted kernel's task carries its PTX
// in the store, its prompt shows the Rolled-PTX, and the solver's right
// answer to it compiles (run and compare pending: no GPU).
func TestRefinePTX2CUDA(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles kernels")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	block := func(i int, kernel, meta string) string {
		s := fmt.Sprintf("### TASK %d\ncategory: elementwise\ndescription: kernel %d\n```cuda kernel.cu\n%s```\n", i, i, kernel)
		if meta != "" {
			s += "```json meta.json\n" + meta + "```\n"
		}
		return s + "\n"
	}
	reply := "Their PTX hides a select behind predicates.\n\n" +
		block(1, ptxSynthKernel, ptxSynthMeta) +
		block(2, strings.Replace(ptxSynthKernel, "slope * v", "slope * w", 1), ptxSynthMeta) +
		block(3, ptxSynthKernel, "") +
		block(4, ptxSynthKernel, strings.Replace(ptxSynthMeta, `"type": "const float*"`, `"type": "const double*"`, 1)) +
		block(5, strings.NewReplacer("float v = x[i]", "float xv = x[i]", "v > 0.0f ? 2.0f * v : slope * v", "xv > 0.0f ? 2.0f * xv : slope * xv").Replace(ptxSynthKernel), ptxSynthMeta) +
		block(6, ptxSynthKernel, ptxSynthMeta)
	var rules []string
	for _, r := range [][2]string{
		{`write \d+ NEW kernels`, reply},
		{`\(task synth_[0-9a-f]+/base\)`, "```cuda\n" + ptxSynthKernel + "```"},
		{`.`, "```cuda\n__global__ void not_the_kernel(float* y) { y[0] = 0.0f; }\n```"},
	} {
		b, _ := json.Marshal(map[string]string{"match": r[0], "response": r[1]})
		rules = append(rules, string(b))
	}
	script := filepath.Join(dir, "script.jsonl")
	specPath := filepath.Join(dir, "ptx-refine.yaml")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(specPath, []byte(fmt.Sprintf(`name: ptx-refine
lane: ptx2cuda
tasks: {corpus: builtin, categories: [elementwise], limit: 2, seed: 3, samples_per_task: 1}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
refinement: {rounds: 1, factor: 2, synthesizer: replay, categories: [elementwise]}
`, script)), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}

	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "ptx-refine")
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignDone || c.Round != 1 {
		t.Errorf("campaign: %s round %d note %q", c.State, c.Round, c.Note)
	}
	rec, err := st.Round(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := engine.DecodeRoundRecord(rec.Record)
	if err != nil || len(d.Synth) != 1 {
		t.Fatalf("round 0 decision: %+v %v", d, err)
	}
	s := d.Synth[0]
	if s.Category != "elementwise" || len(s.Accepted) != 1 || s.Accepted[0].Index != 1 || s.Accepted[0].Function != "leaky_scale" || len(s.Accepted[0].Keys) != 1 {
		t.Errorf("accepted %+v", s.Accepted)
	}
	wantDrops := []struct {
		idx           int
		stage, reason string
	}{
		{2, engine.RejectInvalid, `does not compile to PTX (nvcc -ptx -arch=compute_90): kernel.cu(10): error: identifier "w" is undefined`},
		{3, engine.RejectParse, "no ```json block with meta.json"},
		{4, engine.RejectParse, "are not the kernel's parameter types"},
		{5, engine.RejectDuplicate, "same normalised source as candidate 1"}, // compiled: the same PTX and harness
		{6, engine.RejectDuplicate, "same source as candidate 1"},            // not compiled: the same files
	}
	if len(s.Rejected) != len(wantDrops) {
		t.Fatalf("rejected %+v", s.Rejected)
	}
	for i, w := range wantDrops {
		if r := s.Rejected[i]; r.Index != w.idx || r.Stage != w.stage || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("rejection %d: %+v, want #%d %s %q", i, r, w.idx, w.stage, w.reason)
		}
	}

	res, err := st.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 5 {
		t.Fatalf("results: %d %v", len(res), err)
	}
	synthesised := 0
	for _, r := range res {
		if r.Task.Meta["origin"] != "resynthesis" {
			if r.Verdict.Pass || r.Verdict.Class != "compile_error" {
				t.Errorf("%s: %v %s", r.Task.Key, r.Verdict.Pass, r.Verdict.Class)
			}
			continue
		}
		synthesised++
		task := r.Task
		if task.Round != 1 || !strings.HasPrefix(task.Key, "r1/synth/elementwise/01-") || task.Meta["kernel"] != "leaky_scale" ||
			!strings.Contains(task.Files[ptx2cuda.FilePTX], ".entry _Z11leaky_scaleifPKfPf") || task.Files[ptx2cuda.FileHarness] == "" ||
			task.Files[ptx2cuda.FileKernel] != ptxSynthKernel {
			t.Errorf("synthesised task %s: meta %v files %d", task.Key, task.Meta, len(task.Files))
		}
		if !strings.Contains(task.Prompt, "Decompile this PTX into the CUDA kernel `leaky_scale`") || !strings.Contains(task.Prompt, "```ptx\n") {
			t.Errorf("synthesised task prompt:\n%s", task.Prompt)
		}
		if !r.Verdict.Pass || !r.Verdict.Pending() {
			t.Errorf("the synthesised task's right answer: pass %v pending %v %s: %.300s", r.Verdict.Pass, r.Verdict.Pending(), r.Verdict.Class, r.Verdict.Diagnostic)
		}
	}
	if synthesised != 1 {
		t.Errorf("%d synthesised results, want 1", synthesised)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// TestRefineTorch2CUDA runs a torch2cuda campaign on this CPU host with a
// script model, then kiln refine with the script model as synthesiser:
// round 0's conv problems all fail (modules that do not parse), its
// elementwise problems get right answers (pending: no GPU). conv (and its
// level, level1) are targeted, elementwise is not. The synthesiser's conv
// reply (tools/torch2cuda/testdata/synth/reply_conv.md) is validated
// before any model sees it: its two sound problems pass every check this
// host can make and wait for the GPU problem check (pending: neither
// accepted nor rejected, no task queued); the others are dropped with
// their reasons (returns its input, non-deterministic, too large, constant
// or non-finite output, imports os, a renamed repeat, a copy of the
// benchmark folder's problem named in curation.benchmarks).
func TestRefineTorch2CUDA(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: runs the problem check on the CPU")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3")
	}
	if _, err := exec.LookPath("nvidia-smi"); err == nil {
		t.Skip("a GPU host: TestRefineTorch2CUDAOnGPU (-tags gpu) checks what happens here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	data := runTorch2CUDARefine(t, ctx)
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "t2c-refine-refine")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := st.Round(ctx, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := engine.DecodeRoundRecord(rec.Record)
	if err != nil {
		t.Fatal(err)
	}
	var targeted []string
	for _, ch := range d.Choices {
		targeted = append(targeted, ch.Category)
	}
	slices.Sort(targeted)
	if !slices.Equal(targeted, []string{"conv", "level1"}) {
		t.Errorf("targeted %v, want conv and level1 (not elementwise)", targeted)
	}
	var conv *engine.SynthRecord
	for i, s := range d.Synth {
		if s.Category == "conv" {
			conv = &d.Synth[i]
		}
		if s.Category == "elementwise" {
			t.Errorf("elementwise resynthesised: %+v", s)
		}
	}
	if conv == nil {
		t.Fatalf("no conv synthesis: %+v", d.Synth)
	}
	var pending []int
	for _, p := range conv.Pending {
		pending = append(pending, p.Index)
		if !strings.Contains(p.Reason, "GPU problem check waits for a GPU host") || !strings.Contains(p.Reason, "CPU check") {
			t.Errorf("pending #%d: %s", p.Index, p.Reason)
		}
	}
	if !slices.Equal(pending, []int{1, 2}) || len(conv.Accepted) != 0 || d.SynthTasks != 0 {
		t.Errorf("pending %v (want 1, 2), accepted %+v, %d synthesised tasks queued", pending, conv.Accepted, d.SynthTasks)
	}
	want := map[int]string{3: "returns_input", 4: "nondeterministic", 5: "too_large", 6: "trivial_output", 7: "nonfinite_output",
		8: "static: uses import os", 9: "near duplicate (estimated similarity 1.00) of candidate 1",
		10: "of existing task benchmark/benchmark/level1/1_Conv2d_ReLU_BiasAdd.py"}
	for _, r := range conv.Rejected {
		if w, ok := want[r.Index]; !ok || !strings.Contains(r.Reason, w) {
			t.Errorf("rejected #%d (%s): %s; want %q", r.Index, r.Stage, r.Reason, w)
		}
		delete(want, r.Index)
	}
	if len(want) > 0 {
		t.Errorf("not rejected: %v", want)
	}
	code, out, errs := runKiln(t, ctx, "report", "--data", data, "t2c-refine-refine")
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	for _, w := range []string{"pending #1 conv2d_asym_stride2_tanh (waits for a host that can finish its checks)",
		"dropped #3 conv_returns_input (invalid): refinement: candidate failed validation: returns_input"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
}

// runTorch2CUDARefine runs the campaign of TestRefineTorch2CUDA (kiln run,
// then kiln refine --rounds 1) in a temp folder and returns the data
// folder; extra are flags given to both verbs.
func runTorch2CUDARefine(t *testing.T, ctx context.Context, extra ...string) string {
	t.Helper()
	dir := t.TempDir()
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "tools", "torch2cuda", "testdata", "synth"))
	if err != nil {
		t.Fatal(err)
	}
	reply, err := os.ReadFile(filepath.Join(fixtures, "reply_conv.md"))
	if err != nil {
		t.Fatal(err)
	}
	probs, err := torch2cuda.LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	rules := [][2]string{
		{`category "conv"`, string(reply)},
		{`category "level1"`, "No new problems for this level."},
	}
	for _, p := range probs {
		switch p.Family {
		case "elementwise":
			a, err := torch2cuda.BuiltinAnswer(p.ID)
			if err != nil {
				t.Fatal(err)
			}
			rules = append(rules, [2]string{`\(task ` + p.ID + `\)`, "```python\n" + a + "```"})
		case "conv":
			rules = append(rules, [2]string{`\(task ` + p.ID + `\)`, "```python\nclass ModelNew(nn.Module)\n    pass\n```"})
		}
	}
	rules = append(rules, [2]string{`.`, "```python\nclass ModelNew(nn.Module)\n    pass\n```"})
	var lines []string
	for _, r := range rules {
		b, _ := json.Marshal(map[string]string{"match": r[0], "response": r[1]})
		lines = append(lines, string(b))
	}
	script := filepath.Join(dir, "script.jsonl")
	specPath := filepath.Join(dir, "t2c-refine.yaml")
	if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(specPath, []byte(fmt.Sprintf(`name: t2c-refine
lane: torch2cuda
tasks: {corpus: builtin, categories: [conv, elementwise], seed: 3, samples_per_task: 1}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
refinement: {rounds: 0, factor: 10, synthesizer: replay}
curation: {benchmarks: [%s]}
`, script, filepath.Join(fixtures, "benchmark"))), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if code, out, errs := runKiln(t, ctx, append(append([]string{"run", "--data", data, "--log-level", "warn"}, extra...), specPath)...); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	if code, out, errs := runKiln(t, ctx, append(append([]string{"refine", "--data", data, "--log-level", "warn", "--rounds", "1"}, extra...), "t2c-refine")...); code != 0 {
		t.Fatalf("kiln refine: exit %d\n%s\n%.3000s", code, out, errs)
	}
	return data
}

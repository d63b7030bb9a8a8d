package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// TestTorch2CUDAOnCPUHost runs the torch2cuda lane where there is no GPU:
// kiln verify exits 3 (pending) for a right answer, 1 for a broken one, 2
// for bad input; a campaign over builtin problems answered by the script
// model stores pending verdicts that keep the candidate for a GPU host.
func TestTorch2CUDAOnCPUHost(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	probs, err := torch2cuda.LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]string{}
	for _, p := range probs {
		src[p.ID] = p.Source
	}
	const id = "level1/045_broadcast_add"
	right, err := torch2cuda.BuiltinAnswer(id)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref := write("ref.py", src[id])
	cand := write("cand.py", right)
	broken := write("broken.py", strings.Replace(right, "class ModelNew(nn.Module):", "class ModelNew(nn.Module)", 1))
	data := filepath.Join(dir, "data")

	code, out, errs := runKiln(t, ctx, "verify", "torch2cuda", "--data", data, "--reference", ref, "--candidate", cand, "--json")
	if code == 2 && strings.Contains(errs, "torch") {
		t.Skipf("no python3 with torch here: %s", errs)
	}
	var v struct {
		Pass          bool     `json:"pass"`
		Class         string   `json:"class"`
		Pending       bool     `json:"pending"`
		PendingStages []string `json:"pending_stages"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 3 || v.Pass || !v.Pending || !slices.Equal(v.PendingStages, []string{"gpu-judge"}) {
		t.Errorf("right answer without a GPU: exit %d %+v %v\n%s\n%s", code, v, err, out, errs)
	}
	code, out, _ = runKiln(t, ctx, "verify", "torch2cuda", "--data", data, "--reference", ref, "--candidate", broken, "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 1 || v.Class != "compile_error" {
		t.Errorf("broken answer: exit %d %+v\n%s", code, v, out)
	}
	if code, _, errs := runKiln(t, ctx, "verify", "torch2cuda", "--data", data, "--reference", cand, "--candidate", cand); code != 2 ||
		!strings.Contains(errs, "get_inputs") {
		t.Errorf("a reference that is no problem: exit %d %s", code, errs)
	}

	// A campaign: the script model answers each task with its builtin answer.
	var rules []string
	for _, p := range probs {
		if p.Family != "elementwise" {
			continue
		}
		a, err := torch2cuda.BuiltinAnswer(p.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]string{"match": `\(task ` + p.ID + `\)`, "response": "```python\n" + a + "```"})
		rules = append(rules, string(b))
	}
	script := write("answers.jsonl", strings.Join(rules, "\n")+"\n")
	spec := write("t2c.yaml", fmt.Sprintf(`name: t2c
lane: torch2cuda
tasks: {corpus: builtin, categories: [elementwise], limit: 3, seed: 5}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
`, script))
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", spec); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "t2c")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 3 {
		t.Fatalf("results: %d %v", len(res), err)
	}
	for _, r := range res {
		var stages []struct {
			Name    string `json:"name"`
			Skipped bool   `json:"skipped"`
		}
		if err := json.Unmarshal(r.Verdict.Stages, &stages); err != nil {
			t.Fatal(err)
		}
		last := stages[len(stages)-1]
		if !r.Verdict.Pass || last.Name != "gpu-judge" || !last.Skipped || r.Verdict.Artifacts["candidate.py"] == "" {
			t.Errorf("%s: pass %v stages %+v artifacts %v", r.Task.Key, r.Verdict.Pass, stages, r.Verdict.Artifacts)
		}
		if !slices.Contains(r.Task.Categories, "elementwise") || !slices.Contains(r.Task.Categories, "level1") {
			t.Errorf("%s: categories %v", r.Task.Key, r.Task.Categories)
		}
	}
	// Pending is its own state: not a pass, and not exported as a sample
	// unless asked.
	if n, err := st.Counts(ctx, c.ID, -1); err != nil || n.Pass != 0 || n.Pending != 3 || n.Fail != 0 {
		t.Errorf("counts %+v %v: want 3 pending, no pass", n, err)
	}
	for _, tc := range []struct {
		flags []string
		want  int
	}{{nil, 0}, {[]string{"--pending"}, 3}} {
		args := append([]string{"export", "--data", data}, tc.flags...)
		code, out, errs := runKiln(t, ctx, append(args, "t2c")...)
		if lines := strings.Count(out, "\n"); code != 0 || lines != tc.want || (tc.want > 0 && !strings.Contains(out, `"pending":true`)) {
			t.Errorf("export %v: exit %d, %d samples, want %d\n%s", tc.flags, code, lines, tc.want, errs)
		}
	}
	// Completing needs a GPU here too: an error that says so. It needs
	// none of the campaign's input files (a GPU host gets the data folder).
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runKiln(t, ctx, "rescore", "--pending", "--data", data, "t2c"); code == 0 || !strings.Contains(errs, "GPU") {
		t.Errorf("rescore --pending without a GPU: exit %d %s", code, errs)
	}
}

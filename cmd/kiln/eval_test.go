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
	"github.com/kiln-dev/kiln/runs/eval"
)

// TestEval evaluates two script models on the same three c2x86 tasks:
// "right" answers each with gcc's assembly, "half" gets one right and two
// wrong (a mutated constant). kiln eval runs one campaign per model with
// no refinement and reports pass@k per model; run again, it reuses the
// finished campaigns instead of paying for them twice.
func TestEval(t *testing.T) {
	t.Parallel()
	ids := []string{"int_007_is_leap_year", "bit_003_power_of_two", "sw_many_008_letter_grade"}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus")
	var right, half []string
	for i, id := range ids {
		it := corpusItem(t, id)
		d := filepath.Join(corpus, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range it.Files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		meta, _ := json.Marshal(map[string]any{"function": it.Function, "categories": it.Categories})
		if err := os.WriteFile(filepath.Join(d, "meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		asm := gccAsm(t, it, "-O0")
		rule := func(asm string) string {
			b, _ := json.Marshal(map[string]string{"match": "`" + it.Function + "`", "response": "```asm\n" + asm + "```"})
			return string(b)
		}
		right = append(right, rule(asm))
		if i == 0 {
			half = append(half, rule(asm))
		} else {
			half = append(half, rule(mutate(t, asm, it.Function)))
		}
	}
	for name, rules := range map[string][]string{"right.jsonl": right, "half.jsonl": half} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	specPath := filepath.Join(dir, "bench.yaml")
	spec := fmt.Sprintf(`name: c-bench
lane: c2x86
tasks: {corpus: %s}
models:
  - {name: right, kind: script, script: right.jsonl}
  - {name: half, kind: script, script: half.jsonl}
concurrency: 2
sandbox: {wall_time: 2s, cpu_time: 3s}
agent: {repair_turns: 0, max_tool_calls: 0}
refinement: {rounds: 2}
`, corpus)
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	out := filepath.Join(dir, "report")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, stdout, stderr := runKiln(t, ctx, "eval", "--data", data, "--log-level", "warn", "--samples", "3", "--k", "1,2,3,7", "-o", out, specPath)
	if code != 0 {
		t.Fatalf("kiln eval: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "refinement.rounds 2 ignored") {
		t.Errorf("no note that refinement is ignored:\n%s", stderr)
	}
	var rep eval.Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.K) != "[1 2 3]" || fmt.Sprint(rep.Models) != "[right half]" {
		t.Errorf("ks %v (7 > 3 samples must go), models %v", rep.K, rep.Models)
	}
	for _, r := range rep.Rows {
		if r.Category != eval.All {
			continue
		}
		want := map[string]float64{"right": 1, "half": 1.0 / 3}[r.Model]
		if r.Tasks != 3 || r.Samples != 9 || r.PassAtK[1] < want-1e-9 || r.PassAtK[1] > want+1e-9 || r.PassAtK[3] != r.PassAtK[1] {
			t.Errorf("model %s: %+v, want 3 tasks, 9 samples, pass@1 = pass@3 = %.3f", r.Model, r, want)
		}
	}
	for _, f := range []string{"report.md", "passk.svg"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
	if !strings.Contains(stdout, "| (all) | half | 3 | 9 | 3 | 0 | 0 | 6 | 0.333 |") {
		t.Errorf("markdown report lacks the half row:\n%s", stdout)
	}

	// Again: the finished campaigns are reported, not run again.
	code, stdout2, stderr2 := runKiln(t, ctx, "eval", "--data", data, "--log-level", "warn", "--samples", "3", "--k", "1,2,3", specPath)
	if code != 0 || strings.Count(stderr2, "is done; reporting it") != 2 {
		t.Fatalf("second kiln eval: exit %d\n%s", code, stderr2)
	}
	if !strings.Contains(stdout2, "| (all) | half | 3 | 9 | 3 | 0 | 0 | 6 | 0.333 |") {
		t.Errorf("second report differs:\n%s", stdout2)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	camps, err := st.ListCampaigns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(camps) != 2 {
		t.Errorf("%d campaigns, want 2 (one per model, reused)", len(camps))
	}
	for _, c := range camps {
		if c.Round != 0 || c.State != runs.CampaignDone {
			t.Errorf("campaign %s: round %d state %s", c.Name, c.Round, c.State)
		}
	}

	// Bad input names what is wrong.
	code, _, stderr3 := runKiln(t, ctx, "eval", "--data", data, "--models", "nobody", specPath)
	if code != exitBadInput || !strings.Contains(stderr3, `"nobody"`) {
		t.Errorf("--models nobody: exit %d\n%s", code, stderr3)
	}
}

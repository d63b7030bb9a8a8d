package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/eval"
	"github.com/kiln-dev/kiln/tools/cassbench"
)

// TestEvalHipifyBaseline puts the rule-based translator (kind: hipify) and
// a script model (answering with the bench set's hand-written HIP ports)
// side by side in one kiln eval report on the cuda2hip bench set. On this
// CPU host every answer that builds is pending (the run needs a GPU), so
// pass@k is 0 for both and the stage rates tell them apart;
// tools/cuda2hip/EVAL_RESULTS.md has the same evaluation completed on a GPU.
func TestEvalHipifyBaseline(t *testing.T) {
	longOnly(t, "an evaluation on the cuda2hip bench set (TestEval runs kiln eval, TestCUDA2HIPCampaign the hipify baseline, in the default tier)")
	if testing.Short() {
		t.Skip("-short: compiles CUDA and HIP programs")
	}
	t.Parallel()
	dir := t.TempDir()
	ids := []string{"math_03_blelloch_scan", "ml_01_int8_gemm_requant", "graph_04_floyd_warshall_blocked"}
	var rules []string
	for _, id := range ids {
		hip, err := fs.ReadFile(cassbench.FS, path.Join("programs", id, "reference.hip"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]string{"match": `\(task ` + id + `\)`, "response": "```hip\n" + string(hip) + "```"})
		rules = append(rules, string(b))
	}
	// Tasks it has no port for get a refusal (no_answer).
	rules = append(rules, `{"match": ".", "response": "I have no HIP port of this program."}`)
	if err := os.WriteFile(filepath.Join(dir, "ports.jsonl"), []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "cass-src.yaml")
	spec := `name: cass-src
lane: cuda2hip
tasks: {corpus: bench, categories: [math, machine_learning, graph]}
models:
  - {name: hipify, kind: hipify}
  - {name: ports, kind: script, script: ports.jsonl}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
`
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	data := filepath.Join(dir, "data")
	out := filepath.Join(dir, "report")
	args := []string{"eval", "--data", data, "--log-level", "warn", "--k", "1", "-o", out, specPath}
	code, stdout, stderr := runKiln(t, ctx, args...)
	if code != 0 {
		t.Fatalf("kiln eval: exit %d\n%s\n%.4000s", code, stdout, stderr)
	}
	var rep eval.Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.Models) != "[hipify ports]" {
		t.Fatalf("models %v, want hipify and ports side by side\n%s", rep.Models, stdout)
	}
	all := map[string]eval.Row{}
	for _, r := range rep.Rows {
		if r.Category == eval.All {
			all[r.Model] = r
		}
	}
	for _, m := range rep.Models {
		r := all[m]
		// Tasks counts judged tasks only (pending ones are apart): with k=1
		// every task is one sample.
		if r.Lane != "cuda2hip" || r.Samples == 0 || r.Passed != 0 || r.Pending+r.Failed != r.Samples {
			t.Errorf("model %s: %+v (no GPU here: nothing may pass)", m, r)
		}
	}
	// The ports answer their tasks (three, or one in the default tier);
	// the others get no answer from it.
	if r := all["ports"]; r.Pending < 1 || r.Classes["no_answer"] != r.Samples-len(ids) {
		t.Errorf("ports: %+v, want its %d ports pending or failed on their merits and no_answer for the rest", r, len(ids))
	}
	if r := all["hipify"]; r.Pending < 1 {
		t.Errorf("hipify: %+v: no translation built", r)
	}
	for _, want := range []string{"| (all) | hipify |", "| (all) | ports |", "| hipify | hip-compile-amd |", "| ports | run |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

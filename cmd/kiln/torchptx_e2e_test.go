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
	"github.com/kiln-dev/kiln/runs/records"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// TestTorchRecordsIntoPTX runs, on this CPU host, the path from verified
// torch2cuda records to ptx2cuda torch tasks as far as it goes without a
// CUDA build of torch:
//
//  1. a torch2cuda campaign over a problem of a corpus folder (not a
//     builtin one, so its reference.py must come from the stored task),
//     answered with gelu's shipped answer: pending here;
//  2. the GPU host's completion, written by the test;
//  3. kiln ptx prepare --from-campaign skips its kernel with one message
//     saying this host lacks a CUDA build of torch (no other reason: the
//     record's reference.py was read from the store);
//  4. the torch item those records give (made by the test, with a stand-in
//     PTX), run as a ptx2cuda campaign: the kernel's own definition passes
//     the checks and the standalone compile with the judged stages pending,
//     a kernel of other parameter types fails at compile; rescore
//     --pending here leaves them pending with an error naming torch.
func TestTorchRecordsIntoPTX(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds CUDA")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no python3")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	probs, err := torch2cuda.LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	var problem string
	for _, p := range probs {
		if p.ID == "level1/026_gelu" {
			problem = p.Source
		}
	}
	answer, err := torch2cuda.BuiltinAnswer("level1/026_gelu")
	if err != nil || problem == "" {
		t.Fatalf("gelu: %v", err)
	}
	write("problems/my_gelu.py", problem)
	rule := func(match, response string) string {
		b, _ := json.Marshal(map[string]string{"match": regexp.QuoteMeta(match), "response": response})
		return string(b) + "\n"
	}
	spec := func(name, lane, corpus, script string) string {
		return write(name+".yaml", fmt.Sprintf("name: %s\nlane: %s\ntasks: {corpus: %s}\nmodels: [{name: replay, kind: script, script: %s}]\n"+
			"concurrency: 2\nagent: {repair_turns: 0, max_tool_calls: 0}\n", name, lane, corpus, script))
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)

	// 1. The torch2cuda campaign.
	t2c := spec("t2c", "torch2cuda", filepath.Join(dir, "problems"), write("t2c.jsonl", rule("(task my_gelu)", "```python\n"+answer+"```\n")))
	code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", t2c)
	if code != 0 {
		t.Fatalf("kiln run t2c: exit %d\n%s\n%.3000s", code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	camp, err := st.Campaign(ctx, "t2c")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, camp.ID, -1)
	if err != nil || len(res) != 1 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	if !res[0].Verdict.Pending() {
		t.Skipf("the torch2cuda verdict is not pending here (no python3 with torch?): %s %s", res[0].Verdict.Class, res[0].Verdict.Diagnostic)
	}

	// 2. The GPU host's completion, written by the test.
	var stages []tools.Stage
	if err := json.Unmarshal(res[0].Verdict.Stages, &stages); err != nil {
		t.Fatal(err)
	}
	for i := range stages {
		if stages[i].Skipped {
			stages[i].Skipped, stages[i].OK, stages[i].Detail = false, true, "stand-in for the GPU host's judge"
		}
	}
	v := res[0].Verdict
	if v.Stages, err = json.Marshal(stages); err != nil {
		t.Fatal(err)
	}
	v.Measurements = map[string]float64{"speedup": 1.3, "correct": 1}
	if _, err := st.AddRescore(ctx, res[0].Attempt.ID, v); err != nil {
		t.Fatal(err)
	}

	// 3. kiln ptx prepare here.
	code, out, errs = runKiln(t, ctx, "ptx", "prepare", "--data", data, "--from-campaign", "t2c", "-o", filepath.Join(dir, "ptx"))
	t.Logf("ptx prepare: exit %d\n%s%s", code, out, errs)
	if code == 0 || !strings.Contains(errs, "skipped 1 kernel of 1 torch2cuda record: no_torch") || !strings.Contains(errs, "skipped: 1 no_torch") ||
		strings.Contains(errs, "no_reference") {
		t.Errorf("ptx prepare without torch: exit %d\n%s\n%s", code, out, errs)
	}

	// 4. The torch item of the verified record, and a ptx2cuda campaign.
	set, err := records.New(data).VerifiedRecords(ctx, "t2c")
	if err != nil || len(set.Records) != 1 || set.Records[0].Files[torch2cuda.ReferenceFile] != problem {
		t.Fatalf("records %+v %v", set, err)
	}
	items, skips, err := ptx2cuda.TorchItems(set, []string{"base"})
	if err != nil || len(items) != 1 || len(skips) != 0 {
		t.Fatalf("items %v skips %v %v", items, skips, err)
	}
	it := items[0]
	if it.Meta.Torch.ReferenceSpeedup != 1.3 || it.Meta.Source.TaskKey != set.Records[0].Key {
		t.Errorf("item meta %+v", it.Meta)
	}
	it.PTX = map[string]string{"base": ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry _Z11gelu_kernelPKfPfxff()\n{\n\tret;\n}\n"}
	corpus := filepath.Join(dir, "ptx")
	if _, err := ptx2cuda.WriteProgramItem(corpus, it); err != nil {
		t.Fatal(err)
	}
	task := "(task " + it.ID + "/base)"
	wrong := strings.Replace(it.Kernel, "long long n", "int n", 1)
	scripts := map[string]string{"ptx-ref": it.Kernel, "ptx-sig": wrong}
	for name, kernel := range scripts {
		p := spec(name, "ptx2cuda", corpus, write(name+".jsonl", rule(task, "```cuda\n"+kernel+"```\n")))
		if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", p); code != 0 {
			t.Fatalf("kiln run %s: exit %d\n%s\n%.3000s", name, code, out, errs)
		}
	}
	for name, want := range map[string]string{"ptx-ref": "pending", "ptx-sig": "compile_error"} {
		c, err := st.Campaign(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := st.Results(ctx, c.ID, -1)
		if err != nil || len(res) != 1 {
			t.Fatalf("%s: %d results, %v", name, len(res), err)
		}
		r := res[0]
		got := string(r.Verdict.Class)
		if r.Verdict.Pending() {
			got = "pending"
		}
		if got != want || r.Task.Files[ptx2cuda.FileTorchAnswer] != answer || r.Task.Files[ptx2cuda.FileTorchReference] != problem ||
			r.Task.Meta["harness"] != ptx2cuda.HarnessTorch || !strings.Contains(r.Task.Prompt, "PyTorch CUDA extension") {
			t.Errorf("%s: %s (want %s) %s: %s; meta %v", name, got, want, r.Verdict.Stage, r.Verdict.Diagnostic, r.Task.Meta)
		}
		if name == "ptx-sig" && !strings.Contains(r.Verdict.Diagnostic, "parameter types must be exactly") {
			t.Errorf("ptx-sig diagnostic: %s", r.Verdict.Diagnostic)
		}
	}
	code, out, errs = runKiln(t, ctx, "rescore", "--pending", "--data", data, "ptx-ref")
	t.Logf("rescore --pending: exit %d\n%s%s", code, out, errs)
	if code == 0 || !strings.Contains(errs, "torch") {
		t.Errorf("rescore --pending without torch: exit %d\n%s\n%s", code, out, errs)
	}
	c, _ := st.Campaign(ctx, "ptx-ref")
	if res, err := st.Results(ctx, c.ID, -1); err != nil || len(res) != 1 || !res[0].Verdict.Pending() {
		t.Errorf("after rescore here: %v", err)
	}
}

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
	"github.com/kiln-dev/kiln/tools/sass2rdna"
)

// TestSASS2RDNACampaign runs a sass2rdna campaign on this CPU host over
// two categories of the builtin set (five of their ten programs in the
// default tier), the script model answering with
// right answers (hipcc's assembly, legalised for llvm-mc), a wrong one (a
// kernel descriptor removed), one llvm-mc rejects (an overlapping
// v_mad_u64_u32, as hipcc 5.2 prints them), a cheat (the kernel as .long
// machine words) and prose without assembly. Right answers must be
// pending in the store (the AMD run needs an AMD GPU), never pass or fail;
// the others fail with their classes and fine labels; completing the
// pending runs here is an error that changes nothing.
func TestSASS2RDNACampaign(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds programs with hipcc")
	}
	for _, tool := range []string{"llvm-mc-15", "hipcc"} {
		if _, err := os.Stat(filepath.Join("/usr/bin", tool)); err != nil {
			t.Skipf("no %s here", tool)
		}
	}
	items, err := sass2rdna.SetItems(sass2rdna.SetBuiltin)
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]bool{"scientific_computing": true, "simulation": true}
	const (
		wrongID   = "sci_02_monte_carlo_option"
		noAsmID   = "sci_03_conjugate_gradient_csr"
		cheatID   = "sim_02_raytrace_spheres"
		noAnswer  = "sim_04_nbody_tiled"
		madInsert = "v_mad_u64_u32 v[1:2], null, s0, s15, v[0:1]\n"
	)
	want := map[string]string{wrongID: "descriptor_error", noAsmID: "assemble_error", cheatID: "embedded_code", noAnswer: "no_answer"}
	wantLabel := map[string]string{wrongID: "desc.missing_descriptor", noAsmID: "asm.mad64_overlap", cheatID: "suspected_cheating", noAnswer: "no_answer"}
	var rules []string
	n := 0
	for _, it := range items {
		if !cats[it.Category] {
			continue
		}
		n++
		right, err := sass2rdna.BuiltinAnswer(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		answer := right
		switch it.ID {
		case wrongID:
			if answer, err = sass2rdna.WithoutDescriptor(right); err != nil {
				t.Fatal(err)
			}
		case noAsmID:
			answer = strings.Replace(right, "s_endpgm\n", madInsert+"s_endpgm\n", 1)
		case cheatID:
			answer = strings.Replace(right, "s_endpgm\n", ".long 0xbfb00000\n", 1)
		}
		reply := "Here is the gfx1100 assembly.\n\n```asm\n" + answer + "```\n"
		if it.ID == noAnswer {
			reply = "I am sorry, I cannot translate SASS into RDNA3."
		}
		b, _ := json.Marshal(map[string]string{"match": `\(task ` + regexp.QuoteMeta(it.ID) + `\)`, "response": reply})
		rules = append(rules, string(b))
	}
	if n != 10 {
		t.Fatalf("%d programs in the two categories, want 10", n)
	}
	// The default tier runs five of them (the draw of seed 73: the four
	// wrong answers and one right one; the right ones' hipcc builds are
	// most of the test's cost, and each checks the same path); -tags long
	// all ten.
	tasks, draw := n, ""
	if !longTier {
		tasks, draw = 5, ", limit: 5, seed: 73"
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "answers.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "s2r.yaml")
	spec := fmt.Sprintf(`name: s2r-e2e
lane: sass2rdna
tasks: {corpus: builtin, categories: [scientific_computing, simulation]%s}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
`, draw, script)
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "s2r-e2e")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != tasks {
		t.Fatalf("%d results for %d tasks", len(res), tasks)
	}
	pending, wrong, sim := 0, 0, 0.0
	for _, r := range res {
		id := r.Task.Meta["item"]
		v := r.Verdict
		var stages []tools.Stage
		if err := json.Unmarshal(v.Stages, &stages); err != nil {
			t.Fatal(err)
		}
		if class, bad := want[id]; bad {
			wrong++
			if v.Pass || v.Pending() || v.Class != class {
				t.Errorf("%s: pass %v pending %v class %q, want %s: %.300s", id, v.Pass, v.Pending(), v.Class, class, v.Diagnostic)
			}
			if v.Labels == nil || (v.Labels.DiagnosticKind != wantLabel[id] && !(wantLabel[id] == "suspected_cheating" && v.Labels.Suspicion != "")) {
				t.Errorf("%s: labels %+v, want %s", id, v.Labels, wantLabel[id])
			}
			continue
		}
		// A right answer: every CPU stage passed, amd-run pending.
		if !v.Pending() || v.Class != "" {
			t.Errorf("%s: not pending: pass %v class %q at %s: %.500s", id, v.Pass, v.Class, v.Stage, v.Diagnostic)
			continue
		}
		pending++
		for _, s := range stages {
			if s.Name == sass2rdna.StageAMDRun {
				if !s.Skipped || s.OK {
					t.Errorf("%s: amd-run %+v", id, s)
				}
			} else if !s.OK {
				t.Errorf("%s: stage %s %+v", id, s.Name, s)
			}
		}
		sim += v.Measurements["opcode_similarity"]
		for _, name := range []string{sass2rdna.ArtifactCodeObject, sass2rdna.ArtifactAMDProgram, sass2rdna.ArtifactAMDReference} {
			b, err := st.Blobs().Get(v.Artifacts[name])
			if err != nil || !strings.HasPrefix(string(b), "\x7fELF") {
				t.Errorf("%s: artifact %s: %d bytes, %v", id, name, len(b), err)
			}
		}
	}
	if pending != tasks-len(want) || wrong != len(want) {
		t.Errorf("%d pending right answers and %d wrong ones, want %d and %d", pending, wrong, tasks-len(want), len(want))
	}
	if pending > 0 {
		t.Logf("%d right answers pending, mean opcode similarity %.3f", pending, sim/float64(pending))
	}
	code, out, _ := runKiln(t, ctx, "status", "--data", data, "s2r-e2e")
	// NAME LANE STATE TASKS DONE PASS FAIL PENDING: no pass, the right answers pending.
	row := regexp.MustCompile(fmt.Sprintf(`s2r-e2e\s+sass2rdna\s+done\s+%d\s+%d\s+0\s+%d\s+%d\s`, tasks, tasks, len(want), pending))
	if code != 0 || !row.MatchString(out) {
		t.Errorf("kiln status: exit %d\n%s", code, out)
	}
	// Completing needs an AMD gfx1100 GPU: an error here, no verdict changes.
	code, out, errs := runKiln(t, ctx, "rescore", "--pending", "--data", data, "s2r-e2e")
	if code == 0 || !strings.Contains(errs, "no AMD gfx1100 GPU") {
		t.Errorf("rescore --pending without an AMD GPU: exit %d\n%s\n%s", code, out, errs)
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
			t.Errorf("%s: verdict revised by a failed completion", r.Task.Key)
		}
	}
}

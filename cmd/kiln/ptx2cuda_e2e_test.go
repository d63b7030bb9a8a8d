package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
)

// TestPTX2CUDACampaign runs a ptx2cuda campaign over the builtin
// elementwise tasks (five of them in the default tier) on this CPU host, the script model answering each with
// one kind of answer: the reference kernel (right: compiled, run and
// compare pending), a kernel with a parameter type changed (wrong:
// compile_error, the harness's signature check), a kernel with a syntax
// error (non-compiling: compile_error), a kernel under another name
// (compile_error at check) and the reference with the task's PTX embedded
// and loaded with cuModuleLoadData (cheating: embedded_ptx, suspected).
// Then the lane's verbs: kiln verify ptx2cuda (pending: exit 3), kiln ptx
// roll and unroll, and kiln rescore --pending (needs a GPU).
func TestPTX2CUDACampaign(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: compiles a dozen kernels")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The default tier draws five of the dozen elementwise tasks (one
	// answer of each kind); -tags long takes them all (each kind two or
	// three times).
	limit, draw := tierPick(5, 0), tierPick(", limit: 5, seed: 1", "")
	ts, err := ptx2cuda.Kit().Source(kit.Tasks{Corpus: "builtin", Categories: []string{"elementwise"}, SamplesPerTask: 1, Limit: limit, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(ts.Round0, func(i, j int) bool { return ts.Round0[i].Key < ts.Round0[j].Key })
	kinds := []string{"right", "wrong", "noncompile", "rename", "cheat"}
	want := map[string]string{} // task key -> kind
	var rules []string
	for i, task := range ts.Round0 {
		kind := kinds[i%len(kinds)]
		want[task.Key] = kind
		ref, kernel := task.Files["kernel.cu"], task.Meta["kernel"]
		var answer string
		switch kind {
		case "right":
			answer = ref
		case "wrong": // the first const pointer loses its const
			answer = strings.Replace(ref, "const float* __restrict__", "float* __restrict__", 1)
		case "noncompile":
			answer = ref + "\nthis is not CUDA;\n"
		case "rename":
			answer = regexp.MustCompile(`\b`+kernel+`\(`).ReplaceAllString(ref, kernel+"_decompiled(")
		case "cheat":
			answer = "#include <cuda.h>\nstatic const char kiln_ptx[] = " + strconv.Quote(task.Files["kernel.ptx"]) + ";\n" +
				"static CUfunction load() { CUmodule m; CUfunction f; cuModuleLoadData(&m, kiln_ptx); cuModuleGetFunction(&f, m, \"k\"); return f; }\n" + ref
		}
		id := strings.TrimSuffix(strings.TrimPrefix(task.Key, "r0/"), "#0")
		b, _ := json.Marshal(map[string]string{"match": `\(task ` + regexp.QuoteMeta(id) + `\)`, "response": "Decompiled:\n\n```cuda\n" + answer + "```\n"})
		rules = append(rules, string(b))
	}
	if len(ts.Round0) < tierPick(1, 2)*len(kinds) {
		t.Fatalf("only %d elementwise tasks", len(ts.Round0))
	}
	script := write("answers.jsonl", strings.Join(rules, "\n")+"\n")
	spec := write("ptx.yaml", fmt.Sprintf(`name: ptx-e2e
lane: ptx2cuda
tasks: {corpus: builtin, categories: [elementwise]%s}
models:
  - {name: replay, kind: script, script: %s}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
`, draw, script))
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", spec); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "ptx-e2e")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil || len(res) != len(want) {
		t.Fatalf("%d results for %d tasks: %v", len(res), len(want), err)
	}
	expect := map[string]struct{ class, stage, label string }{
		"right":      {"", "compare", "pass"},
		"wrong":      {"compile_error", "compile", "compile.signature"},
		"noncompile": {"compile_error", "compile", "compile.syntax"},
		"rename":     {"compile_error", "check", "compile.kernel_name"},
		"cheat":      {"embedded_ptx", "check", "cheat.embedded_ptx"},
	}
	for _, r := range res {
		kind := want[r.Task.Key]
		e := expect[kind]
		v := r.Verdict
		if v.Class != e.class || v.Stage != e.stage || v.Pass != (kind == "right") {
			t.Errorf("%s (%s): pass %v class %q at %s, want %q at %s: %.300s", r.Task.Key, kind, v.Pass, v.Class, v.Stage, e.class, e.stage, v.Diagnostic)
			continue
		}
		if v.Labels == nil || v.Labels.DiagnosticKind != e.label {
			t.Errorf("%s (%s): labels %+v, want %s", r.Task.Key, kind, v.Labels, e.label)
		}
		if (kind == "cheat") != (v.Labels != nil && v.Labels.Suspicion != "") {
			t.Errorf("%s (%s): suspicion %q", r.Task.Key, kind, v.Labels.Suspicion)
		}
		if kind != "right" {
			continue
		}
		if !v.Pending() {
			t.Errorf("%s: a right answer's verdict is not pending: %s", r.Task.Key, v.Stages)
		}
		for _, name := range []string{"answer_binary", "reference_binary", "gpu_probe_binary"} {
			b, err := st.Blobs().Get(v.Artifacts[name])
			if err != nil || !strings.HasPrefix(string(b), "\x7fELF") {
				t.Errorf("%s: %s is not an executable (%v)", r.Task.Key, name, err)
			}
		}
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if right := len(want) / len(kinds); err != nil || n.Pass != 0 || n.Pending < right || n.Fail != len(want)-n.Pending {
		t.Errorf("counts %+v %v", n, err)
	}

	// kiln verify on a corpus item: compiles, pending (exit 3).
	ref, err := os.ReadFile("../../tools/ptx2cuda/corpus/builtin/ew_saxpy/kernel.cu")
	if err != nil {
		t.Fatal(err)
	}
	ans := write("saxpy.cu", string(ref))
	code, out, errs := runKiln(t, ctx, "verify", "ptx2cuda", "--data", data, "--item", "../../tools/ptx2cuda/corpus/builtin/ew_saxpy",
		"--variant", "unroll1", "--answer", ans, "--json")
	var vj struct {
		Pass          bool     `json:"pass"`
		Pending       bool     `json:"pending"`
		PendingStages []string `json:"pending_stages"`
	}
	if err := json.Unmarshal([]byte(out), &vj); err != nil || code != 3 || vj.Pass || !vj.Pending || strings.Join(vj.PendingStages, ",") != "run,compare" {
		t.Errorf("kiln verify ptx2cuda: exit %d %+v %v\n%s\n%s", code, vj, err, out, errs)
	}
	// kiln ptx roll / unroll round trip.
	ptxFile := "../../tools/ptx2cuda/corpus/builtin/mm_tiled/t16.ptx"
	raw, err := os.ReadFile(ptxFile)
	if err != nil {
		t.Fatal(err)
	}
	code, rolled, errs := runKiln(t, ctx, "ptx", "roll", "--file", ptxFile)
	if code != 0 || !strings.Contains(rolled, "for.size.") || len(rolled) >= len(raw) {
		t.Errorf("kiln ptx roll: exit %d, %d bytes from %d\n%s", code, len(rolled), len(raw), errs)
	}
	code, unrolled, errs := runKiln(t, ctx, "ptx", "unroll", "--file", write("t16.rptx", rolled))
	if code != 0 || unrolled != string(raw) {
		t.Errorf("kiln ptx unroll: exit %d, round trip equal %v\n%s", code, unrolled == string(raw), errs)
	}
	if code, _, errs := runKiln(t, ctx, "ptx", "roll"); code != 2 || !strings.Contains(errs, "--file") {
		t.Errorf("kiln ptx roll without --file: exit %d %s", code, errs)
	}
	// Completing needs a GPU: an error that says so, no verdict revised.
	code, out, errs = runKiln(t, ctx, "rescore", "--pending", "--data", data, "ptx-e2e")
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

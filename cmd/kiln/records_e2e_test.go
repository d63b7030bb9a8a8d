package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
)

// TestRecordsIntoTranslationLanes runs, on this CPU host, the path from
// verified cuda-synth records to the translation lanes:
//
//  1. a cuda-synth campaign over four corpus programs, a script model
//     answering three with the program (right: compiled, GPU run pending
//     here) and one with a program that does not compile (fail);
//  2. a cuda2hip campaign with tasks.from_campaign over it is refused while
//     no record is verified (all pending), naming the field and the counts;
//  3. two of the three pending verdicts are completed the way `kiln
//     rescore --pending` completes them on a GPU host — this host has no
//     GPU, so the test writes that revision itself: the run stage passed,
//     with the program's output recorded on an H100/H200 (the corpus's
//     expected_stdout.txt) as output_cuda. The third stays pending;
//  4. the cuda2hip campaign (the rule-based translator as its model) then
//     has exactly the two verified programs as tasks, with their
//     categories and provenance; from_campaign naming an unknown campaign,
//     a campaign of another lane, or given to a lane that takes no records
//     is refused before any campaign is made;
//  5. kiln ptx prepare --from-campaign writes a ptx2cuda corpus folder of
//     the verified programs' kernels (program harness), and a ptx2cuda
//     campaign over it judges a script model's decompilations: the
//     original kernel compiles into the program (run and compare pending
//     here), a kernel with other parameter types fails at compile
//     (compile.signature), one that defines the program's __constant__
//     again fails at check (compile.redefines_program).
func TestRecordsIntoTranslationLanes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	src, err := filepath.Abs("../../tools/cudasynth/corpus")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const (
		stencil  = "basic_02_stencil1d_radius5"
		gaussian = "img_01_gaussian_separable"
		reduce   = "basic_01_reduce_sum_shfl" // stays pending
		spmv     = "sparse_01_spmv_csr_warp"  // does not compile
		synth    = "synth-e2e"
	)
	corpus := filepath.Join(dir, "corpus")
	var script []string
	answer := func(match, body string) {
		b, _ := json.Marshal(map[string]string{"match": regexp.QuoteMeta(match), "response": "Here it is.\n\n```cuda\n" + body + "```\n"})
		script = append(script, string(b))
	}
	progs := map[string]string{}
	for _, id := range []string{stencil, gaussian, reduce, spmv} {
		if err := os.MkdirAll(filepath.Join(corpus, id), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"program.cu", "meta.json"} {
			if err := os.WriteFile(filepath.Join(corpus, id, f), []byte(read(filepath.Join(src, id, f))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		progs[id] = read(filepath.Join(src, id, "program.cu"))
		body := progs[id]
		switch id {
		case spmv:
			body = strings.Replace(body, "cudaMalloc(", "cudaMalloc((", 1)
		case reduce:
			// What is under test for this record is that a pending record
			// is left out, whatever its program: it is answered with the
			// stencil's program (its own in the long tier), whose builds
			// the compile cache already holds (7 nvcc/hipcc builds fewer).
			if !longTier {
				body = read(filepath.Join(src, stencil, "program.cu"))
			}
		}
		answer("(task "+id+")", body)
	}
	synthScript := write("synth.jsonl", strings.Join(script, "\n")+"\n")
	spec := func(name, lane, tasks, models string) string {
		return write(name+".yaml", fmt.Sprintf("name: %s\nlane: %s\ntasks: %s\nmodels:\n%s\nconcurrency: 2\nagent: {repair_turns: 0, max_tool_calls: 0}\n",
			name, lane, tasks, models))
	}
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	run := func(specPath string) (int, string, string) {
		return runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath)
	}

	// 1. The cuda-synth campaign.
	if code, out, errs := run(spec(synth, "cuda-synth", "{corpus: "+corpus+"}", "  - {name: replay, kind: script, script: "+synthScript+"}")); code != 0 {
		t.Fatalf("kiln run %s: exit %d\n%s\n%.3000s", synth, code, out, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	camp, err := st.Campaign(ctx, synth)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := st.Counts(ctx, camp.ID, -1); err != nil || n.Pending != 3 || n.Fail != 1 || n.Pass != 0 {
		t.Fatalf("cuda-synth counts %+v %v", n, err)
	}

	// 2. Nothing verified yet.
	c2h := spec("c2h-rec", "cuda2hip", "{from_campaign: "+synth+", samples_per_task: 1}", "  - {name: baseline, kind: hipify}")
	code, out, errs := run(c2h)
	if code != 2 || !strings.Contains(errs, `tasks.from_campaign: campaign "synth-e2e" (`+camp.ID+`) has no verified record: 3 pending`) ||
		!strings.Contains(errs, "1 failed") {
		t.Fatalf("from_campaign over pending records: exit %d\n%s\n%s", code, out, errs)
	}

	// 3. The GPU host's completion, written by the test (no GPU here).
	res, err := st.Results(ctx, camp.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	complete := func(r runs.Result, id string) {
		var stages []tools.Stage
		if err := json.Unmarshal(r.Verdict.Stages, &stages); err != nil {
			t.Fatal(err)
		}
		for i := range stages {
			if stages[i].Skipped {
				stages[i].Skipped, stages[i].OK = false, true
				stages[i].Detail = "outputs agree (stand-in for kiln rescore --pending on a GPU host: the corpus's recorded output)"
			}
		}
		v := r.Verdict
		v.Stages, err = json.Marshal(stages)
		if err != nil {
			t.Fatal(err)
		}
		out := read(filepath.Join(src, id, "expected_stdout.txt"))
		h, err := st.Blobs().Put([]byte(out))
		if err != nil {
			t.Fatal(err)
		}
		v.Artifacts = map[string]string{}
		for k, a := range r.Verdict.Artifacts {
			v.Artifacts[k] = a
		}
		v.Artifacts[cudasynth.ArtifactOutputCUDA] = h
		v.Artifacts[cudasynth.ArtifactOutputHIP] = h
		if _, err := st.AddRescore(ctx, r.Attempt.ID, v); err != nil {
			t.Fatal(err)
		}
	}
	verified := map[string]runs.Result{}
	for _, r := range res {
		if id := r.Task.Meta["item"]; id == stencil || id == gaussian {
			if !r.Verdict.Pending() {
				t.Fatalf("%s: not pending: %s", id, r.Verdict.Stages)
			}
			complete(r, id)
			verified[r.Task.Key] = r
		}
	}
	if n, err := st.Counts(ctx, camp.ID, -1); err != nil || n.Pass != 2 || n.Pending != 1 || n.Fail != 1 {
		t.Fatalf("counts after completion %+v %v", n, err)
	}

	// 4. The cuda2hip campaign over the verified records.
	if code, out, errs := run(c2h); code != 0 {
		t.Fatalf("kiln run c2h-rec: exit %d\n%s\n%.3000s", code, out, errs)
	}
	hc, err := st.Campaign(ctx, "c2h-rec")
	if err != nil {
		t.Fatal(err)
	}
	hres, err := st.Results(ctx, hc.ID, -1)
	if err != nil || len(hres) != 2 {
		t.Fatalf("%d cuda2hip results, %v", len(hres), err)
	}
	for _, r := range hres {
		src, ok := verified[r.Task.Meta["source_task_key"]]
		if !ok {
			t.Errorf("cuda2hip task %s is of no verified record: %v", r.Task.Key, r.Task.Meta)
			continue
		}
		want := map[string]string{"source_campaign": synth, "source_campaign_id": camp.ID, "source_lane": cudasynth.LaneName,
			"source_task": src.Task.ID, "source_attempt": src.Attempt.ID}
		for k, v := range want {
			if r.Task.Meta[k] != v {
				t.Errorf("%s: meta %s = %q, want %q", r.Task.Key, k, r.Task.Meta[k], v)
			}
		}
		if r.Task.Meta["source_verdict"] == src.Verdict.ID || r.Task.Meta["source_verdict"] == "" {
			t.Errorf("%s: source_verdict %q is not the completed revision", r.Task.Key, r.Task.Meta["source_verdict"])
		}
		if r.Task.Files["program.cu"] != progs[src.Task.Meta["item"]] || !slices.Equal(r.Task.Categories, src.Task.Categories) {
			t.Errorf("%s: program or categories %v differ from the record's", r.Task.Key, r.Task.Categories)
		}
		if v := r.Verdict; !v.Pending() || r.Attempt.Usage.CompletionTokens != 0 {
			t.Errorf("%s: the rule-based translation: pass %v pending %v class %q at %s: %.300s", r.Task.Key, v.Pass, v.Pending(), v.Class, v.Stage, v.Diagnostic)
		}
	}
	for _, c := range []struct{ name, lane, tasks, want string }{
		{"unknown", "cuda2hip", "{from_campaign: nope}", `tasks.from_campaign: no campaign "nope" in ` + data},
		{"other-lane", "cuda2hip", "{from_campaign: c2h-rec}", `is of lane cuda2hip; lane cuda2hip takes records of cuda-synth`},
		{"no-records", "c2x86", "{from_campaign: " + synth + "}", "tasks.from_campaign: lane c2x86 takes no records (lanes that do: cuda2hip (of cuda-synth))"},
	} {
		code, out, errs := run(spec("bad-"+c.name, c.lane, c.tasks, "  - {name: replay, kind: script, script: "+synthScript+"}"))
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, want 2 with %q\n%s\n%s", c.name, code, c.want, out, errs)
		}
		if _, err := st.Campaign(ctx, "bad-"+c.name); err == nil {
			t.Errorf("%s: a campaign was made", c.name)
		}
	}

	// 5. ptx2cuda from the same records.
	progDir := filepath.Join(dir, "ptx-programs")
	code, out, errs = runKiln(t, ctx, "ptx", "prepare", "--data", data, "--from-campaign", synth, "-o", progDir)
	if code != 0 || !strings.Contains(out, "prepared 3 kernels (3 tasks) from 2 verified records of campaign synth-e2e") ||
		!strings.Contains(out, "skipped: none") {
		t.Fatalf("kiln ptx prepare --from-campaign: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := runKiln(t, ctx, "ptx", "prepare", "--data", data, "--from-campaign", "c2h-rec", "-o", progDir); code != 2 ||
		!strings.Contains(errs, "--from-campaign: campaign \"c2h-rec\"") || !strings.Contains(errs, "is of lane cuda2hip") {
		t.Errorf("prepare from a cuda2hip campaign: exit %d\n%s", code, errs)
	}
	items, err := ptx2cuda.LoadCorpus(os.DirFS(progDir), ".", progDir, true)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{} // kernel -> kind of answer
	var ptxScript []string
	for _, it := range items {
		if it.Meta.Source == nil || it.Meta.Source.Campaign != synth || it.Meta.Harness != ptx2cuda.HarnessProgram {
			t.Errorf("%s: meta %+v", it.ID, it.Meta)
		}
		if b, err := os.ReadFile(filepath.Join(progDir, it.ID, "expected_stdout.txt")); err != nil ||
			string(b) != read(filepath.Join(src, strings.TrimSuffix(strings.TrimPrefix(it.Meta.Source.TaskKey, "r0/"), "#0"), "expected_stdout.txt")) {
			t.Errorf("%s: expected_stdout.txt is not the record's output (%v)", it.ID, err)
		}
		var body, kind string
		switch it.Meta.Kernel {
		case "stencil1D":
			kind, body = "right", it.Kernel
		case "blurRows":
			kind, body = "signature", strings.Replace(it.Kernel, "const unsigned char* __restrict__ in", "unsigned char* __restrict__ in", 1)
		case "blurCols":
			kind, body = "constant", "#define TAPS 7\n__constant__ int cTaps[TAPS];\n"+it.Kernel
		default:
			t.Fatalf("unexpected kernel %s", it.Meta.Kernel)
		}
		if body == it.Kernel && kind != "right" {
			t.Fatalf("%s: the %s answer is the original", it.ID, kind)
		}
		kinds[it.Meta.Kernel] = kind
		b, _ := json.Marshal(map[string]string{"match": regexp.QuoteMeta("(task " + it.ID + "/base)"),
			"response": "Decompiled:\n\n```cuda\n" + body + "```\n"})
		ptxScript = append(ptxScript, string(b))
	}
	if len(kinds) != 3 {
		t.Fatalf("kernels %v", kinds)
	}
	ptxSpec := spec("ptx-rec", "ptx2cuda", "{corpus: "+progDir+"}", "  - {name: replay, kind: script, script: "+write("ptx.jsonl", strings.Join(ptxScript, "\n")+"\n")+"}")
	if code, out, errs := run(ptxSpec); code != 0 {
		t.Fatalf("kiln run ptx-rec: exit %d\n%s\n%.3000s", code, out, errs)
	}
	pc, err := st.Campaign(ctx, "ptx-rec")
	if err != nil {
		t.Fatal(err)
	}
	pres, err := st.Results(ctx, pc.ID, -1)
	if err != nil || len(pres) != 3 {
		t.Fatalf("%d ptx2cuda results, %v", len(pres), err)
	}
	expect := map[string]struct{ class, stage, label string }{
		"right":     {"", "compare", "pass"},
		"signature": {"compile_error", "compile", "compile.signature"},
		"constant":  {"compile_error", "check", "compile.redefines_program"},
	}
	var got []string
	for _, r := range pres {
		kind := kinds[r.Task.Meta["kernel"]]
		e, v := expect[kind], r.Verdict
		got = append(got, kind)
		if v.Class != e.class || v.Stage != e.stage || v.Pass != (kind == "right") || v.Labels == nil || v.Labels.DiagnosticKind != e.label {
			t.Errorf("%s (%s): pass %v class %q at %s labels %+v, want %q at %s (%s): %.400s", r.Task.Key, kind, v.Pass, v.Class, v.Stage,
				v.Labels, e.class, e.stage, e.label, v.Diagnostic)
			continue
		}
		if r.Task.Meta["source_campaign"] != synth || r.Task.Files["program.cu"] == "" {
			t.Errorf("%s: task meta %v", r.Task.Key, r.Task.Meta)
		}
		if kind != "right" {
			continue
		}
		if !v.Pending() {
			t.Errorf("%s: the original kernel's verdict is not pending: %s", r.Task.Key, v.Stages)
		}
		for _, name := range []string{ptx2cuda.ArtifactAnswerBin, ptx2cuda.ArtifactRefBin, ptx2cuda.ArtifactBlankBin} {
			b, err := st.Blobs().Get(v.Artifacts[name])
			if err != nil || !strings.HasPrefix(string(b), "\x7fELF") {
				t.Errorf("%s: %s is not an executable (%v)", r.Task.Key, name, err)
			}
		}
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "constant right signature" {
		t.Errorf("answers judged: %v", got)
	}
}

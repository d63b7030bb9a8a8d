package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// The refinement tests run a c2x86 campaign whose solver (a script model)
// answers wrong for every switch_many and float_const task and right for
// the others, with a fake OpenAI-compatible synthesiser that records the
// prompts it gets and answers with fixed TASK blocks: some valid, one that
// does not compile, one without a driver, one copy of a corpus item and
// one whose driver prints nothing.

var refineCorpus = []string{
	"sw_many_008_letter_grade", "sw_many_010_color_attr", // switch_many: wrong
	"flt_001_cost_split", "flt_002_celsius_to_fahrenheit", // float_const: wrong
	"int_007_is_leap_year", "bit_003_power_of_two", // right
}

// synthTask is one TASK block of a fake synthesiser reply.
type synthTask struct {
	fn, function, driver string
	block                string // "" or "nodriver"
	solve                string // how the solver answers it: "right" or "wrong"
}

func synthFloat() []synthTask {
	return []synthTask{
		{fn: "fc_scale_mix", solve: "right",
			function: "double fc_scale_mix(double x)\n{\n    return x * 0.125 + 3.5e-3 - 1.0 / 3.0;\n}\n",
			driver: "#include <stdio.h>\n\ndouble fc_scale_mix(double x);\n\nint main(void)\n{\n    double v[] = {0.0, 1.0, -2.5, 1e6, 3.75, -0.0};\n" +
				"    for (int i = 0; i < 6; i++)\n        printf(\"%.17g -> %.17g\\n\", v[i], fc_scale_mix(v[i]));\n    return 0;\n}\n"},
		{fn: "fc_poly_f", solve: "right",
			function: "float fc_poly_f(float x)\n{\n    return 2.5f * x * x - 0.75f * x + 6.0f;\n}\n",
			driver: "#include <stdio.h>\n\nfloat fc_poly_f(float x);\n\nint main(void)\n{\n    float v[] = {0.0f, 1.0f, -2.0f, 0.5f, 100.0f, -0.25f};\n" +
				"    for (int i = 0; i < 6; i++)\n        printf(\"%.9g\\n\", (double)fc_poly_f(v[i]));\n    return 0;\n}\n"},
		// Does not compile: an undeclared identifier.
		{fn: "fc_broken_scale",
			function: "double fc_broken_scale(double x)\n{\n    return x * 2.5 + missing_offset;\n}\n",
			driver:   "#include <stdio.h>\n\ndouble fc_broken_scale(double x);\n\nint main(void)\n{\n    printf(\"%.17g\\n\", fc_broken_scale(1.5));\n    return 0;\n}\n"},
		// No driver block.
		{fn: "fc_half", block: "nodriver", function: "double fc_half(double x)\n{\n    return x * 0.5;\n}\n"},
	}
}

func synthSwitch(t testing.TB) []synthTask {
	dup := corpusItem(t, "sw_many_008_letter_grade")
	return []synthTask{
		{fn: "sm_day_weight", solve: "right",
			function: "int sm_day_weight(int d)\n{\n    switch (d) {\n    case 0: return 7;\n    case 1: return 12;\n    case 2: return 19;\n" +
				"    case 3: return 3;\n    case 4: return 44;\n    case 5: return 8;\n    case 6: return 15;\n    default: return -1;\n    }\n}\n",
			driver: "#include <stdio.h>\n\nint sm_day_weight(int d);\n\nint main(void)\n{\n    for (int d = -2; d <= 8; d++)\n" +
				"        printf(\"%d -> %d\\n\", d, sm_day_weight(d));\n    return 0;\n}\n"},
		// A copy of a corpus item: a duplicate.
		{fn: "letter_grade", function: dup.Files["function.c"], driver: dup.Files["driver.c"]},
		{fn: "sm_planet_name", solve: "wrong",
			function: "const char *sm_planet_name(int i)\n{\n    switch (i) {\n    case 0: return \"mercury\";\n    case 1: return \"venus\";\n" +
				"    case 2: return \"earth\";\n    case 3: return \"mars\";\n    case 4: return \"jupiter\";\n    case 5: return \"saturn\";\n" +
				"    case 6: return \"uranus\";\n    case 7: return \"neptune\";\n    default: return \"none\";\n    }\n}\n",
			driver: "#include <stdio.h>\n\nconst char *sm_planet_name(int i);\n\nint main(void)\n{\n    for (int i = -1; i <= 8; i++)\n" +
				"        printf(\"%d %s\\n\", i, sm_planet_name(i));\n    return 0;\n}\n"},
		// Its driver prints nothing.
		{fn: "sm_quiet_code",
			function: "int sm_quiet_code(int x)\n{\n    switch (x) {\n    case 0: return 3;\n    case 1: return 5;\n    case 2: return 7;\n" +
				"    case 3: return 11;\n    case 4: return 13;\n    case 5: return 17;\n    default: return 0;\n    }\n}\n",
			driver: "int sm_quiet_code(int x);\n\nint main(void)\n{\n    int s = 0;\n    for (int i = 0; i < 8; i++)\n        s += sm_quiet_code(i);\n" +
				"    return s == 56 ? 0 : 1;\n}\n"},
	}
}

// synthReply writes a reply in the format of the c2x86 templates.
func synthReply(category string, tasks []synthTask) string {
	var b strings.Builder
	fmt.Fprintf(&b, "These functions all use %s; the model mishandles it.\n\n", category)
	for i, st := range tasks {
		fmt.Fprintf(&b, "### TASK %d\ncategory: %s\nfunction: %s\ndescription: a %s test\n```c function.c\n%s```\n", i+1, category, st.fn, category, st.function)
		if st.block != "nodriver" {
			fmt.Fprintf(&b, "```c driver.c\n%s```\n", st.driver)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// fakeSynth is an OpenAI-compatible chat server standing in for the
// synthesiser: it answers by the category named in the prompt.
type fakeSynth struct {
	t       testing.TB
	replies map[string]string
	mu      sync.Mutex
	prompts map[string][]string // category -> user prompts received
	// hang, when set, makes the first request for that category block
	// until the client goes away; arrived gets the category.
	hang    string
	hung    bool
	arrived chan string
}

var synthCategoryRE = regexp.MustCompile(`fails on (?:C functions|CUDA tasks) of the category "([a-z0-9_.-]+)"`)

func (f *fakeSynth) requests(cat string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.prompts[cat])
}

func (f *fakeSynth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 || req.Messages[1].Role != "user" {
		http.Error(w, "bad request", 400)
		return
	}
	user := req.Messages[1].Content
	m := synthCategoryRE.FindStringSubmatch(user)
	if m == nil {
		http.Error(w, "no category in the prompt", 400)
		return
	}
	cat := m[1]
	f.mu.Lock()
	f.prompts[cat] = append(f.prompts[cat], user)
	hang := cat == f.hang && !f.hung
	if hang {
		f.hung = true
	}
	f.mu.Unlock()
	if hang {
		f.arrived <- cat
		<-r.Context().Done()
		return
	}
	reply, ok := f.replies[cat]
	if !ok {
		reply = "I have no ideas for " + cat + "."
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish, usage string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		choices := `[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]`
		if usage != "" {
			choices = "[]"
		}
		line := `{"id":"s","object":"chat.completion.chunk","created":1700000000,"model":"synth-test","choices":` + choices
		if usage != "" {
			line += `,"usage":` + usage
		}
		fmt.Fprintf(w, "data: %s}\n\n", line)
	}
	chunk(`{"role":"assistant","content":""}`, "", "")
	chunk(`{"content":`+jsonStr(reply)+`}`, "", "")
	chunk(`{}`, "stop", "")
	chunk("", "", `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`)
	io.WriteString(w, "data: [DONE]\n\n")
}

// refineFixture is a corpus, a solver script and a spec in a temp folder.
type refineFixture struct {
	dir, data, spec string
	synth           *fakeSynth
}

func newRefineFixture(t *testing.T, name, solverLatency string, concurrency int) *refineFixture {
	t.Helper()
	dir := t.TempDir()
	f := &refineFixture{dir: dir, data: filepath.Join(dir, "data")}
	sharedCaches(t, f.data)
	corpus := filepath.Join(dir, "corpus")
	var rules []string
	rule := func(fn, asm string) {
		b, _ := json.Marshal(map[string]string{"match": "`" + fn + "`", "response": "```asm\n" + asm + "```"})
		rules = append(rules, string(b))
	}
	for _, id := range refineCorpus {
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
		if it.HasCategory("switch_many") || it.HasCategory("float_const") {
			asm = mutate(t, asm, it.Function)
		}
		rule(it.Function, asm)
	}
	for _, st := range append(synthFloat(), synthSwitch(t)...) {
		if st.solve == "" {
			continue
		}
		asm := gccAsm(t, prompts.CorpusItem{ID: "synth_" + st.fn, Files: map[string]string{"function.c": st.function}}, "-O0")
		if st.solve == "wrong" {
			asm = mutate(t, asm, st.fn)
		}
		rule(st.fn, asm)
	}
	script := filepath.Join(dir, "solver.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.synth = &fakeSynth{t: t, prompts: map[string][]string{}, arrived: make(chan string, 1), replies: map[string]string{
		"float_const": synthReply("float_const", synthFloat()),
		"switch_many": synthReply("switch_many", synthSwitch(t)),
	}}
	srv := httptest.NewServer(f.synth)
	t.Cleanup(srv.Close)
	lat := ""
	if solverLatency != "" {
		lat = ", latency: " + solverLatency
	}
	spec := fmt.Sprintf(`name: %s
lane: c2x86
tasks: {corpus: %s, samples_per_task: 3}
models:
  - {name: solver, kind: script, script: %s, concurrency: %d%s}
  - {name: synth, kind: openai, base_url: %s/v1, model: synth-test, concurrency: 1}
concurrency: %d
sandbox: {wall_time: 2s, cpu_time: 3s}
agent: {repair_turns: 0, max_tool_calls: 0}
retry: {max_attempts: 2, base_delay: 5ms, max_delay: 20ms}
refinement: {rounds: 1, factor: 4, synthesizer: synth}
`, name, corpus, script, concurrency, lat, srv.URL, concurrency)
	f.spec = filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(f.spec, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// wilson is the 95% Wilson score interval, written out here independently
// of package refinement.
func wilson(pass, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	p, z, fn := float64(pass)/float64(n), 1.96, float64(n)
	c := (p + z*z/(2*fn)) / (1 + z*z/fn)
	h := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return math.Max(0, c-h), math.Min(1, c+h)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// reportJSON is the part of kiln report --json the tests read.
type reportJSON struct {
	State      string `json:"state"`
	Note       string `json:"note"`
	Parent     string `json:"parent"`
	Categories []struct {
		Category    string
		Total, Pass int
	} `json:"categories"`
	Refinement struct {
		Rounds []struct {
			Round      int `json:"round"`
			Categories []struct {
				Category    string `json:"category"`
				BeforeRound *int   `json:"before_round"`
				Before      *struct {
					Pass, Total int
				} `json:"before"`
				After struct {
					Pass, Total int
					PassRate    float64 `json:"pass_rate"`
					Low         float64 `json:"ci_low"`
					High        float64 `json:"ci_high"`
				} `json:"after"`
				Lift     *float64 `json:"lift"`
				LiftLow  *float64 `json:"lift_ci_low"`
				LiftHigh *float64 `json:"lift_ci_high"`
				Targeted bool     `json:"targeted"`
			} `json:"categories"`
			Chosen []refinement.Choice `json:"chosen"`
			Cost   refinement.Cost     `json:"cost"`
		} `json:"rounds"`
		Series []refinement.Series `json:"series"`
		Total  refinement.Cost     `json:"total_cost"`
	} `json:"refinement"`
	Decisions     []engine.RoundRecord `json:"decisions"`
	SynthesisCost struct {
		Calls            int
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"synthesis_cost"`
}

// checkRefined checks a finished refinement campaign of the fixture
// against the hand computation; it returns the campaign.
func checkRefined(t *testing.T, ctx context.Context, data, name string) runs.Campaign {
	t.Helper()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("store integrity: %v", err)
	}
	c, err := st.Campaign(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignDone || c.Round != 1 || !strings.Contains(c.Note, "round count reached") {
		t.Errorf("campaign: state %s round %d note %q; want done at round 1, stopped by the round count", c.State, c.Round, c.Note)
	}

	// Round 0's record: exactly the two failing categories, for the right reason.
	rec0, err := st.Round(ctx, c.ID, 0)
	if err != nil || !rec0.Final {
		t.Fatalf("round 0 record: %+v %v", rec0, err)
	}
	d, err := engine.DecodeRoundRecord(rec0.Record)
	if err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, ch := range d.Choices {
		chosen = append(chosen, ch.Category)
		if ch.Kind != refinement.ChoiceWeak || !strings.Contains(ch.Reason, "0/6 pass") || !strings.Contains(ch.Reason, "below the threshold 50%") {
			t.Errorf("choice %s: kind %s reason %q", ch.Category, ch.Kind, ch.Reason)
		}
	}
	if !slices.Equal(chosen, []string{"float_const", "switch_many"}) {
		t.Fatalf("chosen %v, want exactly float_const and switch_many", chosen)
	}
	// The mix: targeted weight x4, so the corpus draw of 18 over weights
	// 4,4,4,4,1,1 (W = 18) gives each targeted item 4 tasks, the others 1.
	wantW := map[string]float64{"*": 1, "bitops": 1, "int_arith": 1, "float_const": 4, "switch_many": 4}
	if len(d.Weights) != len(wantW) {
		t.Errorf("weights %v, want %v", d.Weights, wantW)
	}
	for k, v := range wantW {
		if d.Weights[k] != v {
			t.Errorf("weight of %s = %v, want %v", k, d.Weights[k], v)
		}
	}
	wantDrawn := map[string]int{"float_const": 8, "switch_many": 8, "int_arith": 1, "bitops": 1}
	if fmt.Sprint(d.Drawn) != fmt.Sprint(wantDrawn) || d.DrawnTasks != 18 || d.SynthTasks != 12 || d.Tasks != 30 || d.NextRound != 1 {
		t.Errorf("next round: drawn %v (%d), synthesised %d, tasks %d, next %d; want %v (18), 12, 30, 1",
			d.Drawn, d.DrawnTasks, d.SynthTasks, d.Tasks, d.NextRound, wantDrawn)
	}
	// Targeted share of the corpus tasks: 12/18 in round 0, 16/18 in round 1:
	// the odds grow by the factor: (16/2) / (12/6) = 4.
	if odds := (16.0 / 2) / (12.0 / 6); odds != 4 || d.Drawn["float_const"]+d.Drawn["switch_many"] != 16 {
		t.Errorf("odds ratio of the targeted share: %v", odds)
	}

	// Synthesis: what was kept and what was dropped, with reasons.
	byCat := map[string]engine.SynthRecord{}
	for _, s := range d.Synth {
		byCat[s.Category] = s
	}
	type drop struct {
		idx           int
		stage, reason string
	}
	checkSynth := func(cat string, accepted []string, drops []drop) {
		t.Helper()
		s := byCat[cat]
		var acc []string
		for _, a := range s.Accepted {
			acc = append(acc, a.Function)
			if len(a.Keys) != 3 {
				t.Errorf("%s: accepted %s has %d tasks, want 3", cat, a.Function, len(a.Keys))
			}
		}
		if !slices.Equal(acc, accepted) {
			t.Errorf("%s: accepted %v, want %v", cat, acc, accepted)
		}
		if len(s.Rejected) != len(drops) {
			t.Errorf("%s: rejected %+v, want %+v", cat, s.Rejected, drops)
			return
		}
		for i, w := range drops {
			r := s.Rejected[i]
			if r.Index != w.idx || r.Stage != w.stage || !strings.Contains(r.Reason, w.reason) {
				t.Errorf("%s: rejection %d = %+v, want #%d %s containing %q", cat, i, r, w.idx, w.stage, w.reason)
			}
		}
		if s.ReplyBlob == "" || s.PromptBlob == "" || s.PromptTokens != 1000 || s.CompletionTokens != 500 || s.K != 4 {
			t.Errorf("%s: synthesis record %+v", cat, s)
		}
	}
	checkSynth("float_const", []string{"fc_scale_mix", "fc_poly_f"}, []drop{
		{3, engine.RejectInvalid, "compile function.c"},
		{4, engine.RejectParse, "no driver.c code block"},
	})
	checkSynth("switch_many", []string{"sm_day_weight", "sm_planet_name"}, []drop{
		{2, engine.RejectDuplicate, "existing task"},
		{4, engine.RejectInvalid, "prints nothing"},
	})

	// Every task judged exactly once; round 1 is what the record says.
	tasks, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	perRound := map[int]int{}
	synthKeys := 0
	for _, task := range tasks {
		perRound[task.Round]++
		if task.Meta["origin"] == "resynthesis" {
			synthKeys++
		}
		atts, _ := st.Attempts(ctx, task.ID)
		judged := 0
		for _, a := range atts {
			vs, _ := st.Verdicts(ctx, a.ID)
			for _, v := range vs {
				if v.Revision == 0 {
					judged++
				}
			}
		}
		if judged != 1 || task.State != runs.TaskDone {
			t.Errorf("task %s: %s with %d original verdicts", task.Key, task.State, judged)
		}
	}
	// Every verdict is the one the script model's answer deserves.
	right := map[string]bool{"fc_scale_mix": true, "fc_poly_f": true, "sm_day_weight": true}
	for _, id := range []string{"int_007_is_leap_year", "bit_003_power_of_two"} {
		right[corpusItem(t, id).Function] = true
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if fn := r.Task.Meta["function"]; r.Verdict.Pass != right[fn] {
			t.Errorf("task %s (%s): pass %v, want %v: %s %s", r.Task.Key, fn, r.Verdict.Pass, right[fn], r.Verdict.Class, r.Verdict.Diagnostic)
		}
	}
	if perRound[0] != 18 || perRound[1] != 30 || synthKeys != 12 {
		t.Errorf("tasks per round %v, synthesised %d; want 18 and 30, 12", perRound, synthKeys)
	}
	return c
}

// checkReport compares kiln report --json with the hand computation.
func checkReport(t *testing.T, ctx context.Context, data, name string) reportJSON {
	t.Helper()
	code, out, errs := runKiln(t, ctx, "report", "--data", data, "--json", name)
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	var rep reportJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report json: %v\n%.2000s", err, out)
	}
	if len(rep.Refinement.Rounds) != 2 {
		t.Fatalf("%d rounds in the report", len(rep.Refinement.Rounds))
	}
	// Round 1 by hand: float_const 8 drawn (wrong) + 6 synthesised (right)
	// = 6/14; switch_many 8 drawn + 3 right + 3 wrong = 3/14; int_arith and
	// bitops 1/1 each; before: 0/6, 0/6, 3/3, 3/3.
	want := map[string][4]int{ // pass before, total before, pass after, total after
		"float_const": {0, 6, 6, 14}, "switch_many": {0, 6, 3, 14}, "int_arith": {3, 3, 1, 1}, "bitops": {3, 3, 1, 1},
	}
	r1 := rep.Refinement.Rounds[1]
	if len(r1.Categories) != len(want) {
		t.Errorf("round 1 categories: %+v", r1.Categories)
	}
	for _, c := range r1.Categories {
		w, ok := want[c.Category]
		if !ok || c.Before == nil || c.Lift == nil {
			t.Errorf("round 1 %s: unexpected or without a before: %+v", c.Category, c)
			continue
		}
		if c.Before.Pass != w[0] || c.Before.Total != w[1] || c.After.Pass != w[2] || c.After.Total != w[3] || *c.BeforeRound != 0 {
			t.Errorf("round 1 %s: before %d/%d after %d/%d, want %v", c.Category, c.Before.Pass, c.Before.Total, c.After.Pass, c.After.Total, w)
		}
		p1, p2 := float64(w[0])/float64(w[1]), float64(w[2])/float64(w[3])
		l1, u1 := wilson(w[0], w[1])
		l2, u2 := wilson(w[2], w[3])
		lo := p2 - p1 - math.Sqrt((p2-l2)*(p2-l2)+(u1-p1)*(u1-p1))
		hi := p2 - p1 + math.Sqrt((u2-p2)*(u2-p2)+(p1-l1)*(p1-l1))
		lo, hi = math.Max(lo, -1), math.Min(hi, 1)
		if !near(c.After.PassRate, p2) || !near(c.After.Low, l2) || !near(c.After.High, u2) ||
			!near(*c.Lift, p2-p1) || !near(*c.LiftLow, lo) || !near(*c.LiftHigh, hi) {
			t.Errorf("round 1 %s: rate %v [%v, %v] lift %v [%v, %v]; by hand %v [%v, %v] lift %v [%v, %v]", c.Category,
				c.After.PassRate, c.After.Low, c.After.High, *c.Lift, *c.LiftLow, *c.LiftHigh, p2, l2, u2, p2-p1, lo, hi)
		}
		if c.Targeted != (c.Category == "float_const" || c.Category == "switch_many") {
			t.Errorf("round 1 %s: targeted %v", c.Category, c.Targeted)
		}
	}
	if n := len(rep.Refinement.Rounds[0].Chosen); n != 2 {
		t.Errorf("round 0 chose %d categories in the report", n)
	}
	all := rep.Categories[len(rep.Categories)-1]
	if all.Category != "(all)" || all.Total != 48 || all.Pass != 6+11 {
		t.Errorf("(all) = %+v, want 48 tasks, 17 pass", all)
	}
	if rep.Refinement.Total.Attempts != 48 || rep.Refinement.Rounds[0].Cost.Attempts != 18 ||
		rep.SynthesisCost.Calls != 2 || rep.SynthesisCost.PromptTokens != 2000 || rep.SynthesisCost.CompletionTokens != 1000 {
		t.Errorf("cost: solver %+v, synthesis %+v", rep.Refinement.Total, rep.SynthesisCost)
	}
	return rep
}

// checkRefineCampaign checks the fixture's finished two-round refinement
// campaign name (TestGoldenC2X86 runs it, in-process, and compares it with
// its golden file first): the choices, the prompts, the mix, the drops and
// the report, then kiln refine --plan and kiln refine. (It was
// TestRefineCampaign, which ran the same campaign again at concurrency 4.)
func checkRefineCampaign(t *testing.T, ctx context.Context, f *refineFixture, name string) {
	t.Helper()
	checkRefined(t, ctx, f.data, name)

	// The resynthesis prompts hold the failing examples: source, wrong
	// answer, diagnosis.
	for cat, item := range map[string]string{"float_const": "flt_001_cost_split", "switch_many": "sw_many_008_letter_grade"} {
		f.synth.mu.Lock()
		ps := f.synth.prompts[cat]
		f.synth.mu.Unlock()
		if len(ps) != 1 {
			t.Fatalf("%s: %d synthesiser requests, want 1", cat, len(ps))
		}
		it := corpusItem(t, item)
		p := ps[0]
		for _, want := range []string{strings.TrimSpace(it.Files["function.c"]), strings.TrimSpace(it.Files["driver.c"]),
			"movl $1515870810, %eax", "(failure: wrong.", "the output differs from the reference", "Here are 2 failing examples", "write 4 NEW test items"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s prompt lacks %q:\n%.3000s", cat, want, p)
			}
		}
	}

	rep := checkReport(t, ctx, f.data, name)
	if len(rep.Decisions) != 2 || rep.Decisions[1].Stop == "" {
		t.Errorf("decisions: %+v", rep.Decisions)
	}
	// Text report and chart.
	svg := filepath.Join(f.dir, "chart.svg")
	code, out, errs := runKiln(t, ctx, "report", "--data", f.data, "--svg", svg, name)
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	t.Logf("kiln report:\n%s", out)
	for _, want := range []string{"round 1: 30 tasks, 11 pass", "chosen for round 1:", "float_const (below_threshold): float_const: 0/6 pass",
		"dropped #3 fc_broken_scale (invalid)", "dropped #4 (parse): no driver.c code block", "dropped #2 letter_grade (duplicate)",
		"round 1: 30 tasks = 18 drawn from the corpus (bitops 1, float_const 8, int_arith 1, switch_many 8) + 12 synthesised",
		"stopped after this round: round count reached", "synthesis: 2 calls, 2000 prompt + 1000 completion tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<?xml") || !strings.Contains(string(b), "float_const") {
		t.Errorf("svg chart: %v %.200s", err, b)
	}

	checkRefinePlanAndFork(t, ctx, f, name)
}

// checkRefinePlanAndFork checks kiln refine --plan and kiln refine on the
// finished campaign name of checkRefineCampaign.
func checkRefinePlanAndFork(t *testing.T, ctx context.Context, f *refineFixture, name string) {
	t.Helper()
	// kiln refine --plan: round 1's results decide round 2 (switch_many is
	// still weak at 3/14, upper bound 48%; int_arith and bitops have 1
	// result each, under 3) and nothing calls the synthesiser.
	calls := f.synth.requests("float_const") + f.synth.requests("switch_many")
	code, out, errs := runKiln(t, ctx, "refine", "--data", f.data, "--plan", "--json", name)
	if code != 0 {
		t.Fatalf("kiln refine --plan: %d %s", code, errs)
	}
	var plan engine.RefinePlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range plan.Decision.Choices {
		got = append(got, ch.Category+"/"+string(ch.Kind))
	}
	if want := []string{"switch_many/below_threshold", "bitops/few_samples", "int_arith/few_samples"}; !slices.Equal(got, want) ||
		plan.Synthesise != 12 || plan.DrawnTasks != 18 || plan.Round != 1 {
		t.Errorf("plan: choices %v synthesise %d drawn %d round %d; want %v, 12, 18, 1", got, plan.Synthesise, plan.DrawnTasks, plan.Round, want)
	}
	if n := f.synth.requests("float_const") + f.synth.requests("switch_many") + f.synth.requests("bitops"); n != calls {
		t.Errorf("--plan called the synthesiser")
	}
	code, out, _ = runKiln(t, ctx, "refine", "--data", f.data, "--plan", name)
	if code != 0 || !strings.Contains(out, "switch_many    below_threshold") || !strings.Contains(out, "synthesis: 12 new tasks") {
		t.Errorf("text plan (exit %d):\n%s", code, out)
	}

	// kiln refine: a new campaign continues from round 1's results with one
	// more round; the finished run is left as it was.
	code, out, errs = runKiln(t, ctx, "refine", "--data", f.data, "--rounds", "1", "--name", name+"-more", name)
	if code != 0 {
		t.Fatalf("kiln refine: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	st, err := runs.Open(ctx, f.data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, _ := st.Campaign(ctx, name)
	fork, err := st.Campaign(ctx, name+"-more")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Counts(ctx, fork.ID, -1)
	n2, _ := st.Counts(ctx, fork.ID, 2)
	rec, err := st.Round(ctx, fork.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := engine.DecodeRoundRecord(rec.Record)
	// switch_many's reply repeats round 0's tasks: all now duplicates or
	// invalid; bitops and int_arith get no TASK blocks. So round 2 is the
	// corpus draw alone.
	if fork.Parent != src.ID || fork.State != runs.CampaignDone || fork.Round != 2 || n2.Tasks != 18 || n.Done != 48+18 || d1.SynthTasks != 0 {
		t.Errorf("fork: parent %s state %s round %d note %q; counts %+v, round 2 %+v; synthesis %+v",
			fork.Parent, fork.State, fork.Round, fork.Note, n, n2, d1.Synth)
	}
	if sn, _ := st.Counts(ctx, src.ID, -1); sn.Tasks != 48 || src.Round != 1 {
		t.Errorf("source changed: %+v round %d", sn, src.Round)
	}
	if f.synth.requests("switch_many") != 2 || f.synth.requests("bitops") != 1 || f.synth.requests("int_arith") != 1 {
		t.Errorf("fork synthesis requests: %v", f.synth.prompts)
	}
}

// TestRefineKillAndResume kills a refinement campaign (SIGKILL, child
// process) in round 0, during the synthesis between rounds and in round 1,
// and checks after each restart that nothing was lost or done twice: the
// synthesiser is not asked again for a category whose reply was stored,
// every task has exactly one verdict, and the outcome is the one an
// uninterrupted run gives.
func TestRefineKillAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	f := newRefineFixture(t, "refine-crash", "150ms", 2)
	f.synth.hang = "switch_many"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	child := func(args ...string) (*exec.Cmd, *strings.Builder, chan error) {
		cmd := exec.Command(os.Args[0], append(args[:1:1], append([]string{"--data", f.data, "--log-level", "error"}, args[1:]...)...)...)
		cmd.Env = append(os.Environ(), "KILN_TEST_MAIN=1")
		cmd.Dir = f.dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, out, done
	}
	kill := func(cmd *exec.Cmd, done chan error) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	// waitFor polls the store until cond holds; it fails if the child ends.
	waitFor := func(what string, done chan error, out *strings.Builder, cond func(st *runs.Store, c runs.Campaign) bool) {
		t.Helper()
		for {
			select {
			case err := <-done:
				t.Fatalf("child ended (%v) before %s:\n%s", err, what, out)
			case <-ctx.Done():
				t.Fatalf("timeout waiting for %s", what)
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := os.Stat(filepath.Join(f.data, "kiln.db")); err != nil {
				continue
			}
			st, err := runs.Open(ctx, f.data, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.Campaign(ctx, "refine-crash")
			ok := err == nil && cond(st, c)
			st.Close()
			if ok {
				return
			}
		}
	}
	counts := func(st *runs.Store, c runs.Campaign, round int) runs.Counts {
		n, err := st.Counts(ctx, c.ID, round)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// 1. Killed in round 0.
	cmd, out, done := child("run", f.spec)
	waitFor("round 0 is under way", done, out, func(st *runs.Store, c runs.Campaign) bool { return counts(st, c, 0).Done >= 4 })
	kill(cmd, done)

	// 2. Killed during synthesis: float_const's reply is stored, the
	// switch_many call hangs.
	cmd, out, done = child("resume", "refine-crash")
	select {
	case <-f.synth.arrived:
	case err := <-done:
		t.Fatalf("child ended (%v) before synthesis:\n%s", err, out)
	case <-ctx.Done():
		t.Fatal("timeout waiting for synthesis")
	}
	kill(cmd, done)
	st, err := runs.Open(ctx, f.data, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := st.Campaign(ctx, "refine-crash")
	rec, err := st.Round(ctx, c.ID, 0)
	n0 := counts(st, c, 0)
	n1 := counts(st, c, 1)
	st.Close()
	if err != nil || rec.Final || c.Round != 0 || n0.Done != 18 || n1.Tasks != 0 {
		t.Fatalf("after the kill during synthesis: record %+v %v, round %d, counts %+v %+v", rec, err, c.Round, n0, n1)
	}
	draft, _ := engine.DecodeRoundRecord(rec.Record)
	if len(draft.Synth) != 1 || draft.Synth[0].Category != "float_const" || draft.Synth[0].ReplyBlob == "" {
		t.Fatalf("draft after the kill: %+v", draft.Synth)
	}

	// 3. Killed in round 1.
	cmd, out, done = child("resume", "refine-crash")
	waitFor("round 1 is under way", done, out, func(st *runs.Store, c runs.Campaign) bool { return counts(st, c, 1).Done >= 3 })
	kill(cmd, done)

	// 4. To the end.
	cmd, out, done = child("resume", "refine-crash")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final resume: %v\n%s", err, out)
		}
	case <-ctx.Done():
		kill(cmd, done)
		t.Fatal("timeout in the final resume")
	}
	if fc, sm := f.synth.requests("float_const"), f.synth.requests("switch_many"); fc != 1 || sm != 2 {
		t.Errorf("synthesiser requests: float_const %d (want 1: its reply was stored), switch_many %d (want 2: one killed)", fc, sm)
	}
	checkRefined(t, ctx, f.data, "refine-crash")
	checkReport(t, ctx, f.data, "refine-crash")
}

// cudaBroken is the cuda-synth solver's wrong program: nvcc rejects it.
const cudaBroken = `#include <cstdio>

__global__ void step(float *pos, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        pos[i] += velocity_scale * 0.5f;
}

int main()
{
    float *pos;
    cudaMalloc(&pos, 1024 * sizeof(float));
    step<<<4, 256>>>(pos, 1024);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
`

// cudaNBodyStatement is the synthesised task the solver gets right.
const cudaNBodyStatement = "Write a CUDA program for a brute-force N-body step of 1024 bodies with shared-memory tiling.\n" +
	"Body i starts at ((i*37)%101, (i*53)%97, (i*71)%89) with mass 1+(i%5) and zero velocity.\n" +
	"Integrate one step with dt = 0.01 and softening 1e-3, then print the total kinetic energy and the centre of mass with 6 decimals."

// cudaSynthBlock writes one TASK block of the cuda-synth format; ref ""
// leaves the reference program out.
func cudaSynthBlock(i int, statement, ref string) string {
	b := fmt.Sprintf("### TASK %d\ncategory: simulation\ndescription: task %d\n```text\n%s\n```\n", i, i, statement)
	if ref != "" {
		b += "```cuda reference.cu\n" + ref + "```\n"
	}
	return b + "\n"
}

// TestRefineCUDASynth runs a cuda-synth campaign from persona templates
// whose solver (a script model) writes a program nvcc rejects for every
// task, then kiln refine on it: the simulation category is targeted, the
// synthesiser (a fake OpenAI server) is shown the failing tasks, the wrong
// programs and nvcc's diagnosis, and its reply is screened (a reference
// that does not build, a task without a reference, a copy of a round-0
// prompt and a copy of another candidate are dropped, with reasons); the
// accepted task runs in round 1 and passes. Every verdict carries labels
// and the report and the export show them.
func TestRefineCUDASynth(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"nvcc", "cuobjdump", "hipcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var nbody string
	for _, it := range items {
		if it.ID == "sim_04_nbody_tiled" {
			nbody = it.Program
		}
	}
	if nbody == "" {
		t.Fatal("corpus item sim_04_nbody_tiled not found")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	fence := func(src string) string { return "```cuda\n" + src + "```" }
	var rules []string
	for _, r := range [][2]string{{`brute-force N-body step of 1024 bodies`, fence(nbody)}, {`.`, fence(cudaBroken)}} {
		b, _ := json.Marshal(map[string]string{"match": r[0], "response": r[1]})
		rules = append(rules, string(b))
	}
	script := filepath.Join(dir, "solver.jsonl")
	if err := os.WriteFile(script, []byte(strings.Join(rules, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	synth := &fakeSynth{t: t, prompts: map[string][]string{}, arrived: make(chan string, 1), replies: map[string]string{}}
	srv := httptest.NewServer(synth)
	t.Cleanup(srv.Close)
	specText := fmt.Sprintf(`name: cuda-refine
lane: cuda-synth
tasks: {templates: {dir: builtin}, limit: 3, seed: 7, samples_per_task: 2, categories: [simulation]}
models:
  - {name: solver, kind: script, script: %s}
  - {name: synth, kind: openai, base_url: %s/v1, model: synth-test, concurrency: 1}
concurrency: 2
agent: {repair_turns: 0, max_tool_calls: 0}
retry: {max_attempts: 2, base_delay: 5ms, max_delay: 20ms}
refinement: {factor: 4, synthesizer: synth}
`, script, srv.URL)
	specPath := filepath.Join(dir, "cuda-refine.yaml")
	if err := os.WriteFile(specPath, []byte(specText), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse([]byte(specText), specPath, specOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	round0, err := round0Tasks(sp)
	if err != nil || len(round0) != 6 {
		t.Fatalf("round 0 tasks: %d %v", len(round0), err)
	}
	synth.replies["simulation"] = "These tasks need care with device memory.\n\n" +
		cudaSynthBlock(1, cudaNBodyStatement, nbody) +
		cudaSynthBlock(2, "Write a CUDA program for a 64x64 cloth step with mass-spring forces; print the mean height with 6 decimals.", cudaBroken) +
		cudaSynthBlock(3, "Write a CUDA program that advects 4096 particles through a fixed vortex field; print the centroid.", "") +
		cudaSynthBlock(4, round0[0].Prompt, nbody) +
		cudaSynthBlock(5, strings.ToUpper(cudaNBodyStatement), nbody)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if code, out, errs := runKiln(t, ctx, "run", "--data", data, "--log-level", "warn", specPath); code != 0 {
		t.Fatalf("kiln run: exit %d\n%s\n%.3000s", code, out, errs)
	}
	t.Logf("round 0: %s", time.Since(start))

	// The plan: simulation failed 6 of 6 and is targeted; nothing is called.
	code, out, errs := runKiln(t, ctx, "refine", "--data", data, "--plan", "--json", "cuda-refine")
	if code != 0 {
		t.Fatalf("kiln refine --plan: %d %s", code, errs)
	}
	var plan engine.RefinePlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Decision.Choices) != 1 || plan.Decision.Choices[0].Category != "simulation" ||
		plan.Decision.Choices[0].Kind != refinement.ChoiceWeak || plan.Synthesise != 4 || plan.DrawnTasks != 6 {
		t.Fatalf("plan: %+v", plan)
	}
	if synth.requests("simulation") != 0 {
		t.Fatal("--plan called the synthesiser")
	}

	start = time.Now()
	code, out, errs = runKiln(t, ctx, "refine", "--data", data, "--log-level", "warn", "--rounds", "1", "--name", "cuda-refine-more", "cuda-refine")
	if code != 0 {
		t.Fatalf("kiln refine: exit %d\nstdout: %s\nstderr: %.3000s", code, out, errs)
	}
	t.Logf("synthesis, validation and round 1: %s", time.Since(start))

	// The synthesiser's prompt: the failing task, the wrong program, nvcc's diagnosis.
	synth.mu.Lock()
	ps := synth.prompts["simulation"]
	synth.mu.Unlock()
	if len(ps) != 1 {
		t.Fatalf("%d synthesiser requests, want 1", len(ps))
	}
	for _, want := range []string{`fails on CUDA tasks of the category "simulation": time-stepped physical simulations`,
		"The task:\n```text\n", "velocity_scale * 0.5f", `"velocity_scale" is undefined`, "(failure: compile.",
		"write 4 NEW tasks", "```cuda reference.cu", "Here are 3 failing examples"} {
		if !strings.Contains(ps[0], want) {
			t.Errorf("synthesiser prompt lacks %q:\n%.4000s", want, ps[0])
		}
	}
	if !slices.ContainsFunc(round0, func(task runs.Task) bool { return strings.Contains(ps[0], task.Prompt) }) {
		t.Errorf("synthesiser prompt shows no round-0 task statement")
	}

	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fork, err := st.Campaign(ctx, "cuda-refine-more")
	if err != nil {
		t.Fatal(err)
	}
	if fork.State != runs.CampaignDone || fork.Round != 1 {
		t.Errorf("fork: %s round %d note %q", fork.State, fork.Round, fork.Note)
	}
	rec, err := st.Round(ctx, fork.ID, 0)
	if err != nil || !rec.Final {
		t.Fatalf("round 0 record: %+v %v", rec, err)
	}
	d, err := engine.DecodeRoundRecord(rec.Record)
	if err != nil || len(d.Synth) != 1 {
		t.Fatalf("round 0 decision: %+v %v", d, err)
	}
	s := d.Synth[0]
	if len(s.Accepted) != 1 || s.Accepted[0].Index != 1 || len(s.Accepted[0].Keys) != 2 {
		t.Errorf("accepted %+v", s.Accepted)
	}
	wantDrops := []struct {
		idx           int
		stage, reason string
	}{
		{2, engine.RejectInvalid, `"velocity_scale" is undefined`},
		{3, engine.RejectParse, "no ```cuda block with the reference program"},
		{4, engine.RejectDuplicate, "existing task r0/"},
		{5, engine.RejectDuplicate, "candidate 1"},
	}
	if len(s.Rejected) != len(wantDrops) {
		t.Fatalf("rejected %+v", s.Rejected)
	}
	for i, w := range wantDrops {
		if r := s.Rejected[i]; r.Index != w.idx || r.Stage != w.stage || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("rejection %d: %+v, want #%d %s %q", i, r, w.idx, w.stage, w.reason)
		}
	}
	if d.DrawnTasks != 6 || d.SynthTasks != 2 || d.Tasks != 8 {
		t.Errorf("round 1: %d drawn, %d synthesised, %d tasks", d.DrawnTasks, d.SynthTasks, d.Tasks)
	}

	res, err := st.Results(ctx, fork.ID, -1)
	if err != nil || len(res) != 14 {
		t.Fatalf("results: %d %v", len(res), err)
	}
	for _, r := range res {
		synthesised := r.Task.Meta["origin"] == "resynthesis"
		if synthesised != r.Verdict.Pass {
			t.Errorf("%s: pass %v (%s: %.300s)", r.Task.Key, r.Verdict.Pass, r.Verdict.Class, r.Verdict.Diagnostic)
		}
		if synthesised && (r.Task.Round != 1 || r.Task.Prompt != cudaNBodyStatement || r.Task.Files[cudasynth.ReferenceFile] == "" ||
			!slices.Equal(r.Task.Categories, []string{"simulation"})) {
			t.Errorf("synthesised task %s: round %d prompt %q files %d categories %v", r.Task.Key, r.Task.Round, r.Task.Prompt,
				len(r.Task.Files), r.Task.Categories)
		}
		l := r.Verdict.Labels
		if l == nil {
			t.Errorf("%s: verdict without labels", r.Task.Key)
			continue
		}
		if l.Class != r.Verdict.Class || !slices.Equal(l.Categories, []string{"simulation"}) || l.Domain != "simulation" {
			t.Errorf("%s: labels %+v", r.Task.Key, *l)
		}
		switch {
		case r.Verdict.Pass && (l.DiagnosticKind != refinement.LabelPass || !slices.Contains(l.Features, "shared_memory")):
			t.Errorf("%s: pass labels %+v", r.Task.Key, *l)
		case !r.Verdict.Pass && (!strings.HasPrefix(l.DiagnosticKind, "compile.") || !slices.Contains(l.Features, "global_memory") ||
			slices.Contains(l.Features, "shared_memory")):
			t.Errorf("%s: failure labels %+v", r.Task.Key, *l)
		}
	}

	// The report: round 1 against round 0, with the domain.
	code, out, errs = runKiln(t, ctx, "report", "--data", data, "cuda-refine-more")
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	t.Logf("kiln report:\n%s", out)
	// The 2 passing programs of round 1 are pending on this host: neither
	// passes nor failures, so round 1 judged 6.
	for _, want := range []string{"round 1: 8 tasks, 0 pass of 6 judged (0.0%", ", 2 pending,", "simulation (below_threshold): simulation: 0/6 pass",
		"domains: simulation 0/6", "dropped #2 (invalid)", "dropped #3 (parse)", "dropped #4 (duplicate)",
		"+ 2 synthesised"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The 2 passing programs are pending on this host (no GPU run): not
	// verified samples, exported with --pending, carrying the labels.
	code, out, errs = runKiln(t, ctx, "export", "--data", data, "cuda-refine-more")
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Fatalf("kiln export of pending-only results: exit %d, %q %s", code, out, errs)
	}
	// Both answers are the same program: the export keeps one, unless
	// deduplication is off.
	code, out, errs = runKiln(t, ctx, "export", "--data", data, "--pending", "cuda-refine-more")
	if n := strings.Count(out, "\n"); code != 0 || n != 1 || !strings.Contains(errs, "duplicate 1") {
		t.Fatalf("kiln export --pending: exit %d, %d samples, want 1 (and 1 duplicate) %s", code, n, errs)
	}
	code, out, errs = runKiln(t, ctx, "export", "--data", data, "--pending", "--dedup=false", "cuda-refine-more")
	if code != 0 {
		t.Fatalf("kiln export --pending: %d %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d exported samples, want the 2 pending", len(lines))
	}
	var sample runs.Sample
	if err := json.Unmarshal([]byte(lines[0]), &sample); err != nil {
		t.Fatal(err)
	}
	if !sample.Pending || sample.Pass {
		t.Errorf("exported sample: pending %v pass %v, want pending", sample.Pending, sample.Pass)
	}
	if l := sample.Verdict.Labels; l == nil || l.DiagnosticKind != "pass" || l.Domain != "simulation" || len(l.Features) == 0 {
		t.Errorf("exported labels %+v", sample.Verdict.Labels)
	}
}

// round0Tasks are the round-0 tasks the lane kit of sp renders.
func round0Tasks(sp *spec.Spec) ([]runs.Task, error) {
	for _, k := range lanes.Kits() {
		if k.Name == sp.Lane {
			set, err := k.Source(kitTasks(sp))
			if err != nil {
				return nil, err
			}
			return set.Round0, nil
		}
	}
	return nil, fmt.Errorf("no lane %s", sp.Lane)
}

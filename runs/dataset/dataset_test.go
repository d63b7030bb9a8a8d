package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
)

// sample is one planted result: a task, the model's conversation and its
// verdict.
type sample struct {
	key        string
	cats       []string
	input      string // the task's input file
	answer     string // the fenced answer the final reply carries
	reasoning  string
	speedup    float64 // 0: not measured
	stream     string  // "current", "legacy": the stream_current measurement (1, 0); "": none
	reasonToks int
	pass       bool
	pending    bool
	toolCall   bool // a compile tool call before the answer
}

// kernel writes a distinct CUDA program: n statements of kind k.
func kernel(k, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "__global__ void k%d(float *x, const float *y, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n", k)
	for j := range n {
		fmt.Fprintf(&b, "  x[i] = x[i] * %d.0f + y[i] / %d.0f - %d;\n", (k+1)*(j+3), k+j+2, k*j)
	}
	b.WriteString("}\n")
	return b.String()
}

func transcriptOf(s sample) []byte {
	msgs := []agent.Message{
		{Role: agent.RoleSystem, Content: "You write CUDA kernels."},
		{Role: agent.RoleUser, Content: "Write a kernel for:\n" + s.input},
	}
	if s.toolCall {
		msgs = append(msgs,
			agent.Message{Role: agent.RoleAssistant, Reasoning: "Let me compile first.", ToolCalls: []agent.ToolCall{{ID: "call_1", Name: "compile", Arguments: json.RawMessage(`{"source":"x"}`)}}},
			agent.Message{Role: agent.RoleTool, ToolCallID: "call_1", Name: "compile", Content: "ok: compiled"})
	}
	msgs = append(msgs, agent.Message{Role: agent.RoleAssistant, Reasoning: s.reasoning, Content: "Here it is.\n```cuda\n" + s.answer + "```\n"})
	b, _ := json.Marshal(msgs)
	return b
}

// plant stores the samples as a campaign's results.
func plant(t testing.TB, st *runs.Store, name string, samples []sample) runs.Campaign {
	t.Helper()
	ctx := context.Background()
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: name, Lane: "cuda-synth", Spec: []byte("lane: cuda-synth\n"), SpecDir: "/specs"})
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([]runs.Task, len(samples))
	for i, s := range samples {
		tasks[i] = runs.Task{Key: s.key, Lane: "cuda-synth", Round: roundOf(s.key), Categories: s.cats, Files: map[string]string{"problem.cu": s.input}}
	}
	if _, err := st.AddTasks(ctx, c.ID, tasks); err != nil {
		t.Fatal(err)
	}
	bySeq := map[string]sample{}
	for _, s := range samples {
		bySeq[s.key] = s
	}
	for range samples {
		l, err := st.Claim(ctx, c.ID, "w", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		s := bySeq[l.Task.Key]
		a := runs.Attempt{Model: "qwen3-coder", Endpoint: "http://llm/v1", Answer: s.answer, Transcript: transcriptOf(s),
			Usage: runs.Usage{ReasoningTokens: s.reasonToks}, StartedAt: time.Now(), FinishedAt: time.Now()}
		v := runs.Verdict{Pass: s.pass, Stage: "run", Stages: []byte(`[{"name":"compile","ok":true},{"name":"run","ok":true}]`),
			Measurements: map[string]float64{}, Toolchain: map[string]string{"nvcc": "13.0"}, Policy: "test/v1"}
		if s.speedup > 0 {
			v.Measurements["speedup"] = s.speedup
		}
		switch s.stream {
		case "current":
			v.Measurements["stream_current"] = 1
		case "legacy":
			v.Measurements["stream_current"] = 0
		}
		if s.pending {
			v.Stages = []byte(`[{"name":"compile","ok":true},{"name":"run","skipped":true}]`)
		}
		if !s.pass {
			v.Class = "wrong_output"
		}
		if err := st.Finish(ctx, l, a, v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func roundOf(key string) int {
	var r int
	fmt.Sscanf(key, "r%d/", &r)
	return r
}

func openStore(t testing.TB) *runs.Store {
	t.Helper()
	st, err := runs.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// readJSONL reads a JSONL file into generic records.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

func build(t *testing.T, st *runs.Store, c runs.Campaign, dir string, mod func(*Options)) *Summary {
	t.Helper()
	opt := DefaultOptions()
	opt.Validation = 0
	if mod != nil {
		mod(&opt)
	}
	sum, err := Build(context.Background(), st, c.ID, Output{Dir: dir}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// basicSet: three tasks, one with a tool call, one failing, one pending.
func basicSet() []sample {
	return []sample{
		{key: "r0/vec_add#0", cats: []string{"elementwise"}, input: kernel(100, 3), answer: kernel(1, 12), reasoning: "Add them.", reasonToks: 300, pass: true, toolCall: true, speedup: 1.5},
		{key: "r0/scale#0", cats: []string{"elementwise"}, input: kernel(101, 3), answer: kernel(2, 12), reasoning: "Scale it.", reasonToks: 5000, pass: true},
		{key: "r0/broken#0", cats: []string{"reduction"}, input: kernel(102, 3), answer: kernel(3, 12), pass: false},
		{key: "r0/later#0", cats: []string{"reduction"}, input: kernel(103, 3), answer: kernel(4, 12), pass: true, pending: true},
	}
}

func TestMessagesFormat(t *testing.T) {
	st := openStore(t)
	c := plant(t, st, "fmt", basicSet())
	for _, tc := range []struct {
		think Think
		traj  bool
	}{{ThinkField, false}, {ThinkTags, false}, {ThinkNone, false}, {ThinkField, true}} {
		dir := t.TempDir()
		sum := build(t, st, c, dir, func(o *Options) { o.Format, o.Think, o.Trajectories = Messages, tc.think, tc.traj })
		if sum.Written != 2 || sum.Excluded["failing"] != 1 || sum.Excluded["pending"] != 1 {
			t.Fatalf("%+v: summary %+v", tc, sum)
		}
		recs := readJSONL(t, filepath.Join(dir, "train.jsonl"))
		if len(recs) != 2 {
			t.Fatalf("%d records", len(recs))
		}
		for _, r := range recs {
			msgs := r["messages"].([]any)
			roles := []string{}
			for _, m := range msgs {
				roles = append(roles, m.(map[string]any)["role"].(string))
			}
			last := msgs[len(msgs)-1].(map[string]any)
			content, _ := last["content"].(string)
			rc, hasRC := last["reasoning_content"]
			task := r["task"].(string)
			switch {
			case tc.traj && task == "vec_add":
				if !slices.Equal(roles, []string{"system", "user", "assistant", "tool", "assistant"}) {
					t.Errorf("trajectory roles %v", roles)
				}
				call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
				fn := call["function"].(map[string]any)
				if call["type"] != "function" || call["id"] != "call_1" || fn["name"] != "compile" || fn["arguments"] != `{"source":"x"}` {
					t.Errorf("tool call %v", call)
				}
				if tool := msgs[3].(map[string]any); tool["tool_call_id"] != "call_1" || tool["content"] != "ok: compiled" {
					t.Errorf("tool result %v", tool)
				}
			default:
				if !slices.Equal(roles, []string{"system", "user", "assistant"}) {
					t.Errorf("%+v: roles %v", tc, roles)
				}
			}
			if !strings.Contains(content, "```cuda\n__global__") {
				t.Errorf("assistant content lacks the answer: %q", content)
			}
			switch tc.think {
			case ThinkField:
				if !hasRC || rc == "" || strings.Contains(content, "<think>") {
					t.Errorf("field: reasoning_content %v, content %q", rc, content)
				}
			case ThinkTags:
				if hasRC || !strings.HasPrefix(content, "<think>\n") || !strings.Contains(content, "\n</think>\n\nHere it is.") {
					t.Errorf("tags: content %q", content)
				}
			case ThinkNone:
				if hasRC || strings.Contains(content, "<think>") {
					t.Errorf("none: reasoning kept %v %q", rc, content)
				}
			}
			if r["lane"] != "cuda-synth" || r["id"] == "" || r["model"] != "qwen3-coder" {
				t.Errorf("metadata %v", r)
			}
		}
		var info map[string]map[string]any
		b, _ := os.ReadFile(filepath.Join(dir, "dataset_info.json"))
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		e := info["kiln_fmt"]
		if e["file_name"] != "train.jsonl" || e["formatting"] != "sharegpt" || e["columns"].(map[string]any)["messages"] != "messages" ||
			e["tags"].(map[string]any)["assistant_tag"] != "assistant" {
			t.Errorf("dataset_info %s", b)
		}
	}
}

func TestShareGPTAndAlpaca(t *testing.T) {
	st := openStore(t)
	c := plant(t, st, "fmt2", basicSet())
	dir := t.TempDir()
	build(t, st, c, dir, func(o *Options) { o.Format, o.Trajectories = ShareGPT, true })
	for _, r := range readJSONL(t, filepath.Join(dir, "train.jsonl")) {
		conv := r["conversations"].([]any)
		var from []string
		for i, m := range conv {
			f := m.(map[string]any)["from"].(string)
			from = append(from, f)
			// LLaMA-Factory: human/observation at odd positions (1-based),
			// gpt/function_call at even ones.
			odd := i%2 == 0
			if odd != (f == "human" || f == "observation") {
				t.Errorf("sharegpt turn %d is %s: %v", i+1, f, from)
			}
		}
		if r["system"] != "You write CUDA kernels." {
			t.Errorf("system %v", r["system"])
		}
		last := conv[len(conv)-1].(map[string]any)["value"].(string)
		if !strings.HasPrefix(last, "<think>\n") || !strings.Contains(last, "```cuda") {
			t.Errorf("sharegpt gpt turn %q", last)
		}
		if r["task"] == "vec_add" {
			if !slices.Equal(from, []string{"human", "function_call", "observation", "gpt"}) {
				t.Errorf("trajectory %v", from)
			}
			var call map[string]any
			if err := json.Unmarshal([]byte(conv[1].(map[string]any)["value"].(string)), &call); err != nil || call["name"] != "compile" {
				t.Errorf("function_call value %v %v", call, err)
			}
		}
	}
	info, _ := os.ReadFile(filepath.Join(dir, "dataset_info.json"))
	if !bytes.Contains(info, []byte(`"messages": "conversations"`)) {
		t.Errorf("sharegpt dataset_info %s", info)
	}

	dir = t.TempDir()
	build(t, st, c, dir, func(o *Options) { o.Format = Alpaca })
	for _, r := range readJSONL(t, filepath.Join(dir, "train.jsonl")) {
		if !strings.HasPrefix(r["instruction"].(string), "Write a kernel for:") || r["input"] != "" ||
			!strings.Contains(r["output"].(string), "</think>") || r["system"] != "You write CUDA kernels." {
			t.Errorf("alpaca record %v", r)
		}
	}
	opt := DefaultOptions()
	opt.Format, opt.Trajectories = Alpaca, true
	if _, err := Build(context.Background(), st, c.ID, Output{Dir: t.TempDir()}, opt); err == nil || !strings.Contains(err.Error(), "trajectories") {
		t.Errorf("alpaca with trajectories: %v", err)
	}
}

func TestRawFormatAndPending(t *testing.T) {
	st := openStore(t)
	c := plant(t, st, "raw", basicSet())
	var buf bytes.Buffer
	opt := DefaultOptions()
	opt.Pending = true
	sum, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Written != 3 {
		t.Fatalf("written %d, want 2 verified and 1 pending", sum.Written)
	}
	pending := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec struct {
			runs.Sample
			Curation Curation `json:"curation"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Schema != runs.SampleSchema || rec.Curation.Item == "" || rec.Curation.Selected != curate.KeptAll || rec.Curation.Split != "train" {
			t.Errorf("raw record %+v", rec.Curation)
		}
		if rec.Pending {
			pending++
			if rec.Pass {
				t.Error("a pending sample exported as pass")
			}
		}
		if rec.TaskKey == "r0/scale#0" && rec.Curation.Difficulty != "medium" {
			t.Errorf("scale: difficulty %s (ARL 5000), want medium", rec.Curation.Difficulty)
		}
	}
	if pending != 1 {
		t.Errorf("%d pending records, want 1", pending)
	}
}

func TestSplitByTask(t *testing.T) {
	st := openStore(t)
	var set []sample
	for task := range 40 {
		for k := range 3 {
			set = append(set, sample{key: fmt.Sprintf("r%d/task%02d#%d", k%2, task, k), cats: []string{"loops"}, input: kernel(task, 3),
				answer: kernel(1000+task*3+k, 10+k), reasonToks: 100, pass: true})
		}
	}
	c := plant(t, st, "split", set)
	dir := t.TempDir()
	sum := build(t, st, c, dir, func(o *Options) { o.Format, o.Validation = Messages, 0.25 })
	if sum.Written != 120 || sum.Validation == 0 || sum.Train == 0 {
		t.Fatalf("summary: written %d, train %d, validation %d", sum.Written, sum.Train, sum.Validation)
	}
	splitOf := map[string]string{}
	for _, split := range []string{"train", "validation"} {
		for _, r := range readJSONL(t, filepath.Join(dir, split+".jsonl")) {
			task := r["task"].(string)
			if s, ok := splitOf[task]; ok && s != split {
				t.Errorf("task %s in both splits", task)
			}
			splitOf[task] = split
		}
	}
	nVal := 0
	for _, s := range splitOf {
		if s == "validation" {
			nVal++
		}
	}
	if len(splitOf) != 40 || nVal < 4 || nVal > 18 {
		t.Errorf("%d tasks, %d in validation: want 40, about 10", len(splitOf), nVal)
	}
	// The same split again.
	dir2 := t.TempDir()
	build(t, st, c, dir2, func(o *Options) { o.Format, o.Validation = Messages, 0.25 })
	a, _ := os.ReadFile(filepath.Join(dir, "validation.jsonl"))
	b, _ := os.ReadFile(filepath.Join(dir2, "validation.jsonl"))
	if !bytes.Equal(a, b) {
		t.Error("a second export split differently")
	}
	card, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	for _, want := range []string{"- split: validation\n    path: validation.jsonl", fmt.Sprintf("| validation | %d |", sum.Validation), "| loops | 120 |", "| qwen3-coder | 120 |", "nvcc: 13.0"} {
		if !strings.Contains(string(card), want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
}

func TestDedupKeepsBestOfCluster(t *testing.T) {
	st := openStore(t)
	base := kernel(7, 30)
	renamed := strings.ReplaceAll(strings.ReplaceAll(base, "x[i]", "out[i]"), "float *x", "float *out")
	edited := base[:strings.LastIndex(base, "}")] + "  x[i] += 1.0f;\n}\n"
	set := []sample{
		// Round 0: a cluster of three (slow original, fast rename, edit).
		{key: "r0/a#0", cats: []string{"elementwise"}, input: kernel(200, 3), answer: base, speedup: 1.1, reasonToks: 900, pass: true},
		{key: "r0/b#0", cats: []string{"elementwise"}, input: kernel(201, 3), answer: renamed, speedup: 2.5, reasonToks: 900, pass: true},
		{key: "r0/c#0", cats: []string{"elementwise"}, input: kernel(202, 3), answer: edited, speedup: 1.3, reasonToks: 900, pass: true},
		// Distinct programs.
		{key: "r0/d#0", cats: []string{"elementwise"}, input: kernel(203, 3), answer: kernel(8, 30), speedup: 1.0, pass: true},
		{key: "r0/e#0", cats: []string{"elementwise"}, input: kernel(204, 3), answer: kernel(9, 6), speedup: 1.0, pass: true},
		// Round 1: a faster copy arrives late: the kept one stays.
		{key: "r1/f#0", cats: []string{"elementwise"}, input: kernel(205, 3), answer: base, speedup: 9, pass: true},
	}
	c := plant(t, st, "dedup", set)
	var buf bytes.Buffer
	opt := DefaultOptions()
	sum, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var s runs.Sample
		json.Unmarshal([]byte(line), &s)
		keys = append(keys, s.TaskKey)
	}
	if want := []string{"r0/b#0", "r0/d#0", "r0/e#0"}; !slices.Equal(keys, want) || sum.Excluded["duplicate"] != 3 {
		t.Errorf("kept %v (duplicates %d), want %v and 3 duplicates", keys, sum.Excluded["duplicate"], want)
	}
	opt.Dedup = false
	buf.Reset()
	if sum, _ := Build(context.Background(), st, c.ID, Output{W: &buf}, opt); sum.Written != 6 {
		t.Errorf("without dedup: %d written", sum.Written)
	}
}

func TestContamination(t *testing.T) {
	st := openStore(t)
	bench := filepath.Join(t.TempDir(), "KernelBench")
	leakedInput := kernel(300, 20)
	leakedAnswer := kernel(301, 20)
	for name, text := range map[string]string{"level1/1_leak.py": leakedInput, "level1/2_sol.cu": leakedAnswer, "level1/3_other.py": kernel(302, 20)} {
		os.MkdirAll(filepath.Dir(filepath.Join(bench, name)), 0o755)
		os.WriteFile(filepath.Join(bench, name), []byte(text), 0o644)
	}
	set := []sample{
		{key: "r0/in#0", cats: []string{"fusion"}, input: strings.ReplaceAll(leakedInput, "float", "double"), answer: kernel(10, 20), pass: true},
		{key: "r0/out#0", cats: []string{"fusion"}, input: kernel(304, 20), answer: strings.ReplaceAll(leakedAnswer, "k301", "renamed"), pass: true},
		{key: "r0/clean#0", cats: []string{"fusion"}, input: kernel(305, 20), answer: kernel(11, 20), pass: true},
	}
	c := plant(t, st, "contam", set)
	dir := t.TempDir()
	sum := build(t, st, c, dir, func(o *Options) { o.Format, o.Benchmarks = Messages, []string{bench} })
	if sum.Contaminated != 2 || sum.Excluded["contaminated"] != 2 || sum.Written != 1 || len(sum.Matches) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	fields := map[string]string{}
	for _, m := range sum.Matches {
		fields[m.Task] = m.Field + " " + m.Benchmark
	}
	if fields["in"] != "input:problem.cu KernelBench/level1/1_leak.py" || fields["out"] != "answer KernelBench/level1/2_sol.cu" {
		t.Errorf("matches %v", fields)
	}
	var cur Summary
	b, _ := os.ReadFile(filepath.Join(dir, "curation.json"))
	if err := json.Unmarshal(b, &cur); err != nil || cur.Contaminated != 2 || cur.Benchmarks[0].Files != 3 {
		t.Errorf("curation.json %s %v", b, err)
	}
	card, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(card), "2 samples matched a benchmark document") {
		t.Errorf("card:\n%s", card)
	}
	// Kept and flagged when asked.
	var buf bytes.Buffer
	opt := DefaultOptions()
	opt.Benchmarks, opt.KeepContaminated = []string{bench}, true
	sum, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt)
	if err != nil || sum.Written != 3 || sum.Flagged != 2 || strings.Count(buf.String(), `"contamination":[`) != 2 {
		t.Errorf("keep-contaminated: %+v %v", sum, err)
	}
	opt.Benchmarks = []string{filepath.Join(bench, "missing")}
	if _, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing benchmark folder: %v", err)
	}
}

func TestConcurThroughBuild(t *testing.T) {
	st := openStore(t)
	var set []sample
	// Task p: shortest reasoning is fastest (p#1 kept); task q: shortest
	// is slower (none by part a), q#2 is 7x (kept by part b).
	for k, s := range []struct {
		sp  float64
		rsn int
	}{{1.2, 3000}, {1.8, 1000}, {1.1, 2000}} {
		set = append(set, sample{key: fmt.Sprintf("r0/p#%d", k), cats: []string{"matmul", "level1"}, input: kernel(400, 3), answer: kernel(20+k, 15+k), speedup: s.sp, reasonToks: s.rsn, pass: true})
	}
	for k, s := range []struct {
		sp  float64
		rsn int
	}{{1.0, 500}, {1.5, 900}, {7, 6000}} {
		set = append(set, sample{key: fmt.Sprintf("r0/q#%d", k), cats: []string{"conv", "level1"}, input: kernel(401, 3), answer: kernel(30+k, 15+k), speedup: s.sp, reasonToks: s.rsn, pass: true})
	}
	c := plant(t, st, "concur", set)
	var buf bytes.Buffer
	opt := DefaultOptions()
	opt.Selection.Policy = curate.Concur
	sum, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var s runs.Sample
		json.Unmarshal([]byte(line), &s)
		keys = append(keys, s.TaskKey)
	}
	if !slices.Equal(keys, []string{"r0/p#1", "r0/q#2"}) || sum.Selected[curate.KeptConcise] != 1 || sum.Selected[curate.KeptFast] != 1 || sum.Excluded["policy"] != 4 {
		t.Errorf("concur kept %v, summary %+v", keys, sum)
	}
}

// TestSpeedAndStreamThroughBuild: a correct sample slower than the
// reference is exported by default; curation's min speedup and stream
// policy leave samples out, counted by reason.
func TestSpeedAndStreamThroughBuild(t *testing.T) {
	st := openStore(t)
	set := []sample{
		{key: "r0/slow#0", cats: []string{"matmul"}, input: kernel(500, 3), answer: kernel(50, 12), speedup: 0.4, stream: "current", pass: true},
		{key: "r0/fast#0", cats: []string{"matmul"}, input: kernel(501, 3), answer: kernel(51, 13), speedup: 2.5, stream: "legacy", pass: true},
		{key: "r0/both#0", cats: []string{"conv"}, input: kernel(502, 3), answer: kernel(52, 14), speedup: 1.2, stream: "current", pass: true},
		{key: "r0/untimed#0", cats: []string{"conv"}, input: kernel(503, 3), answer: kernel(53, 15), pass: true},
	}
	c := plant(t, st, "speed", set)
	keys := func(mod func(*Options)) ([]string, *Summary) {
		var buf bytes.Buffer
		opt := DefaultOptions()
		mod(&opt)
		sum, err := Build(context.Background(), st, c.ID, Output{W: &buf}, opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var s runs.Sample
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s.TaskKey)
		}
		slices.Sort(out)
		return out, sum
	}
	got, sum := keys(func(*Options) {})
	if !slices.Equal(got, []string{"r0/both#0", "r0/fast#0", "r0/slow#0", "r0/untimed#0"}) || sum.Settings.MinSpeedup != 0 || sum.Settings.Stream != "" {
		t.Errorf("default: kept %v, settings %+v", got, sum.Settings)
	}
	got, sum = keys(func(o *Options) { o.Selection.MinSpeedup = 1 })
	if !slices.Equal(got, []string{"r0/both#0", "r0/fast#0"}) || sum.Excluded[curate.ExcludeSlow] != 2 || sum.Settings.MinSpeedup != 1 {
		t.Errorf("min speedup 1: kept %v, excluded %v", got, sum.Excluded)
	}
	got, sum = keys(func(o *Options) { o.Selection.Stream = curate.StreamRequire })
	if !slices.Equal(got, []string{"r0/both#0", "r0/slow#0"}) || sum.Excluded[curate.ExcludeStream] != 2 || sum.Settings.Stream != "require" {
		t.Errorf("require current stream: kept %v, excluded %v", got, sum.Excluded)
	}
	got, _ = keys(func(o *Options) {
		o.Selection.Stream, o.Selection.MinSpeedup, o.Selection.Policy = curate.StreamRequire, 1, curate.BestPerTask
	})
	if !slices.Equal(got, []string{"r0/both#0"}) {
		t.Errorf("both: kept %v", got)
	}
}

func TestFailedExportLeavesNothing(t *testing.T) {
	st := openStore(t)
	c := plant(t, st, "fail", basicSet())
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt := DefaultOptions()
	opt.Format = Messages
	if _, err := Build(ctx, st, c.ID, Output{Dir: dir}, opt); err == nil {
		t.Fatal("a cancelled export succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed export left %v", ents)
	}
}

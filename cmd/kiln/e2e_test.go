package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
)

// behaviour is what the fake server does for one function's task.
type behaviour struct {
	id string // corpus item
	// answers per turn (the number of assistant messages already in the
	// request); the last one repeats. "right", "wrong", "garbage", "hang",
	// "prose", "tool" (a run_tests call with the right answer).
	turns []string
	// fault on the first request: "", "429", "500", "truncate".
	fault string
	// expected outcome
	pass  bool
	class string
	// repairs and toolCalls expected in the attempt
	repairs, toolCalls int
}

// fakeLLM is the state of a fake server shared by its handlers.
type fakeLLM struct {
	t        *testing.T
	answers  map[string]behaviour // by function name
	items    map[string]prompts.CorpusItem
	mu       sync.Mutex
	requests map[string]int // by function, every request
	ok       int            // requests answered in full (with usage)
}

var funcRe = regexp.MustCompile("The function under test is `([A-Za-z_0-9]+)`")

func newFakeLLM(t *testing.T, bs []behaviour) *fakeLLM {
	f := &fakeLLM{t: t, answers: map[string]behaviour{}, items: map[string]prompts.CorpusItem{}, requests: map[string]int{}}
	for _, b := range bs {
		it := corpusItem(t, b.id)
		f.answers[it.Function] = b
		f.items[it.Function] = it
	}
	return f
}

// decide returns the function, the fault to inject and the answer kind for
// a request whose first user message is user and which holds n assistant
// messages.
func (f *fakeLLM) decide(user string, assistants int) (string, string, string) {
	m := funcRe.FindStringSubmatch(user)
	if m == nil {
		f.t.Errorf("fake server: no function name in the prompt: %.200q", user)
		return "", "500", ""
	}
	fn := m[1]
	b, ok := f.answers[fn]
	if !ok {
		f.t.Errorf("fake server: unexpected function %s", fn)
		return fn, "500", ""
	}
	f.mu.Lock()
	f.requests[fn]++
	nreq := f.requests[fn]
	f.mu.Unlock()
	// "429x2": a storm of two 429s before the answer; other faults hit once.
	if fault, times, ok := strings.Cut(b.fault, "x"); ok {
		if n, _ := strconv.Atoi(times); nreq <= n {
			return fn, fault, ""
		}
	} else if nreq == 1 && b.fault != "" {
		return fn, b.fault, ""
	}
	turn := assistants
	if turn >= len(b.turns) {
		turn = len(b.turns) - 1
	}
	return fn, "", b.turns[turn]
}

func (f *fakeLLM) answerText(fn, kind string) string {
	it := f.items[fn]
	right := gccAsm(f.t, it, "-O0")
	switch kind {
	case "right":
		return "Here is the translation.\n\n```asm\n" + right + "```\n"
	case "wrong":
		return "```asm\n" + mutate(f.t, right, fn) + "```"
	case "garbage":
		return "```asm\n" + fn + ":\n\tthis is not an instruction %%%\n\tmovq %rax\n```"
	case "hang":
		return "```asm\n\t.text\n\t.globl " + fn + "\n" + fn + ":\n.Lspin:\n\tjmp .Lspin\n\t.section .note.GNU-stack,\"\",@progbits\n```"
	case "prose":
		return "I am not sure how to translate this function."
	}
	f.t.Errorf("unknown answer kind %q", kind)
	return ""
}

// ---- OpenAI-compatible server (SSE) ----

type oaMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	Tools         []any       `json:"tools"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (f *fakeLLM) openai() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var req oaRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage {
			f.t.Errorf("request not streamed with include_usage: %+v", req)
		}
		user, assistants := "", 0
		for _, m := range req.Messages {
			if m.Role == "user" && user == "" {
				user, _ = m.Content.(string)
			}
			if m.Role == "assistant" {
				assistants++
			}
		}
		fn, fault, kind := f.decide(user, assistants)
		switch fault {
		case "429":
			w.Header().Set("Retry-After", "0")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"rate limited","type":"rate_limit","code":429}}`)
			return
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"internal error","type":"server_error"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		fl := w.(http.Flusher)
		chunk := func(delta string, finish string, usage string) {
			fin := "null"
			if finish != "" {
				fin = `"` + finish + `"`
			}
			choices := `[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + fin + `}]`
			if usage != "" {
				choices = "[]"
			}
			line := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"qwen-test","choices":` + choices
			if usage != "" {
				line += `,"usage":` + usage
			}
			fmt.Fprintf(w, "data: %s\n\n", line+"}")
			fl.Flush()
		}
		chunk(`{"role":"assistant","content":"","reasoning":"Let me think about `+fn+`."}`, "", "")
		if fault == "truncate" {
			chunk(`{"content":"Here is the transl"}`, "", "")
			// Drop the connection half way: no finish_reason, no [DONE].
			if hj, ok := w.(http.Hijacker); ok {
				conn, _, err := hj.Hijack()
				if err == nil {
					conn.Close()
				}
			}
			return
		}
		usage := `{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"completion_tokens_details":{"reasoning_tokens":10}}`
		if kind == "tool" {
			args, _ := json.Marshal(map[string]string{"asm": gccAsm(f.t, f.items[fn], "-O0")})
			half := len(args) / 2
			chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"run_tests","arguments":""}}]}`, "", "")
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonStr(string(args[:half]))+`}}]}`, "", "")
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+jsonStr(string(args[half:]))+`}}]}`, "", "")
			chunk(`{}`, "tool_calls", "")
		} else {
			text := f.answerText(fn, kind)
			chunk(`{"content":`+jsonStr(text[:len(text)/2])+`}`, "", "")
			chunk(`{"content":`+jsonStr(text[len(text)/2:])+`}`, "", "")
			chunk(`{}`, "stop", "")
		}
		chunk("", "", usage)
		io.WriteString(w, "data: [DONE]\n\n")
		f.mu.Lock()
		f.ok++
		f.mu.Unlock()
	})
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ---- Ollama server (NDJSON) ----

type olRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Options map[string]any `json:"options"`
	Think   any            `json:"think"`
}

func (f *fakeLLM) ollama() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			http.NotFound(w, r)
			return
		}
		var req olRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		if req.Model != "qwen2.5-coder:7b" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			fmt.Fprintf(w, `{"error":"model \"%s\" not found, try pulling it first"}`, req.Model)
			return
		}
		if req.Options["num_ctx"] != float64(16384) {
			f.t.Errorf("ollama request without num_ctx 16384: %v", req.Options)
		}
		user, assistants := "", 0
		for _, m := range req.Messages {
			if m.Role == "user" && user == "" {
				user = m.Content
			}
			if m.Role == "assistant" {
				assistants++
			}
		}
		fn, fault, kind := f.decide(user, assistants)
		if fault == "500" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":"llama runner process has terminated"}`)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		fl := w.(http.Flusher)
		line := func(v map[string]any) {
			v["model"] = req.Model
			v["created_at"] = "2026-11-21T00:00:00Z"
			b, _ := json.Marshal(v)
			w.Write(append(b, '\n'))
			fl.Flush()
		}
		msg := func(content, thinking string) map[string]any {
			m := map[string]any{"role": "assistant", "content": content}
			if thinking != "" {
				m["thinking"] = thinking
			}
			return m
		}
		line(map[string]any{"message": msg("", "Thinking about "+fn+"."), "done": false})
		if fault == "truncate" {
			line(map[string]any{"message": msg("```asm\n", ""), "done": false})
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return
		}
		if kind == "tool" {
			m := msg("", "")
			m["tool_calls"] = []any{map[string]any{"function": map[string]any{"name": "run_tests",
				"arguments": map[string]any{"asm": gccAsm(f.t, f.items[fn], "-O0")}}}}
			line(map[string]any{"message": m, "done": false})
		} else {
			text := f.answerText(fn, kind)
			line(map[string]any{"message": msg(text[:len(text)/2], ""), "done": false})
			line(map[string]any{"message": msg(text[len(text)/2:], ""), "done": false})
		}
		line(map[string]any{"message": msg("", ""), "done": true, "done_reason": "stop",
			"total_duration": 123456, "prompt_eval_count": 80, "eval_count": 40})
		f.mu.Lock()
		f.ok++
		f.mu.Unlock()
	})
}

// writeSpec writes a campaign spec over the given corpus items into dir.
func writeSpec(t *testing.T, dir, name, models string, ids []string) string {
	t.Helper()
	corpus := filepath.Join(dir, name+"-corpus")
	for _, id := range ids {
		it := corpusItem(t, id)
		d := filepath.Join(corpus, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for fname, body := range it.Files {
			if err := os.WriteFile(filepath.Join(d, fname), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		meta, _ := json.Marshal(map[string]any{"function": it.Function, "categories": it.Categories, "description": it.Description})
		if err := os.WriteFile(filepath.Join(d, "meta.json"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := fmt.Sprintf(`name: %s
lane: c2x86
tasks: {corpus: %s-corpus}
models:
%s
concurrency: 4
sandbox: {wall_time: 1500ms, cpu_time: 3s}
agent: {repair_turns: 1, max_tool_calls: 4}
retry: {max_attempts: 3, base_delay: 5ms, max_delay: 20ms}
`, name, name, models)
	p := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(p, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkResults compares the stored results with the behaviours.
func checkResults(t *testing.T, data, campaign string, f *fakeLLM, bs []behaviour, promptPerCall, complPerCall int) {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, campaign)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignDone {
		t.Errorf("campaign state %s (%s), want done", c.State, c.Note)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(bs) {
		t.Fatalf("%d results, want %d", len(res), len(bs))
	}
	byFn := map[string]runs.Result{}
	for _, r := range res {
		byFn[r.Task.Meta["function"]] = r
	}
	var prompt, compl int
	for fn, b := range f.answers {
		r, ok := byFn[fn]
		if !ok {
			t.Errorf("%s: no result", b.id)
			continue
		}
		v := r.Verdict
		if v.Pass != b.pass || v.Class != b.class {
			t.Errorf("%s (%v): verdict pass=%v class=%q (%s), want pass=%v class=%q", b.id, b.turns, v.Pass, v.Class, v.Diagnostic, b.pass, b.class)
		}
		if r.Attempt.RepairTurns != b.repairs || r.Attempt.ToolCalls != b.toolCalls {
			t.Errorf("%s: repairs %d tool calls %d, want %d and %d", b.id, r.Attempt.RepairTurns, r.Attempt.ToolCalls, b.repairs, b.toolCalls)
		}
		if b.pass && r.Attempt.Answer == "" {
			t.Errorf("%s: passing attempt has no stored answer", b.id)
		}
		if r.Attempt.Usage.ReasoningTokens == 0 {
			t.Errorf("%s: no reasoning tokens recorded: %+v", b.id, r.Attempt.Usage)
		}
		if !strings.Contains(string(r.Attempt.Transcript), "hink") {
			t.Errorf("%s: the transcript lost the reasoning text", b.id)
		}
		prompt += r.Attempt.Usage.PromptTokens
		compl += r.Attempt.Usage.CompletionTokens
	}
	f.mu.Lock()
	ok := f.ok
	f.mu.Unlock()
	if prompt != promptPerCall*ok || compl != complPerCall*ok {
		t.Errorf("tokens: prompt %d completion %d, want %d and %d (%d full answers served)",
			prompt, compl, promptPerCall*ok, complPerCall*ok, ok)
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != len(bs) || n.Queued != 0 || n.Leased != 0 {
		t.Errorf("counts %+v", n)
	}
}

func TestEndToEndOpenAI(t *testing.T) {
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	bs := []behaviour{
		{id: "int_001_gcd_unsigned", turns: []string{"right"}, pass: true},
		{id: "int_002_lcm_checked", turns: []string{"wrong", "right"}, pass: true, repairs: 1},
		{id: "int_003_isqrt_newton", turns: []string{"wrong"}, class: "wrong_output", repairs: 1},
		{id: "int_004_digit_sum", turns: []string{"garbage"}, class: "assemble_error", repairs: 1},
		{id: "int_005_reverse_digits", turns: []string{"hang"}, class: "timeout", repairs: 1},
		{id: "int_006_mod_pow", turns: []string{"tool", "right"}, pass: true, toolCalls: 1},
		{id: "int_007_is_leap_year", turns: []string{"right"}, fault: "429x2", pass: true},
		{id: "int_008_floor_div_mod", turns: []string{"right"}, fault: "500", pass: true},
		{id: "int_009_collatz_steps", turns: []string{"right"}, fault: "truncate", pass: true},
		{id: "int_010_sum_range", turns: []string{"prose"}, class: "no_answer", repairs: 1},
	}
	f := newFakeLLM(t, bs)
	srv := httptest.NewServer(f.openai())
	defer srv.Close()
	dir := t.TempDir()
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.id
	}
	specPath := writeSpec(t, dir, "e2e-openai", fmt.Sprintf(`  - {name: vllm, kind: openai, base_url: %s/v1, model: qwen-test, concurrency: 4}`, srv.URL), ids)
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "e2e-openai", f, bs, 100, 50)

	// The report and the export agree with the verdicts.
	code, out, errs = runKiln(t, ctx, "report", "--data", data, "--json", "e2e-openai")
	if code != 0 {
		t.Fatalf("kiln report: %d %s", code, errs)
	}
	var rep struct {
		Categories []struct {
			Category    string `json:"category"`
			Total, Pass int
		} `json:"categories"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report json: %v\n%s", err, out)
	}
	all := rep.Categories[len(rep.Categories)-1]
	if all.Category != "(all)" || all.Total != 10 || all.Pass != 6 {
		t.Errorf("report (all) row = %+v, want 10 tasks 6 pass", all)
	}
	exp := filepath.Join(dir, "samples.jsonl")
	if code, _, errs = runKiln(t, ctx, "export", "--data", data, "-o", exp, "e2e-openai"); code != 0 {
		t.Fatalf("kiln export: %d %s", code, errs)
	}
	fh, err := os.Open(exp)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	lines := 0
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines++
		if !strings.Contains(sc.Text(), `"pass":true`) {
			t.Errorf("exported a sample that is not verified: %.200s", sc.Text())
		}
	}
	if lines != 6 {
		t.Errorf("exported %d samples, want the 6 verified ones", lines)
	}
}

func TestEndToEndOllama(t *testing.T) {
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	bs := []behaviour{
		{id: "int_011_avg3_no_overflow", turns: []string{"right"}, pass: true},
		{id: "int_012_binomial", turns: []string{"wrong"}, class: "wrong_output", repairs: 1},
		{id: "int_013_digital_root", turns: []string{"tool", "right"}, pass: true, toolCalls: 1},
		{id: "int_014_count_divisors", turns: []string{"right"}, fault: "500", pass: true},
		{id: "int_015_is_prime", turns: []string{"right"}, fault: "truncate", pass: true},
		{id: "int_016_ext_gcd", turns: []string{"garbage", "right"}, pass: true, repairs: 1},
	}
	f := newFakeLLM(t, bs)
	srv := httptest.NewServer(f.ollama())
	defer srv.Close()
	dir := t.TempDir()
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.id
	}
	specPath := writeSpec(t, dir, "e2e-ollama", fmt.Sprintf(`  - {name: local, kind: ollama, base_url: %s, model: "qwen2.5-coder:7b", num_ctx: 16384, keep_alive: 5m, think: true, concurrency: 2}`, srv.URL), ids)
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "e2e-ollama", f, bs, 80, 40)

	// A model that is not pulled stops the campaign with a message naming
	// it; no task is judged, nothing is lost.
	specPath = writeSpec(t, dir, "e2e-ollama-missing", fmt.Sprintf(`  - {name: local, kind: ollama, base_url: %s, model: "nope:1b", num_ctx: 16384}`, srv.URL), ids[:2])
	code, out, errs = runKiln(t, ctx, "run", "--data", data, specPath)
	if code == 0 {
		t.Fatalf("campaign with a missing model succeeded: %s", out)
	}
	if !strings.Contains(errs, `"nope:1b"`) || !strings.Contains(errs, "ollama pull nope:1b") {
		t.Errorf("error does not name the missing model and the fix: %s", errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "e2e-ollama-missing")
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignFailed || n.Done != 0 || n.Queued != 2 {
		t.Errorf("missing model: state %s counts %+v, want failed with 2 tasks queued", c.State, n)
	}
}

// TestUnreachableEndpoint: every call fails to connect; the campaign stops
// as failed after a bounded number of attempts, with every task still queued.
func TestUnreachableEndpoint(t *testing.T) {
	// Not parallel: each kiln run in this process makes its own sandbox runner.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	dir := t.TempDir()
	specPath := writeSpec(t, dir, "e2e-down", fmt.Sprintf(`  - {name: down, kind: openai, base_url: %s/v1, model: m, concurrency: 2}`, url),
		[]string{"int_001_gcd_unsigned", "int_002_lcm_checked", "int_003_isqrt_newton"})
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, _, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	if code == 0 || !strings.Contains(errs, "failed in a row") {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "e2e-down")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := st.Counts(ctx, c.ID, -1)
	if c.State != runs.CampaignFailed || n.Done != 0 || n.Queued != 3 {
		t.Errorf("state %s counts %+v", c.State, n)
	}
	st.Close()
	// Resume from another working directory: the spec's relative corpus
	// path still resolves against the spec's folder, and the campaign
	// fails again for the endpoint, not for a path.
	code, _, errs = runKiln(t, ctx, "resume", "--data", data, "e2e-down")
	if code == 0 || !strings.Contains(errs, "failed in a row") {
		t.Fatalf("resume: exit %d, stderr %s", code, errs)
	}
}

// TestBadSpec: kiln run names file, line and field of every problem, exits
// 2, and records nothing.
func TestBadSpec(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.yaml")
	body := "name: bad\nlane: c2x86\nsampling: {temprature: 0.2}\nmodels:\n  - {name: m, kind: openai, model: x, concurrency: 0}\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	code, _, errs := runKiln(t, context.Background(), "run", "--data", data, p)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errs)
	}
	for _, want := range []string{"bad.yaml:3: sampling.temprature: unknown field", "bad.yaml:5: models[0].base_url", "bad.yaml:5: models[0].concurrency"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "kiln.db")); err == nil {
		t.Errorf("a bad spec created a run database")
	}
}

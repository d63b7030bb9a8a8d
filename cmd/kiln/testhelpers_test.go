package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// Fake LLM servers (OpenAI SSE, Ollama NDJSON) driven by per-function
// behaviours, and the campaign spec and result checks the end-to-end and
// fault tests share.

// behaviour is what the fake server does for one function's task.
type behaviour struct {
	id string // corpus item
	// answers per turn (the number of assistant messages already in the
	// request); the last one repeats. "right", "wrong", "garbage", "hang",
	// "prose", "tool" (a run_tests call with the right answer), "empty" (an
	// answer with no text), "bigprose" (the right answer after 4 MiB of
	// prose, streamed in 64 KiB chunks), "bigasm" (the right answer padded
	// with 4 MiB of comment lines, in one SSE line).
	turns []string
	// faults by request, in order, comma-separated: the nth request for
	// this function gets the nth element ("" for none), later requests
	// none; "kxN" is k N times. "429x2" is two 429s, then answers. Kinds:
	// see fakeLLM.openai (the Ollama server knows "500" and "truncate").
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
	// injected counts the faults served, by kind; served the answer kinds
	// served (a full answer each).
	injected, served map[string]int
	times            map[string][]time.Time // by function, when each request came
}

var funcRe = regexp.MustCompile("The function under test is `([A-Za-z_0-9]+)`")

func newFakeLLM(t *testing.T, bs []behaviour) *fakeLLM {
	f := &fakeLLM{t: t, answers: map[string]behaviour{}, items: map[string]prompts.CorpusItem{}, requests: map[string]int{},
		injected: map[string]int{}, served: map[string]int{}, times: map[string][]time.Time{}}
	for _, b := range bs {
		it := corpusItem(t, b.id)
		f.answers[it.Function] = b
		f.items[it.Function] = it
		gccAsm(t, it, "-O0") // warm the cache: handlers answer at once
	}
	return f
}

// faultSchedule expands a behaviour's fault string: "429x2,,500" is
// ["429", "429", "", "500"].
func faultSchedule(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, el := range strings.Split(s, ",") {
		if i := strings.LastIndex(el, "x"); i > 0 {
			if n, err := strconv.Atoi(el[i+1:]); err == nil {
				for range n {
					out = append(out, el[:i])
				}
				continue
			}
		}
		out = append(out, el)
	}
	return out
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
	defer f.mu.Unlock()
	f.requests[fn]++
	nreq := f.requests[fn]
	f.times[fn] = append(f.times[fn], time.Now())
	if sched := faultSchedule(b.fault); nreq <= len(sched) && sched[nreq-1] != "" {
		f.injected[sched[nreq-1]]++
		return fn, sched[nreq-1], ""
	}
	turn := assistants
	if turn >= len(b.turns) {
		turn = len(b.turns) - 1
	}
	f.served[b.turns[turn]]++
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
	case "empty":
		return ""
	case "bigprose":
		const line = "Let me walk through the function once more, line by line.\n"
		return strings.Repeat(line, bigAnswer/len(line)+1) +
			"Here is the translation.\n\n```asm\n" + right + "```\n"
	case "bigasm":
		const line = "# padding: a comment line the assembler skips, to make this answer big\n"
		return "```asm\n" + strings.Repeat(line, bigAnswer/len(line)+1) + right + "```\n"
	}
	f.t.Errorf("unknown answer kind %q", kind)
	return ""
}

// bigAnswer is the size of the "big" answers: several megabytes.
const bigAnswer = 4 << 20

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
		// Faults before the stream starts.
		switch fault {
		case "429", "429wait": // rate limited; "429wait" asks for one second
			ra := "0"
			if fault == "429wait" {
				ra = "1"
			}
			w.Header().Set("Retry-After", ra)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"rate limited","type":"rate_limit","code":429}}`)
			return
		case "500":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"message":"internal error","type":"server_error"}}`)
			return
		case "502": // a proxy's HTML page
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>\n")
			return
		case "503": // vLLM's older flat error shape
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(503)
			io.WriteString(w, `{"object":"error","message":"The engine is overloaded","type":"ServiceUnavailable","code":503}`)
			return
		case "timeout": // nothing at all until the client gives up
			f.waitForClient(r, fn)
			return
		case "html": // 200 with a page that is no event stream
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!DOCTYPE html>\n<html>\n<body>\n<p>Please log in to the proxy.</p>\n</body>\n</html>\n")
			return
		case "nonjson": // 200, said to be JSON, is not
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "upstream connect error or disconnect/reset before headers. reset reason: overflow")
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
		switch fault {
		case "stall": // the stream starts, then nothing until the client gives up
			f.waitForClient(r, fn)
			return
		case "badjson":
			chunk(`{"content":"Here is"}`, "", "")
			io.WriteString(w, "data: {\"id\":\"chatcmpl-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\": tion.}}]\n\n")
			chunk(`{}`, "stop", "")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		case "toolong": // one SSE line of 9 MiB: past the client's limit
			chunk(`{"content":`+jsonStr(strings.Repeat("x", 9<<20))+`}`, "", "")
			chunk(`{}`, "stop", "")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		case "":
		case "truncate":
		default:
			f.t.Errorf("fake server: unknown fault %q", fault)
		}
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
			switch {
			case kind == "bigasm" || len(text) == 0:
				chunk(`{"content":`+jsonStr(text)+`}`, "", "")
			case len(text) > 64<<10:
				for len(text) > 0 {
					n := min(len(text), 64<<10)
					chunk(`{"content":`+jsonStr(text[:n])+`}`, "", "")
					text = text[n:]
				}
			default:
				chunk(`{"content":`+jsonStr(text[:len(text)/2])+`}`, "", "")
				chunk(`{"content":`+jsonStr(text[len(text)/2:])+`}`, "", "")
			}
			chunk(`{}`, "stop", "")
		}
		chunk("", "", usage)
		io.WriteString(w, "data: [DONE]\n\n")
		f.mu.Lock()
		f.ok++
		f.mu.Unlock()
	})
}

// waitForClient blocks a handler until the client goes away (its timeout).
func (f *fakeLLM) waitForClient(r *http.Request, fn string) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
		f.t.Errorf("fake server: the client of %s never gave up waiting", fn)
	}
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

// warmProbe runs `kiln doctor` on the data folder data (made if missing),
// so that the toolchain probe (tiny compiles with every toolchain) is
// cached in the shared toolchain folder before a daemon starts on it: kiln
// serve probes when a campaign is submitted, inside the request, and on a
// loaded 2-core host the probe can outlast the API's write timeout.
func warmProbe(ctx context.Context, t *testing.T, data string) {
	t.Helper()
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runKiln(t, ctx, "doctor", "--data", data, "--log-level", "warn"); code != 0 {
		t.Fatalf("kiln doctor: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(os.Getenv(toolchainDirVar), "toolchain-probe.json")); err != nil {
		t.Fatalf("kiln doctor left no probe cache in the toolchain folder: %v", err)
	}
}

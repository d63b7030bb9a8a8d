package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
)

// Streams below are as Ollama's /api/chat writes them.

const thinkingStream = `{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.104518Z","message":{"role":"assistant","content":"","thinking":"The user"},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.131022Z","message":{"role":"assistant","content":"","thinking":" wants f."},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.157315Z","message":{"role":"assistant","content":"leal 1(%rdi), %eax"},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.183660Z","message":{"role":"assistant","content":"\nret"},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.210051Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":2316425708,"load_duration":60128458,"prompt_eval_count":26,"prompt_eval_duration":98410792,"eval_count":57,"eval_duration":2157009959}
`

// Newer Ollama gives tool calls ids; older ones do not.
const toolStream = `{"model":"qwen3:8b","created_at":"2026-01-01T12:00:01.000001Z","message":{"role":"assistant","content":"","thinking":"Compile first."},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:01.500001Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_4x9c2kqa","function":{"index":0,"name":"compile","arguments":{"source":"int main(){}","flags":["-O2"]}}}]},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:01.600001Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":1,"name":"run_tests","arguments":{}}}]},"done":false}
{"model":"qwen3:8b","created_at":"2026-01-01T12:00:01.700001Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":912000000,"load_duration":1000000,"prompt_eval_count":310,"prompt_eval_duration":50000000,"eval_count":48,"eval_duration":800000000}
`

// A fully cached prompt: Ollama leaves prompt_eval_count out.
const cachedPromptStream = `{"model":"llama3.2:3b","created_at":"2026-01-01T12:00:02Z","message":{"role":"assistant","content":"abcdefgh"},"done":false}
{"model":"llama3.2:3b","created_at":"2026-01-01T12:00:02.1Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":100000000,"eval_count":2,"eval_duration":90000000}
`

type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

type captured struct {
	Path   string
	Header http.Header
	Body   []byte
}

func serve(t *testing.T, h http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, captured{Path: r.URL.Path, Header: r.Header.Clone(), Body: b})
		fs.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) last(t *testing.T) captured {
	t.Helper()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return fs.reqs[len(fs.reqs)-1]
}

// ndjson writes stream line by line, flushing after each, as Ollama does.
func ndjson(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		for _, line := range strings.SplitAfter(stream, "\n") {
			_, _ = io.WriteString(w, line)
			w.(http.Flusher).Flush()
		}
	}
}

// ndjsonCut writes stream and drops the connection mid-body.
func ndjsonCut(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, stream)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

func reply(status int, contentType, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func lines(stream string, n int) string {
	return strings.Join(strings.SplitAfter(stream, "\n")[:n], "")
}

func newClient(t *testing.T, url string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Name: "test", BaseURL: url, Model: "qwen3:8b"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func userReq(text string) agent.Request {
	return agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: text}}}
}

func ptr[T any](v T) *T { return &v }

func TestNewValidates(t *testing.T) {
	t.Parallel()
	ok := Config{BaseURL: "http://localhost:11434", Model: "qwen3:8b"}
	tests := []struct {
		name  string
		mod   func(*Config)
		field string
	}{
		{"valid", func(*Config) {}, ""},
		{"valid think level", func(c *Config) { c.Think = "high" }, ""},
		{"no base url", func(c *Config) { c.BaseURL = "" }, "BaseURL"},
		{"bad base url", func(c *Config) { c.BaseURL = "ftp://x" }, "BaseURL"},
		{"no model", func(c *Config) { c.Model = "" }, "Model"},
		{"negative num_ctx", func(c *Config) { c.NumCtx = -1 }, "NumCtx"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
		{"bad think", func(c *Config) { c.Think = "max" }, "Think"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			tt.mod(&cfg)
			c, err := New(cfg)
			if tt.field == "" {
				if err != nil || c == nil {
					t.Fatalf("New: %v", err)
				}
				if c.Name() != cfg.BaseURL || c.numCtx != DefaultNumCtx {
					t.Errorf("Name %q numCtx %d, want BaseURL and %d", c.Name(), c.numCtx, DefaultNumCtx)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("New error = %v, want one naming %s", err, tt.field)
			}
		})
	}
}

func TestChatSuccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		stream    string
		content   string
		reasoning string
		finish    string
		model     string
		usage     agent.Usage
		calls     []agent.ToolCall // ID "" means: generated
	}{
		{
			name: "thinking and done stats", stream: thinkingStream,
			content: "leal 1(%rdi), %eax\nret", reasoning: "The user wants f.", finish: "stop", model: "qwen3:8b",
			usage: agent.Usage{PromptTokens: 26, CompletionTokens: 57, ReasoningTokens: 5,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
		},
		{
			name: "tool calls with and without ids", stream: toolStream,
			reasoning: "Compile first.", finish: "stop", model: "qwen3:8b",
			usage: agent.Usage{PromptTokens: 310, CompletionTokens: 48, ReasoningTokens: 4,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
			calls: []agent.ToolCall{
				{ID: "call_4x9c2kqa", Name: "compile", Arguments: json.RawMessage(`{"source":"int main(){}","flags":["-O2"]}`)},
				{Name: "run_tests", Arguments: json.RawMessage(`{}`)},
			},
		},
		{
			name: "missing prompt count is estimated", stream: cachedPromptStream,
			content: "abcdefgh", finish: "length", model: "llama3.2:3b",
			usage: agent.Usage{PromptTokens: 2, CompletionTokens: 2, PromptSource: agent.CountEstimate,
				CompletionSource: agent.CountServer, Calls: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, ndjson(tt.stream))
			c := newClient(t, srv.URL, nil)
			resp, err := c.Chat(context.Background(), userReq("write f"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			m := resp.Message
			if m.Role != agent.RoleAssistant || m.Content != tt.content || m.Reasoning != tt.reasoning {
				t.Errorf("message = %+v, want content %q reasoning %q", m, tt.content, tt.reasoning)
			}
			if resp.FinishReason != tt.finish || resp.Model != tt.model {
				t.Errorf("finish %q model %q", resp.FinishReason, resp.Model)
			}
			u := resp.Usage
			if u.Latency <= 0 || u.TTFT <= 0 || u.TTFT > u.Latency {
				t.Errorf("latency %v TTFT %v", u.Latency, u.TTFT)
			}
			u.Latency, u.TTFT = 0, 0
			if u != tt.usage {
				t.Errorf("usage = %+v\nwant    %+v", u, tt.usage)
			}
			if len(m.ToolCalls) != len(tt.calls) {
				t.Fatalf("tool calls = %+v, want %+v", m.ToolCalls, tt.calls)
			}
			for i, want := range tt.calls {
				got := m.ToolCalls[i]
				if want.ID == "" {
					if !strings.HasPrefix(got.ID, "call_") || len(got.ID) < 10 {
						t.Errorf("call %d: generated id %q", i, got.ID)
					}
				} else if got.ID != want.ID {
					t.Errorf("call %d: id %q, want %q", i, got.ID, want.ID)
				}
				if got.Name != want.Name || string(got.Arguments) != string(want.Arguments) {
					t.Errorf("call %d = %s %s, want %s %s", i, got.Name, got.Arguments, want.Name, want.Arguments)
				}
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		mod       func(*Config)
		numCtx    float64
		keepAlive any // nil: absent
		think     any // nil: absent
	}{
		{"defaults", nil, DefaultNumCtx, nil, nil},
		{"think bool and keep alive", func(c *Config) {
			c.NumCtx, c.KeepAlive, c.Think = 32768, 10*time.Minute, "true"
		}, 32768, "10m0s", true},
		{"think level, keep loaded", func(c *Config) { c.KeepAlive, c.Think = -1, "high" }, DefaultNumCtx, -1.0, "high"},
		{"think off", func(c *Config) { c.Think = "false" }, DefaultNumCtx, nil, false},
	}
	req := agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You write x86-64 assembly."},
			{Role: agent.RoleUser, Content: "int f(int x){return x+1;}"},
			{Role: agent.RoleAssistant, Reasoning: "try compile", ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "compile", Arguments: json.RawMessage(`{"source":"f: ret","flags":["-c"]}`)},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Name: "compile", Content: "ok"},
		},
		Tools: []agent.ToolSpec{{
			Name: "compile", Description: "Assemble a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"source":{"type":"string","description":"assembly"},"flags":{"type":"array","items":{"type":"string"}}},"required":["source"]}`),
		}},
		Sampling: agent.Sampling{Temperature: ptr(0.0), TopP: ptr(0.9), MaxTokens: 1024, Seed: ptr(42)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, ndjson(thinkingStream))
			c := newClient(t, srv.URL, tt.mod)
			if _, err := c.Chat(context.Background(), req); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := srv.last(t)
			if got.Path != "/api/chat" {
				t.Errorf("path %q", got.Path)
			}
			var body map[string]any
			if err := json.Unmarshal(got.Body, &body); err != nil {
				t.Fatalf("body %s: %v", got.Body, err)
			}
			if body["model"] != "qwen3:8b" || body["stream"] != true {
				t.Errorf("model/stream: %s", got.Body)
			}
			opts, _ := body["options"].(map[string]any)
			want := map[string]any{"num_ctx": tt.numCtx, "temperature": 0.0, "top_p": 0.9, "seed": 42.0, "num_predict": 1024.0}
			for k, v := range want {
				if opts[k] != v {
					t.Errorf("options[%s] = %v, want %v (%s)", k, opts[k], v, got.Body)
				}
			}
			if body["keep_alive"] != tt.keepAlive {
				t.Errorf("keep_alive = %v, want %v", body["keep_alive"], tt.keepAlive)
			}
			if body["think"] != tt.think {
				t.Errorf("think = %v, want %v", body["think"], tt.think)
			}
			if body["truncate"] != false {
				t.Errorf("truncate = %v, want false (an over-long prompt is refused, not cut)", body["truncate"])
			}
			tools, _ := body["tools"].([]any)
			if len(tools) != 1 {
				t.Fatalf("tools: %s", got.Body)
			}
			fn := tools[0].(map[string]any)["function"].(map[string]any)
			params := fn["parameters"].(map[string]any)
			props := params["properties"].(map[string]any)
			if fn["name"] != "compile" || params["type"] != "object" || props["source"] == nil || props["flags"] == nil {
				t.Errorf("tool = %v", tools[0])
			}
			msgs, _ := body["messages"].([]any)
			if len(msgs) != 4 {
				t.Fatalf("messages: %s", got.Body)
			}
			asst := msgs[2].(map[string]any)
			call := asst["tool_calls"].([]any)[0].(map[string]any)
			cf := call["function"].(map[string]any)
			args, _ := json.Marshal(cf["arguments"])
			if call["id"] != "call_1" || cf["name"] != "compile" || string(args) != `{"flags":["-c"],"source":"f: ret"}` {
				t.Errorf("assistant tool call = %v", call)
			}
			if asst["thinking"] != "try compile" {
				t.Errorf("assistant thinking = %v", asst["thinking"])
			}
			tool := msgs[3].(map[string]any)
			if tool["role"] != "tool" || tool["tool_name"] != "compile" || tool["tool_call_id"] != "call_1" || tool["content"] != "ok" {
				t.Errorf("tool message = %v", tool)
			}
		})
	}
}

func TestUnsetSamplingIsNotSent(t *testing.T) {
	t.Parallel()
	srv := serve(t, ndjson(thinkingStream))
	c := newClient(t, srv.URL, nil)
	if _, err := c.Chat(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Options map[string]any `json:"options"`
	}
	if err := json.Unmarshal(srv.last(t).Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Options) != 1 || body.Options["num_ctx"] != float64(DefaultNumCtx) {
		t.Errorf("options = %v, want only num_ctx", body.Options)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		kind      agent.ErrorKind
		status    int
		retryIn   time.Duration
		errSubstr string
	}{
		{
			name:    "model not pulled",
			handler: reply(404, "application/json; charset=utf-8", `{"error":"model \"qwen3:8b\" not found, try pulling it first"}`),
			kind:    agent.KindModelNotFound, status: 404,
			errSubstr: `ollama model "qwen3:8b" is not pulled on http://127.0.0.1:`,
		},
		{
			name:    "wrong path",
			handler: reply(404, "text/plain; charset=utf-8", "404 page not found"),
			kind:    agent.KindBadRequest, status: 404, errSubstr: "BaseURL",
		},
		{
			name:    "500 runner died",
			handler: reply(500, "application/json; charset=utf-8", `{"error":"llama runner process has terminated: exit status 2"}`),
			kind:    agent.KindRetryable, status: 500, errSubstr: "runner process",
		},
		{
			name:    "500 with empty body",
			handler: reply(500, "", ""),
			kind:    agent.KindRetryable, status: 500,
		},
		{
			name:    "503 busy with Retry-After",
			handler: reply(503, "application/json; charset=utf-8", `{"error":"server busy, please try again.  maximum pending requests exceeded"}`, "Retry-After", "2"),
			kind:    agent.KindRetryable, status: 503, retryIn: 2 * time.Second, errSubstr: "server busy",
		},
		{
			name:    "400 model cannot use tools",
			handler: reply(400, "application/json; charset=utf-8", `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`),
			kind:    agent.KindBadRequest, status: 400, errSubstr: "does not support tools",
		},
		{
			// What a real server (v0.17.4) answers to truncate false and a
			// prompt over num_ctx (seen in ollamatest's interop tests).
			name:    "400 prompt over num_ctx",
			handler: reply(400, "application/json; charset=utf-8", `{"error":"the input length exceeds the context length"}`),
			kind:    agent.KindBadRequest, status: 400, errSubstr: "context of 8192 tokens (num_ctx)",
		},
		{
			name:    "401",
			handler: reply(401, "application/json; charset=utf-8", `{"error":"unauthorized","signin_url":"https://ollama.com/connect?name=x"}`),
			kind:    agent.KindAuth, status: 401,
		},
		{
			name:    "403",
			handler: reply(403, "application/json; charset=utf-8", `{"error":"forbidden"}`),
			kind:    agent.KindAuth, status: 403, errSubstr: "forbidden",
		},
		{
			name:    "stream ends before done",
			handler: ndjson(lines(thinkingStream, 3)),
			kind:    agent.KindTruncated, status: 200, errSubstr: "done:true",
		},
		{
			name:    "connection dropped mid-stream",
			handler: ndjsonCut(lines(thinkingStream, 3)),
			kind:    agent.KindTruncated, status: 200,
		},
		{
			name:    "connection dropped mid-line",
			handler: ndjsonCut(lines(thinkingStream, 2) + `{"model":"qwen3:8b","created_at":"2026-01-01T12:00:00.15`),
			kind:    agent.KindTruncated, status: 200,
		},
		{
			name:    "empty 200",
			handler: reply(200, "application/x-ndjson", ""),
			kind:    agent.KindTruncated, status: 200,
		},
		{
			name:    "error line inside the stream",
			handler: ndjson(lines(thinkingStream, 2) + `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"),
			kind:    agent.KindRetryable, status: 200, errSubstr: "while running the model",
		},
		{
			name:    "line of the wrong shape",
			handler: ndjson(lines(thinkingStream, 1) + `{"model":"qwen3:8b","message":{"role":"assistant","content":5},"done":false}` + "\n"),
			kind:    agent.KindBadResponse, status: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newClient(t, srv.URL, nil)
			resp, err := c.Chat(context.Background(), userReq("x"))
			if resp != nil {
				t.Errorf("got a response %+v alongside the error: partial answers must never be returned", resp)
			}
			var ae *agent.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not *agent.Error", err, err)
			}
			if ae.Kind != tt.kind || ae.Status != tt.status || ae.RetryIn != tt.retryIn {
				t.Errorf("kind %s status %d retry %v, want %s %d %v (err: %v)",
					ae.Kind, ae.Status, ae.RetryIn, tt.kind, tt.status, tt.retryIn, err)
			}
			if ae.Endpoint != "test" || ae.Model != "qwen3:8b" {
				t.Errorf("endpoint %q model %q", ae.Endpoint, ae.Model)
			}
			if !strings.Contains(err.Error(), tt.errSubstr) {
				t.Errorf("error %q does not contain %q", err, tt.errSubstr)
			}
		})
	}
}

func TestModelNotPulledMessage(t *testing.T) {
	t.Parallel()
	srv := serve(t, reply(404, "application/json", `{"error":"model \"qwen3:8b\" not found, try pulling it first"}`))
	c := newClient(t, srv.URL, nil)
	_, err := c.Chat(context.Background(), userReq("x"))
	want := `ollama model "qwen3:8b" is not pulled on ` + srv.URL + `: run "ollama pull qwen3:8b"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	if agent.Retryable(err) {
		t.Error("a missing model must not be retryable")
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := newClient(t, url, nil)
	_, err := c.Chat(context.Background(), userReq("x"))
	if agent.KindOf(err) != agent.KindRetryable {
		t.Fatalf("err = %v, want retryable", err)
	}
}

func hang(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = io.WriteString(w, lines(thinkingStream, 1))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

func TestContextCancelWhileServerHangs(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, hang(release))
	c := newClient(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	resp, err := c.Chat(ctx, userReq("x"))
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Chat returned after %v, want promptly after cancel", elapsed)
	}
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("resp %v err %v, want context.Canceled", resp, err)
	}
	if agent.KindOf(err) != "" {
		t.Errorf("cancellation must not be an *agent.Error: kind %q", agent.KindOf(err))
	}
}

func TestCallTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, hang(release))
	c := newClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 150 * time.Millisecond })
	_, err := c.Chat(context.Background(), userReq("x"))
	if agent.KindOf(err) != agent.KindRetryable || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want retryable timeout", err)
	}
}

func TestStopsAtDone(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	// The server keeps the body open after the done line.
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		ndjson(thinkingStream)(w, r)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newClient(t, srv.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := c.Chat(ctx, userReq("x"))
	if err != nil || resp.FinishReason != "stop" {
		t.Fatalf("resp %v err %v", resp, err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Chat took %v: it must return at done:true, not wait for the body to end", elapsed)
	}
}

func TestHTTPClientIsNotModified(t *testing.T) {
	t.Parallel()
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	if _, err := New(Config{BaseURL: "http://localhost:11434", Model: "m", HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != tr {
		t.Error("New replaced the caller's transport")
	}
}

// TestNoGoroutineLeak runs before the parallel tests resume; the count is
// compared while the server is up, so an unclosed body would show.
func TestNoGoroutineLeak(t *testing.T) {
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	release := make(chan struct{})
	handlers := map[string]http.HandlerFunc{
		"/ok/api/chat":    ndjson(thinkingStream),
		"/tools/api/chat": ndjson(toolStream),
		"/cut/api/chat":   ndjsonCut(lines(thinkingStream, 2)),
		"/short/api/chat": ndjson(lines(thinkingStream, 2)),
		"/404/api/chat":   reply(404, "application/json", `{"error":"model \"m\" not found, try pulling it first"}`),
		"/500/api/chat":   reply(500, "", ""),
		"/hang/api/chat":  hang(release),
		"/linger/api/chat": func(w http.ResponseWriter, r *http.Request) {
			ndjson(thinkingStream)(w, r)
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		handlers[r.URL.Path](w, r)
	}))
	defer srv.Close()
	defer close(release)
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for path := range handlers {
		c, err := New(Config{BaseURL: srv.URL + strings.TrimSuffix(path, "/api/chat"), Model: "m", HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			// Cancelling a request's context also frees its
			// connection, hiding an unclosed body: only the hanging
			// server gets a short deadline, the others are cancelled
			// after the check.
			timeout := 10 * time.Second
			if strings.HasPrefix(path, "/hang/") {
				timeout = 100 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			_, _ = c.Chat(ctx, userReq("x"))
		}
	}
	tr.CloseIdleConnections()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "3": 3 * time.Second, "0": 0, "x": 0,
		now.Add(time.Minute).Format(http.TimeFormat): time.Minute,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := agent.RetryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

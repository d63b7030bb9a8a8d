package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms/openai"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/langchain"
	"github.com/kiln-dev/kiln/tools"
)

// oaRequest is the part of an OpenAI chat request the fake server reads.
type oaRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Temperature float64 `json:"temperature"`
}

// fakeOpenAI is an httptest server speaking the OpenAI chat API: it asks for
// the "echo" tool on the first turn and answers with a code block once it
// has seen the tool result. It records every request.
type fakeOpenAI struct {
	t      *testing.T
	status int // when not 0, every call fails with this status
	mu     sync.Mutex
	reqs   []oaRequest
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
		http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
		return
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"error": {"message": "status %d from fake", "type": "x"}}`, f.status)
		return
	}
	var req oaRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.t.Errorf("bad request body: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	w.Header().Set("Content-Type", "application/json")
	if last.Role == "tool" {
		var result string
		_ = json.Unmarshal(last.Content, &result)
		fmt.Fprintf(w, `{"id": "2", "object": "chat.completion", "model": %q,
			"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
				"content": "Result was %s.\n`+"```"+`\nRIGHT\n`+"```"+`", "reasoning_content": "the tool said so"}}],
			"usage": {"prompt_tokens": 210, "completion_tokens": 42, "total_tokens": 252,
				"completion_tokens_details": {"reasoning_tokens": 7}}}`, req.Model, result)
		return
	}
	fmt.Fprintf(w, `{"id": "1", "object": "chat.completion", "model": %q,
		"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "",
			"tool_calls": [{"id": "call_abc", "type": "function",
				"function": {"name": "echo", "arguments": "{\"text\": \"hi\"}"}}]}}],
		"usage": {"prompt_tokens": 150, "completion_tokens": 12, "total_tokens": 162}}`, req.Model)
}

func newOpenAI(t *testing.T, srv *httptest.Server) *langchain.Model {
	t.Helper()
	llm, err := openai.New(openai.WithToken("test-key"), openai.WithBaseURL(srv.URL+"/v1"),
		openai.WithModel("qwen-coder"), openai.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return langchain.New(llm, "lc-openai", langchain.Options{})
}

type echoTool struct{}

func (echoTool) Name() string        { return "echo" }
func (echoTool) Description() string { return "echoes text" }
func (echoTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
}
func (echoTool) Call(_ context.Context, args json.RawMessage) (string, error) {
	var a struct{ Text string }
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	return "echo " + a.Text, nil
}

// lane is a minimal tools.Lane: a fenced block is the answer, "RIGHT" passes.
type lane struct{}

var fence = regexp.MustCompile("(?s)```\n(.*?)\n```")

func (lane) Name() string { return "test" }
func (lane) Extract(text string) (string, bool) {
	m := fence.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}
func (lane) Tools(tools.Item) []tools.Tool { return []tools.Tool{echoTool{}} }
func (lane) Verify(_ context.Context, _ tools.Item, answer string) (tools.Verdict, error) {
	return tools.Verdict{Pass: answer == "RIGHT", Stage: "compare"}, nil
}

// TestOpenAIProviderEndToEnd runs a whole attempt (native tool call, tool
// result, final answer) through langchaingo's real openai provider against
// an httptest server speaking OpenAI JSON.
func TestOpenAIProviderEndToEnd(t *testing.T) {
	t.Parallel()
	fake := &fakeOpenAI{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	temp := 0.25
	loop := &agent.Loop{Model: newOpenAI(t, srv), Lane: lane{}, Sampling: agent.Sampling{Temperature: &temp}}
	a, err := loop.Run(context.Background(), "be brief", "solve", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Err != nil || !a.Verdict.Pass || a.ToolCalls != 1 || a.Turns != 2 || a.Model != "lc-openai" {
		t.Fatalf("attempt err %v, verdict %+v, tool calls %d, turns %d, model %q", a.Err, a.Verdict, a.ToolCalls, a.Turns, a.Model)
	}
	final := a.Messages[len(a.Messages)-1]
	if final.Reasoning != "the tool said so" || !strings.Contains(final.Content, "Result was echo hi.") {
		t.Errorf("final message %+v", final)
	}
	// Usage: both calls from the server, reasoning only reported on the second.
	u := a.Usage
	if u.PromptTokens != 360 || u.CompletionTokens != 54 || u.ReasoningTokens != 7 || u.Calls != 2 ||
		u.PromptSource != agent.CountServer || u.CompletionSource != agent.CountServer {
		t.Errorf("usage %+v", u)
	}

	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(fake.reqs))
	}
	first, second := fake.reqs[0], fake.reqs[1]
	if first.Model != "qwen-coder" || first.Temperature != 0.25 || len(first.Tools) != 1 ||
		first.Tools[0].Function.Name != "echo" || first.Tools[0].Function.Parameters["type"] != "object" {
		t.Errorf("first request %+v", first)
	}
	var roles []string
	for _, m := range second.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool" {
		t.Fatalf("second request roles %s", got)
	}
	asst, tool := second.Messages[2], second.Messages[3]
	if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].ID != "call_abc" || asst.ToolCalls[0].Function.Name != "echo" ||
		tool.ToolCallID != "call_abc" || string(tool.Content) != `"echo hi"` {
		t.Errorf("tool call round trip: assistant %+v, tool %+v (content %s)", asst, tool, tool.Content)
	}
}

func TestOpenAIProviderErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		kind   agent.ErrorKind
	}{
		{429, agent.KindRetryable},
		{500, agent.KindRetryable},
		{401, agent.KindAuth},
		{404, agent.KindModelNotFound},
		{400, agent.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&fakeOpenAI{t: t, status: tt.status})
			defer srv.Close()
			_, err := newOpenAI(t, srv).Chat(context.Background(),
				agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}})
			var e *agent.Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Status != tt.status {
				t.Errorf("err %v, want kind %s status %d", err, tt.kind, tt.status)
			}
		})
	}
	t.Run("server gone", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		m := newOpenAI(t, srv)
		srv.Close()
		_, err := m.Chat(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}})
		if !agent.Retryable(err) {
			t.Errorf("err %v (kind %q), want retryable", err, agent.KindOf(err))
		}
	})
}

package script_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/script"
)

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, want string
	}{
		{"bad JSON", `{"match": "a", "response": "x"}` + "\n" + `{"match": "b", "response": }`, "s.jsonl:2: bad JSON"},
		{"bad regexp", "# comment\n\n" + `{"match": "a("}`, "s.jsonl:3: bad match regexp"},
		{"missing match", `{"response": "x"}`, `s.jsonl:1: missing "match"`},
		{"unknown field", `{"match": "a", "respones": "x"}`, `s.jsonl:1: bad JSON: json: unknown field "respones"`},
		{"two values on a line", `{"match": "a"} {"match": "b"}`, "s.jsonl:1: bad JSON: more than one value"},
		{"tool call without name", `{"match": "a", "tool_calls": [{"arguments": {}}]}`, "s.jsonl:1: tool call 1 has no name"},
		{"empty", "\n# only a comment\n", "s.jsonl: no rules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := script.Parse(strings.NewReader(tt.text), "s.jsonl", script.Config{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "demo.jsonl")
	text := "# a demo\n" +
		`{"match": "hello", "response": "hi there", "reasoning": "be nice"}` + "\n\n" +
		`{"match": "(?i)compile", "response": "", "tool_calls": [{"name": "compile", "arguments": {"code": "int x;"}}]}` + "\n" +
		`{"match": "", "response": "never"}` // an empty match is missing
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := script.Load(path, script.Config{}); err == nil || !strings.Contains(err.Error(), path+":5: missing") {
		t.Fatalf("err = %v, want %s:5: missing", err, path)
	}
	if err := os.WriteFile(path, []byte(strings.TrimSuffix(text, `{"match": "", "response": "never"}`)), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := script.Load(path, script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rules := m.Rules()
	if len(rules) != 2 || rules[0].Line != 2 || rules[1].Line != 4 || rules[0].Reasoning != "be nice" {
		t.Errorf("rules = %+v", rules)
	}
	if _, err := script.Load(filepath.Join(t.TempDir(), "absent.jsonl"), script.Config{}); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func user(text string) agent.Request {
	return agent.Request{Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: "system hello compile"},
		{Role: agent.RoleUser, Content: text},
	}}
}

func TestChat(t *testing.T) {
	t.Parallel()
	m, err := script.Parse(strings.NewReader(strings.Join([]string{
		`{"match": "^first", "response": "one"}`,
		`{"match": "first|second", "response": "two", "reasoning": "thinking hard"}`,
		`{"match": "^echo: ", "response": "after tool"}`,
		`{"match": "(?i)compile", "tool_calls": [{"name": "compile", "arguments": {"code": "int x;"}}, {"name": "run"}]}`,
	}, "\n")), "rules.jsonl", script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name          string
		req           agent.Request
		content       string
		reasoning     string
		calls, finish string
	}{
		{name: "first match wins", req: user("first and second"), content: "one", finish: "stop"},
		{name: "second rule", req: user("the second"), content: "two", reasoning: "thinking hard", finish: "stop"},
		{name: "tool calls", req: user("Compile this"), calls: `compile{"code": "int x;"} run{}`, finish: "tool_calls"},
		{
			name: "last message is a tool result",
			req: agent.Request{Messages: []agent.Message{
				{Role: agent.RoleUser, Content: "compile it"},
				{Role: agent.RoleAssistant, Content: "first", ToolCalls: []agent.ToolCall{{ID: "1", Name: "echo"}}},
				{Role: agent.RoleTool, ToolCallID: "1", Content: "echo: ok"},
			}},
			content: "after tool", finish: "stop",
		},
		{
			name: "assistant messages are not matched",
			req: agent.Request{Messages: []agent.Message{
				{Role: agent.RoleUser, Content: "the second"},
				{Role: agent.RoleAssistant, Content: "first"},
			}},
			content: "two", reasoning: "thinking hard", finish: "stop",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := m.Chat(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range resp.Message.ToolCalls {
				if c.ID == "" {
					t.Error("tool call without ID")
				}
				calls = append(calls, c.Name+string(c.Arguments))
			}
			msg := resp.Message
			if msg.Role != agent.RoleAssistant || msg.Content != tt.content || msg.Reasoning != tt.reasoning ||
				strings.Join(calls, " ") != tt.calls || resp.FinishReason != tt.finish || resp.Model != "script:rules.jsonl" {
				t.Errorf("resp = %+v", resp)
			}
			want := agent.EstimateUsage(tt.req, msg)
			u := resp.Usage
			if u.PromptTokens != want.PromptTokens || u.CompletionTokens != want.CompletionTokens ||
				u.ReasoningTokens != want.ReasoningTokens || u.PromptSource != agent.CountEstimate || u.Calls != 1 {
				t.Errorf("usage = %+v, want estimates %+v", u, want)
			}
		})
	}
}

func TestChatNoMatch(t *testing.T) {
	t.Parallel()
	m, err := script.Parse(strings.NewReader(`{"match": "^x$", "response": "x"}`), "dir/s.jsonl", script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Chat(context.Background(), user("y"))
	var e *agent.Error
	if !errors.As(err, &e) || e.Kind != agent.KindBadRequest || !strings.Contains(err.Error(), `no script line in dir/s.jsonl matched "y"`) {
		t.Errorf("err = %v, want bad_request naming the file", err)
	}
	if agent.Retryable(err) {
		t.Error("no-match error is retryable")
	}
}

func TestUsageEstimates(t *testing.T) {
	t.Parallel()
	m, err := script.Parse(strings.NewReader(`{"match": ".", "response": "12345678", "reasoning": "1234"}`), "s", script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "123456789"}}})
	if err != nil {
		t.Fatal(err)
	}
	// prompt 9 bytes -> 3 tokens; completion 8 + reasoning 4 bytes -> 2 + 1.
	u := resp.Usage
	if u.PromptTokens != 3 || u.CompletionTokens != 3 || u.ReasoningTokens != 1 ||
		u.CompletionSource != agent.CountEstimate || u.ReasoningSource != agent.CountEstimate {
		t.Errorf("usage = %+v", u)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m, err := script.Parse(strings.NewReader(`{"match": ".", "response": "ok"}`), "s", script.Config{Latency: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := m.Chat(context.Background(), user("x"))
		if err != nil || time.Since(start) != 3*time.Second || resp.Usage.Latency != 3*time.Second {
			t.Errorf("err %v, took %v, latency %v; want 3s", err, time.Since(start), resp.Usage.Latency)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start = time.Now()
		if _, err := m.Chat(ctx, user("x")); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("err %v after %v, want deadline exceeded after 1s", err, time.Since(start))
		}
	})
}

func TestConcurrentChat(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m, err := script.Parse(strings.NewReader(`{"match": "^(\\d+)$", "tool_calls": [{"name": "t"}]}`), "s",
			script.Config{Latency: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		ids := map[string]bool{}
		for i := range 50 {
			wg.Go(func() {
				resp, err := m.Chat(context.Background(), user(fmt.Sprint(i)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[resp.Message.ToolCalls[0].ID] = true
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(ids) != 50 {
			t.Errorf("%d distinct tool call IDs over 50 calls", len(ids))
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("50 concurrent calls took %v, want 1s (latency does not serialise)", d)
		}
	})
}

func TestMatchedText(t *testing.T) {
	t.Parallel()
	msgs := []agent.Message{
		{Role: agent.RoleUser, Content: "u1"},
		{Role: agent.RoleAssistant, Content: "a1"},
		{Role: agent.RoleTool, Content: "t1"},
		{Role: agent.RoleTool, Content: "t2"},
		{Role: agent.RoleAssistant, Content: "a2"},
	}
	if got, ok := script.MatchedText(msgs); !ok || got != "t2" {
		t.Errorf("MatchedText = %q, %v; want t2", got, ok)
	}
	if _, ok := script.MatchedText([]agent.Message{{Role: agent.RoleSystem, Content: "s"}}); ok {
		t.Error("system message matched")
	}
}

package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/langchain"
)

// fakeLLM is an llms.Model whose GenerateContent is a func receiving the
// applied call options.
type fakeLLM struct {
	generate func(ctx context.Context, msgs []llms.MessageContent, opts llms.CallOptions) (*llms.ContentResponse, error)
}

func (f *fakeLLM) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	return f.generate(ctx, msgs, o)
}

func (f *fakeLLM) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, f, prompt, options...)
}

func choice(c *llms.ContentChoice) *llms.ContentResponse {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{c}}
}

func ptr[T any](v T) *T { return &v }

// describe renders converted messages compactly for comparison.
func describe(msgs []llms.MessageContent) []string {
	var out []string
	for _, m := range msgs {
		var parts []string
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				parts = append(parts, "text:"+p.Text)
			case llms.ToolCall:
				parts = append(parts, fmt.Sprintf("call:%s:%s:%s", p.ID, p.FunctionCall.Name, p.FunctionCall.Arguments))
			case llms.ToolCallResponse:
				parts = append(parts, fmt.Sprintf("result:%s:%s:%s", p.ToolCallID, p.Name, p.Content))
			default:
				parts = append(parts, fmt.Sprintf("%T", p))
			}
		}
		out = append(out, string(m.Role)+" "+strings.Join(parts, " | "))
	}
	return out
}

var conversation = []agent.Message{
	{Role: agent.RoleSystem, Content: "sys"},
	{Role: agent.RoleUser, Content: "task"},
	{Role: agent.RoleAssistant, Content: "checking", Reasoning: "hmm", ToolCalls: []agent.ToolCall{
		{ID: "c1", Name: "compile", Arguments: json.RawMessage(`{"code":"x"}`)},
		{ID: "c2", Name: "run"},
	}},
	{Role: agent.RoleTool, ToolCallID: "c1", Name: "compile", Content: "ok"},
	{Role: agent.RoleTool, ToolCallID: "c2", Name: "run", Content: "42"},
	{Role: agent.RoleUser, Content: "go on"},
}

func TestMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		split bool
		want  []string
	}{
		{name: "together", want: []string{
			"system text:sys",
			"human text:task",
			`ai text:checking | call:c1:compile:{"code":"x"} | call:c2:run:{}`,
			"tool result:c1:compile:ok",
			"tool result:c2:run:42",
			"human text:go on",
		}},
		{name: "split", split: true, want: []string{
			"system text:sys",
			"human text:task",
			"ai text:checking",
			`ai call:c1:compile:{"code":"x"}`,
			"ai call:c2:run:{}",
			"tool result:c1:compile:ok",
			"tool result:c2:run:42",
			"human text:go on",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := langchain.Messages(conversation, tt.split)
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); !reflect.DeepEqual(d, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(d, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	if _, err := langchain.Messages([]agent.Message{{Role: "narrator"}}, false); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestCallOptions(t *testing.T) {
	t.Parallel()
	var got llms.CallOptions
	llm := &fakeLLM{generate: func(_ context.Context, _ []llms.MessageContent, o llms.CallOptions) (*llms.ContentResponse, error) {
		got = o
		return choice(&llms.ContentChoice{Content: "hi"}), nil
	}}
	m := langchain.New(llm, "ep", langchain.Options{CallOptions: []llms.CallOption{llms.WithModel("claude-x")}})
	_, err := m.Chat(context.Background(), agent.Request{
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}},
		Tools: []agent.ToolSpec{
			{Name: "compile", Description: "compiles", Parameters: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`)},
			{Name: "noargs"},
		},
		Sampling: agent.Sampling{Temperature: ptr(0.7), TopP: ptr(0.9), MaxTokens: 512, Seed: ptr(7)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "claude-x" || got.Temperature != 0.7 || got.TopP != 0.9 || got.MaxTokens != 512 || got.Seed != 7 {
		t.Errorf("options %+v", got)
	}
	if len(got.Tools) != 2 || got.Tools[0].Type != "function" || got.Tools[0].Function.Name != "compile" {
		t.Fatalf("tools %+v", got.Tools)
	}
	params, ok := got.Tools[0].Function.Parameters.(map[string]any)
	if !ok || params["properties"].(map[string]any)["code"] == nil {
		t.Errorf("parameters %#v, want the schema as a map", got.Tools[0].Function.Parameters)
	}
	if p := got.Tools[1].Function.Parameters.(map[string]any); p["type"] != "object" {
		t.Errorf("empty parameters became %#v, want an empty object schema", p)
	}

	// Unset sampling sets nothing.
	_, err = m.Chat(context.Background(), agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}})
	if err != nil || got.Temperature != 0 || got.TopP != 0 || got.MaxTokens != 0 || got.Tools != nil {
		t.Errorf("err %v, options %+v", err, got)
	}
	// Bad tool parameters are a bad request, not a provider call.
	_, err = m.Chat(context.Background(), agent.Request{Tools: []agent.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[`)}}})
	if agent.KindOf(err) != agent.KindBadRequest {
		t.Errorf("err %v, want bad_request", err)
	}
}

func TestResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		choice        *llms.ContentChoice
		wantContent   string
		wantReasoning string
		wantCalls     string
	}{
		{
			name:        "text",
			choice:      &llms.ContentChoice{Content: "done", StopReason: "stop"},
			wantContent: "done",
		},
		{
			name:          "reasoning field",
			choice:        &llms.ContentChoice{Content: "a", ReasoningContent: "thought"},
			wantContent:   "a",
			wantReasoning: "thought",
		},
		{
			name:          "thinking in generation info (anthropic)",
			choice:        &llms.ContentChoice{Content: "a", GenerationInfo: map[string]any{"ThinkingContent": "deep"}},
			wantContent:   "a",
			wantReasoning: "deep",
		},
		{
			name: "tool calls",
			choice: &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				{ID: "x1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "compile", Arguments: `{"code":"y"}`}},
				{ID: "x2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "run", Arguments: ""}},
				{ID: "x3", Type: "function", FunctionCall: &llms.FunctionCall{Name: "bad", Arguments: `{"code":`}},
			}},
			wantCalls: `x1 compile {"code":"y"}; x2 run {}; x3 bad "{\"code\":"`,
		},
		{
			name:      "legacy function call",
			choice:    &llms.ContentChoice{FuncCall: &llms.FunctionCall{Name: "run", Arguments: `{}`}},
			wantCalls: ` run {}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llm := &fakeLLM{generate: func(context.Context, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
				return choice(tt.choice), nil
			}}
			resp, err := langchain.New(llm, "ep", langchain.Options{}).Chat(context.Background(),
				agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}})
			if err != nil {
				t.Fatal(err)
			}
			var calls []string
			for _, c := range resp.Message.ToolCalls {
				calls = append(calls, fmt.Sprintf("%s %s %s", c.ID, c.Name, c.Arguments))
			}
			msg := resp.Message
			if msg.Role != agent.RoleAssistant || msg.Content != tt.wantContent || msg.Reasoning != tt.wantReasoning ||
				strings.Join(calls, "; ") != tt.wantCalls || resp.FinishReason != tt.choice.StopReason || resp.Model != "ep" {
				t.Errorf("resp %+v, calls %q", resp, strings.Join(calls, "; "))
			}
			if _, err := json.Marshal(resp); err != nil {
				t.Errorf("response does not marshal: %v", err)
			}
		})
	}
}

type mistralUsage struct { // shaped like the Mistral SDK's UsageInfo
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func TestUsage(t *testing.T) {
	t.Parallel()
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: strings.Repeat("x", 400)}}}
	plain := agent.Message{Content: strings.Repeat("y", 80)}
	thinking := agent.Message{Content: strings.Repeat("y", 80), Reasoning: strings.Repeat("z", 40)}
	S, E := agent.CountServer, agent.CountEstimate
	tests := []struct {
		name    string
		info    map[string]any
		msg     agent.Message
		p, c, r int
		ps, cs  agent.CountSource
		rs      agent.CountSource
	}{
		{name: "none: estimates", msg: plain, p: 100, c: 20, r: 0, ps: E, cs: E, rs: E},
		{name: "openai keys", msg: thinking,
			info: map[string]any{"PromptTokens": 120, "CompletionTokens": 50, "ReasoningTokens": 30},
			p:    120, c: 50, r: 30, ps: S, cs: S, rs: S},
		{name: "openai zero reasoning, no reasoning text", msg: plain,
			info: map[string]any{"PromptTokens": 120, "CompletionTokens": 50, "ReasoningTokens": 0},
			p:    120, c: 50, r: 0, ps: S, cs: S, rs: S},
		{name: "vLLM: reasoning text but zero count", msg: thinking,
			info: map[string]any{"PromptTokens": 120, "CompletionTokens": 50, "ReasoningTokens": 0},
			p:    120, c: 50, r: 10, ps: S, cs: S, rs: E},
		{name: "streaming without usage: zeros", msg: plain,
			info: map[string]any{"PromptTokens": 0, "CompletionTokens": 0},
			p:    100, c: 20, r: 0, ps: E, cs: E, rs: E},
		{name: "anthropic", msg: thinking,
			info: map[string]any{"InputTokens": 130, "OutputTokens": 70, "ThinkingContent": "z"},
			p:    130, c: 70, r: 10, ps: S, cs: S, rs: E},
		{name: "google int32, ThinkingTokens 0 not trusted", msg: plain,
			info: map[string]any{"input_tokens": int32(90), "output_tokens": int32(15), "ThinkingTokens": 0},
			p:    90, c: 15, r: 0, ps: S, cs: S, rs: E},
		{name: "ThinkingTokens above zero", msg: thinking,
			info: map[string]any{"input_tokens": 90, "output_tokens": 15, "ThinkingTokens": 12},
			p:    90, c: 15, r: 12, ps: S, cs: S, rs: S},
		{name: "bedrock float64", msg: plain,
			info: map[string]any{"input_tokens": float64(77), "output_tokens": float64(11)},
			p:    77, c: 11, r: 0, ps: S, cs: S, rs: E},
		{name: "mistral nested struct", msg: plain,
			info: map[string]any{"usage": mistralUsage{PromptTokens: 60, CompletionTokens: 9, TotalTokens: 69}},
			p:    60, c: 9, r: 0, ps: S, cs: S, rs: E},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := langchain.Usage(tt.info, req, tt.msg)
			if u.PromptTokens != tt.p || u.CompletionTokens != tt.c || u.ReasoningTokens != tt.r ||
				u.PromptSource != tt.ps || u.CompletionSource != tt.cs || u.ReasoningSource != tt.rs || u.Calls != 1 {
				t.Errorf("usage %+v; want p=%d(%s) c=%d(%s) r=%d(%s)", u, tt.p, tt.ps, tt.c, tt.cs, tt.r, tt.rs)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		kind   agent.ErrorKind
		status int
	}{
		{"openai 429", errors.New("API returned unexpected status code: 429: slow down"), agent.KindRetryable, 429},
		{"openai 503", errors.New("API returned unexpected status code: 503"), agent.KindRetryable, 503},
		{"openai 401", errors.New("API returned unexpected status code: 401: bad key"), agent.KindAuth, 401},
		{"openai 404", errors.New("API returned unexpected status code: 404: model x does not exist"), agent.KindModelNotFound, 404},
		{"openai 400", errors.New("API returned unexpected status code: 400: context too long"), agent.KindBadRequest, 400},
		{"google", errors.New("googleapi: Error 429: Resource has been exhausted"), agent.KindRetryable, 429},
		{"aws", errors.New("operation error Bedrock Runtime: InvokeModel, https response error StatusCode: 403, RequestID: x"), agent.KindAuth, 403},
		{"llms.Error rate limit", llms.NewError(llms.ErrCodeRateLimit, "anthropic", "slow"), agent.KindRetryable, 0},
		{"llms.Error token limit", llms.NewError(llms.ErrCodeTokenLimit, "anthropic", "long"), agent.KindBadRequest, 0},
		{"pattern: unauthorized", errors.New("unauthorized: invalid api key"), agent.KindAuth, 0},
		{"network", errors.New("network error: failed to reach API server"), agent.KindRetryable, 0},
		{"unknown", errors.New("something odd"), agent.KindBadResponse, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			llm := &fakeLLM{generate: func(context.Context, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
				return nil, tt.err
			}}
			_, err := langchain.New(llm, "ep", langchain.Options{}).Chat(context.Background(), agent.Request{})
			var e *agent.Error
			if !errors.As(err, &e) || e.Kind != tt.kind || e.Status != tt.status || e.Endpoint != "ep" || !errors.Is(err, tt.err) {
				t.Errorf("err %v (%#v), want kind %s status %d wrapping the cause", err, e, tt.kind, tt.status)
			}
		})
	}

	t.Run("no choices", func(t *testing.T) {
		t.Parallel()
		llm := &fakeLLM{generate: func(context.Context, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
			return &llms.ContentResponse{}, nil
		}}
		_, err := langchain.New(llm, "ep", langchain.Options{}).Chat(context.Background(), agent.Request{})
		if agent.KindOf(err) != agent.KindBadResponse {
			t.Errorf("err %v, want bad_response", err)
		}
	})
	t.Run("context cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		llm := &fakeLLM{generate: func(context.Context, []llms.MessageContent, llms.CallOptions) (*llms.ContentResponse, error) {
			cancel()
			return nil, errors.New("request cancelled") // langchaingo's openai hides the cause
		}}
		_, err := langchain.New(llm, "ep", langchain.Options{}).Chat(ctx, agent.Request{})
		if !errors.Is(err, context.Canceled) || agent.Retryable(err) {
			t.Errorf("err %v, want context.Canceled, not retryable", err)
		}
	})
}

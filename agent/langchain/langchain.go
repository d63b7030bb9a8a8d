// Package langchain adapts a langchaingo llms.Model to agent.Model, for the
// providers kiln has no adapter of its own for (Anthropic, Google AI,
// Mistral, Bedrock, ...). The caller builds the provider (in cmd) and hands it
// over; this package maps messages, tool calls, tools, sampling, usage and
// errors.
//
// Usage comes from the provider's GenerationInfo when it has counts there
// (OpenAI: PromptTokens/CompletionTokens/ReasoningTokens; Anthropic:
// InputTokens/OutputTokens; Google AI and Bedrock: input_tokens/output_tokens;
// Mistral: a nested "usage" struct), marked CountServer; any count missing
// (or zero while there is text to count) is estimated from text length and
// marked CountEstimate. CompletionTokens includes reasoning tokens, as the
// providers report it.
//
// Errors become *agent.Error: an HTTP status found in the message decides the
// kind (429 and 5xx retryable, 401/403 auth, 404 model not found, other 4xx
// bad request); otherwise langchaingo's error codes (llms.Error, or its
// message patterns) do; network failures are retryable and anything else is
// bad_response (retryable). langchaingo gives no Retry-After.
package langchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/kiln-dev/kiln/agent"
)

// Options tunes the adapter.
type Options struct {
	// CallOptions are passed on every call, before the ones built from the
	// request (for example llms.WithModel).
	CallOptions []llms.CallOption
	// SplitAssistantParts sends an assistant message's text and each of its
	// tool calls as separate assistant messages. Set it for providers that
	// read only the first part of an assistant message (langchaingo's
	// anthropic provider, whose API merges consecutive same-role messages);
	// leave it off for OpenAI-style APIs, which need the tool calls together.
	SplitAssistantParts bool
}

// Model is an agent.Model over a langchaingo llms.Model. It is safe for
// concurrent use when the wrapped model is (langchaingo's providers are).
type Model struct {
	llm  llms.Model
	name string
	opts Options
}

var _ agent.Model = (*Model)(nil)

// New returns a Model calling llm. name (an endpoint or model name) labels
// errors and is reported as the model name when the provider reports none.
func New(llm llms.Model, name string, opts Options) *Model {
	return &Model{llm: llm, name: name, opts: opts}
}

// Chat sends req through the wrapped model.
func (m *Model) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	start := time.Now()
	msgs, err := Messages(req.Messages, m.opts.SplitAssistantParts)
	if err != nil {
		return nil, m.fail(agent.KindBadRequest, 0, err)
	}
	callOpts := append([]llms.CallOption(nil), m.opts.CallOptions...)
	more, err := CallOptions(req)
	if err != nil {
		return nil, m.fail(agent.KindBadRequest, 0, err)
	}
	callOpts = append(callOpts, more...)

	out, err := m.llm.GenerateContent(ctx, msgs, callOpts...)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("langchain %s: %w (%v)", m.name, cerr, err)
		}
		return nil, m.classify(err)
	}
	if out == nil || len(out.Choices) == 0 || out.Choices[0] == nil {
		return nil, m.fail(agent.KindBadResponse, 0, errors.New("no choices in the response"))
	}
	choice := out.Choices[0]
	msg := agent.Message{Role: agent.RoleAssistant, Content: choice.Content, Reasoning: choice.ReasoningContent}
	if msg.Reasoning == "" {
		if s, ok := choice.GenerationInfo["ThinkingContent"].(string); ok {
			msg.Reasoning = s
		}
	}
	calls := choice.ToolCalls
	if len(calls) == 0 && choice.FuncCall != nil {
		calls = []llms.ToolCall{{Type: "function", FunctionCall: choice.FuncCall}}
	}
	for _, tc := range calls {
		if tc.FunctionCall == nil {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{
			ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: arguments(tc.FunctionCall.Arguments),
		})
	}
	u := Usage(choice.GenerationInfo, req, msg)
	u.Latency = time.Since(start)
	model := m.name
	if s, ok := choice.GenerationInfo["model"].(string); ok && s != "" {
		model = s
	}
	return &agent.Response{Message: msg, Usage: u, FinishReason: choice.StopReason, Model: model}, nil
}

// Messages maps a conversation to langchaingo's form: system, human, ai (text
// and tool calls) and tool (one ToolCallResponse each). Reasoning is not sent
// back. With split, an assistant message's text and tool calls become one
// message each (see Options.SplitAssistantParts).
func Messages(msgs []agent.Message, split bool) ([]llms.MessageContent, error) {
	out := make([]llms.MessageContent, 0, len(msgs))
	for i, m := range msgs {
		switch m.Role {
		case agent.RoleSystem:
			out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, m.Content))
		case agent.RoleUser:
			out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, m.Content))
		case agent.RoleAssistant:
			var parts []llms.ContentPart
			if m.Content != "" || len(m.ToolCalls) == 0 {
				parts = append(parts, llms.TextPart(m.Content))
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				parts = append(parts, llms.ToolCall{ID: tc.ID, Type: "function",
					FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: args}})
			}
			if !split {
				out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
				continue
			}
			for _, p := range parts {
				out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{p}})
			}
		case agent.RoleTool:
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: m.ToolCallID, Name: m.Name, Content: m.Content},
			}})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// CallOptions maps req's tools and sampling to langchaingo call options.
// Unset sampling fields set no option.
func CallOptions(req agent.Request) ([]llms.CallOption, error) {
	var opts []llms.CallOption
	s := req.Sampling
	if s.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*s.Temperature))
	}
	if s.TopP != nil {
		opts = append(opts, llms.WithTopP(*s.TopP))
	}
	if s.MaxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(s.MaxTokens))
	}
	if s.Seed != nil {
		opts = append(opts, llms.WithSeed(*s.Seed))
	}
	if len(req.Tools) > 0 {
		ts := make([]llms.Tool, 0, len(req.Tools))
		for _, t := range req.Tools {
			params := map[string]any{"type": "object", "properties": map[string]any{}}
			if len(t.Parameters) > 0 {
				params = nil
				if err := json.Unmarshal(t.Parameters, &params); err != nil {
					return nil, fmt.Errorf("tool %s: parameters: %w", t.Name, err)
				}
			}
			ts = append(ts, llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
				Name: t.Name, Description: t.Description, Parameters: params,
			}})
		}
		opts = append(opts, llms.WithTools(ts))
	}
	return opts, nil
}

// arguments turns a provider's argument string into JSON, quoting it as a
// JSON string when it is not valid JSON (the loop then reports bad arguments
// and transcripts still marshal).
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// Keys providers use in GenerationInfo, most specific first.
var (
	promptKeys     = []string{"PromptTokens", "InputTokens", "input_tokens", "prompt_tokens"}
	completionKeys = []string{"CompletionTokens", "OutputTokens", "output_tokens", "completion_tokens"}
	// Keys whose zero is a real zero (OpenAI's usage details). Google's
	// "ThinkingTokens" is always 0 ("not tracked") and so is trusted only
	// above zero.
	reasoningKeys     = []string{"ReasoningTokens", "CompletionReasoningTokens", "reasoning_tokens"}
	reasoningLaxKeys  = []string{"ThinkingTokens"}
	nestedUsageKeys   = []string{"usage", "Usage"}
	nestedPromptKeys  = []string{"prompt_tokens", "input_tokens", "PromptTokens", "InputTokens"}
	nestedOutputKeys  = []string{"completion_tokens", "output_tokens", "CompletionTokens", "OutputTokens"}
	nestedReasonKeys  = []string{"reasoning_tokens", "ReasoningTokens"}
	reasoningDetailed = "completion_tokens_details"
)

// Usage reads token counts from a choice's GenerationInfo, estimating what
// is missing (see the package doc).
func Usage(info map[string]any, req agent.Request, msg agent.Message) agent.Usage {
	u := agent.EstimateUsage(req, msg)
	prompt, hasPrompt := count(info, promptKeys)
	completion, hasCompletion := count(info, completionKeys)
	reasoning, hasReasoning := count(info, reasoningKeys)
	if !hasReasoning {
		if n, ok := count(info, reasoningLaxKeys); ok && n > 0 {
			reasoning, hasReasoning = n, true
		}
	}
	if nested := nestedUsage(info); nested != nil {
		if !hasPrompt {
			prompt, hasPrompt = count(nested, nestedPromptKeys)
		}
		if !hasCompletion {
			completion, hasCompletion = count(nested, nestedOutputKeys)
		}
		if !hasReasoning {
			reasoning, hasReasoning = count(nested, nestedReasonKeys)
			if d, ok := nested[reasoningDetailed].(map[string]any); ok && !hasReasoning {
				reasoning, hasReasoning = count(d, nestedReasonKeys)
			}
		}
	}
	// A zero count while there is text is a provider that did not count.
	if hasPrompt && prompt > 0 {
		u.PromptTokens, u.PromptSource = prompt, agent.CountServer
	}
	if hasCompletion && (completion > 0 || u.CompletionTokens == 0) {
		u.CompletionTokens, u.CompletionSource = completion, agent.CountServer
	}
	if hasReasoning && (reasoning > 0 || msg.Reasoning == "") {
		u.ReasoningTokens, u.ReasoningSource = reasoning, agent.CountServer
	}
	return u
}

// nestedUsage returns a nested usage value (Mistral's struct) as a map.
func nestedUsage(info map[string]any) map[string]any {
	for _, k := range nestedUsageKeys {
		v, ok := info[k]
		if !ok || v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m != nil {
			return m
		}
	}
	return nil
}

// count returns the first of keys holding a non-negative number.
func count(info map[string]any, keys []string) (int, bool) {
	for _, k := range keys {
		if n, ok := toInt(info[k]); ok && n >= 0 {
			return n, true
		}
	}
	return 0, false
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case uint:
		return int(n), true
	case uint32:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), true
	case float32:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	case *int:
		if n != nil {
			return *n, true
		}
	}
	return 0, false
}

// statusRE finds an HTTP status in provider error texts: "status code: 429"
// (OpenAI, Anthropic), "StatusCode: 503" (AWS), "Error 404:" (Google),
// "HTTP 500".
var statusRE = regexp.MustCompile(`(?i)\b(?:status[ _]?(?:code)?|http|error)[:= ]*([1-5]\d\d)\b`)

// classify maps a provider error to an *agent.Error.
func (m *Model) classify(err error) error {
	status := 0
	if sm := statusRE.FindStringSubmatch(err.Error()); sm != nil {
		status, _ = strconv.Atoi(sm[1])
	}
	switch {
	case status == 429 || status >= 500:
		return m.fail(agent.KindRetryable, status, err)
	case status == 401 || status == 403:
		return m.fail(agent.KindAuth, status, err)
	case status == 404:
		return m.fail(agent.KindModelNotFound, status, err)
	case status == 408:
		return m.fail(agent.KindRetryable, status, err)
	case status >= 400:
		return m.fail(agent.KindBadRequest, status, err)
	}
	code := llms.ErrCodeUnknown
	var le *llms.Error
	if errors.As(err, &le) {
		code = le.Code
	} else if errors.As(llms.NewErrorMapper(m.name).WrapError(err), &le) {
		code = le.Code
	}
	switch code {
	case llms.ErrCodeAuthentication:
		return m.fail(agent.KindAuth, 0, err)
	case llms.ErrCodeResourceNotFound:
		return m.fail(agent.KindModelNotFound, 0, err)
	case llms.ErrCodeInvalidRequest, llms.ErrCodeTokenLimit, llms.ErrCodeContentFilter, llms.ErrCodeNotImplemented:
		return m.fail(agent.KindBadRequest, 0, err)
	case llms.ErrCodeRateLimit, llms.ErrCodeQuotaExceeded, llms.ErrCodeProviderUnavailable,
		llms.ErrCodeTimeout, llms.ErrCodeCanceled:
		return m.fail(agent.KindRetryable, 0, err)
	}
	s := strings.ToLower(err.Error())
	for _, p := range []string{"network", "connection", "connect:", "eof", "reset by peer", "broken pipe", "no such host"} {
		if strings.Contains(s, p) {
			return m.fail(agent.KindRetryable, 0, err)
		}
	}
	return m.fail(agent.KindBadResponse, 0, err)
}

func (m *Model) fail(kind agent.ErrorKind, status int, err error) *agent.Error {
	return &agent.Error{Kind: kind, Endpoint: m.name, Model: m.name, Status: status, Err: err}
}

// Package agent drives language models through attempts: a small Model
// interface of our own with typed usage (prompt, completion and reasoning
// tokens, each with where its count came from), adapters for concrete servers
// (agent/openai, agent/ollama, agent/langchain, agent/script), retries with
// jittered backoff, an endpoint pool with per-endpoint concurrency limits and
// failover, and the attempt loop: tool calls (native or a plain-text protocol),
// answer extraction, verification and repair turns.
package agent

import (
	"context"
	"encoding/json"
	"time"
)

// Model is one chat-completion endpoint. Implementations must honour ctx,
// must never return a half-read stream as a whole answer (return an error of
// kind ErrTruncated instead), and must be safe for concurrent use.
type Model interface {
	Chat(ctx context.Context, req Request) (*Response, error)
}

// Role of a message in a conversation.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Reasoning is the model's thinking text when the server returns it
	// separately (vLLM "reasoning"/"reasoning_content", Ollama "thinking").
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON schema of the arguments object
}

// Sampling holds the generation parameters. Nil pointers mean "server default".
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        *int     `json:"seed,omitempty"`
}

// Request is one chat call.
type Request struct {
	Messages []Message
	Tools    []ToolSpec
	Sampling Sampling
}

// CountSource says how a token count was obtained.
type CountSource string

const (
	CountNone      CountSource = ""          // not known
	CountServer    CountSource = "server"    // reported by the server
	CountTokenizer CountSource = "tokenizer" // counted with the model's tokenizer
	CountEstimate  CountSource = "estimate"  // estimated from text length
)

// Usage is the typed cost of one call (or, summed, of one attempt).
type Usage struct {
	PromptTokens     int         `json:"prompt_tokens"`
	CompletionTokens int         `json:"completion_tokens"`
	ReasoningTokens  int         `json:"reasoning_tokens"`
	PromptSource     CountSource `json:"prompt_source,omitempty"`
	CompletionSource CountSource `json:"completion_source,omitempty"`
	ReasoningSource  CountSource `json:"reasoning_source,omitempty"`
	// Latency is the wall time of the call; TTFT the time to the first
	// streamed token (zero when the call did not stream).
	Latency time.Duration `json:"latency_ns"`
	TTFT    time.Duration `json:"ttft_ns"`
	Calls   int           `json:"calls"` // number of model calls summed in here
}

// Add sums u2 into u. Count sources keep the weakest source seen.
func (u *Usage) Add(u2 Usage) {
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.ReasoningTokens += u2.ReasoningTokens
	u.PromptSource = weaker(u.PromptSource, u2.PromptSource)
	u.CompletionSource = weaker(u.CompletionSource, u2.CompletionSource)
	u.ReasoningSource = weaker(u.ReasoningSource, u2.ReasoningSource)
	u.Latency += u2.Latency
	if u.TTFT == 0 {
		u.TTFT = u2.TTFT
	}
	u.Calls += u2.Calls
}

// weaker returns the less trustworthy of two count sources; an unset source
// takes the other.
func weaker(a, b CountSource) CountSource {
	rank := map[CountSource]int{CountServer: 3, CountTokenizer: 2, CountEstimate: 1}
	switch {
	case a == CountNone:
		return b
	case b == CountNone:
		return a
	case rank[b] < rank[a]:
		return b
	}
	return a
}

// Response is the model's reply to one Request.
type Response struct {
	Message      Message `json:"message"` // Role is RoleAssistant
	Usage        Usage   `json:"usage"`
	FinishReason string  `json:"finish_reason,omitempty"`
	Model        string  `json:"model,omitempty"` // model name the server reported
	// Endpoint is the name of the pool endpoint that served the call (set by
	// Pool; empty when the call did not go through one).
	Endpoint string `json:"endpoint,omitempty"`
	// Attempts is how many tries the call took (set by Retry; 1 is the first
	// try, 0 when the call did not go through Retry).
	Attempts int `json:"attempts,omitempty"`
}

package openai

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

// Streams below are as vLLM, llama.cpp server and OpenAI write them.

const vllmPlainStream = `data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[{"index":0,"delta":{"content":"movl"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[{"index":0,"delta":{"content":" $0, %eax\n"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[{"index":0,"delta":{"content":"ret"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}

data: {"id":"chatcmpl-7f3c","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen2.5-Coder-7B-Instruct","choices":[],"usage":{"prompt_tokens":31,"total_tokens":40,"completion_tokens":9,"prompt_tokens_details":null}}

data: [DONE]

`

// vLLM >= 0.11 with a reasoning parser: "reasoning", content null meanwhile.
const vllmReasoningStream = `data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":null,"reasoning":"The function returns"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":null,"reasoning":" its argument plus one."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"leal 1(%rdi), %eax\nret"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}

data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":50,"total_tokens":90,"completion_tokens":40,"prompt_tokens_details":null}}

data: [DONE]

`

// llama.cpp server (--reasoning-format deepseek): "reasoning_content", usage
// and timings in the finishing chunk.
const llamaCppReasoningStream = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1767225600,"id":"chatcmpl-Lc1","model":"gpt-oss-20b","system_fingerprint":"b6500-3a1c2d4e","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Need a loop"}}],"created":1767225600,"id":"chatcmpl-Lc1","model":"gpt-oss-20b","system_fingerprint":"b6500-3a1c2d4e","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":" over the array."}}],"created":1767225600,"id":"chatcmpl-Lc1","model":"gpt-oss-20b","system_fingerprint":"b6500-3a1c2d4e","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"xorl %eax, %eax"}}],"created":1767225600,"id":"chatcmpl-Lc1","model":"gpt-oss-20b","system_fingerprint":"b6500-3a1c2d4e","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"created":1767225600,"id":"chatcmpl-Lc1","model":"gpt-oss-20b","system_fingerprint":"b6500-3a1c2d4e","object":"chat.completion.chunk","usage":{"completion_tokens":17,"prompt_tokens":44,"total_tokens":61},"timings":{"prompt_n":44,"prompt_ms":21.3,"predicted_n":17,"predicted_ms":140.2}}

data: [DONE]

`

// vLLM with its compatibility shim sends the same text in both fields.
const bothFieldsStream = `data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"reasoning":"think","reasoning_content":"think"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"logprobs":null,"finish_reason":"stop"}]}

data: {"id":"chatcmpl-b","object":"chat.completion.chunk","created":1767225600,"model":"m","choices":[],"usage":{"prompt_tokens":5,"total_tokens":8,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":null}}}

data: [DONE]

`

// OpenAI: two parallel tool calls, arguments split over chunks, "usage":null
// on every chunk but the last, reasoning_tokens reported by the server.
const openAIToolStream = `data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_compile1","type":"function","function":{"name":"compile","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"sou"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"rce\": \"int ma"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"in(){}\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_run2","type":"function","function":{"name":"run_tests","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"cases\": [1"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":", 2]}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-Tc9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":96,"total_tokens":216,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":64,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

`

// A server that sends no usage at all, keep-alive comments and CRLF lines.
const noUsageStream = ": ping\r\n\r\n" +
	"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abcdefgh\"},\"finish_reason\":null}]}\r\n\r\n" +
	"event: message\r\n" +
	"data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\r\n\r\n" +
	"data: [DONE]\r\n\r\n"

const vllmNonStream = `{"id":"chatcmpl-ns","object":"chat.completion","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"message":{"role":"assistant","content":"ret","refusal":null,"annotations":null,"audio":null,"function_call":null,"tool_calls":[],"reasoning":"Nothing to compute."},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"service_tier":null,"system_fingerprint":null,"usage":{"prompt_tokens":12,"total_tokens":20,"completion_tokens":8,"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}`

const openAIToolNonStream = `{"id":"chatcmpl-Ns2","object":"chat.completion","created":1767225600,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"compile","arguments":"{\"source\":\"x\"}"}},{"id":"call_b","type":"function","function":{"name":"run_tests","arguments":"{}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":80,"completion_tokens":30,"total_tokens":110,"completion_tokens_details":{"reasoning_tokens":0}},"service_tier":"default","system_fingerprint":"fp_07871e2ad8"}`

// fakeServer records requests and answers with a handler.
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

// sse writes stream event by event, flushing after each, as servers do.
func sse(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		for _, ev := range strings.SplitAfter(stream, "\n\n") {
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

// sseBytewise writes stream one byte at a time, so lines span reads.
func sseBytewise(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(stream); i++ {
			_, _ = w.Write([]byte{stream[i]})
			w.(http.Flusher).Flush()
		}
	}
}

// sseCut writes stream and then drops the connection without ending the
// chunked body, like a server or proxy dying mid-answer.
func sseCut(stream string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

func jsonReply(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func newClient(t *testing.T, url string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{Name: "test", BaseURL: url + "/v1", Model: "Qwen/Qwen3-8B"}
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
	ok := Config{BaseURL: "http://localhost:8000/v1", Model: "m"}
	tests := []struct {
		name  string
		mod   func(*Config)
		field string // must appear in the error; "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"no base url", func(c *Config) { c.BaseURL = "" }, "BaseURL"},
		{"bad base url", func(c *Config) { c.BaseURL = "localhost:8000" }, "BaseURL"},
		{"no model", func(c *Config) { c.Model = "" }, "Model"},
		{"negative timeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
		{"extra body overrides model", func(c *Config) { c.ExtraBody = map[string]any{"model": "x"} }, "ExtraBody"},
		{"extra body not json", func(c *Config) { c.ExtraBody = map[string]any{"f": func() {}} }, "ExtraBody"},
		{"empty header name", func(c *Config) { c.Headers = map[string]string{"": "v"} }, "Headers"},
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
				if c.Name() != cfg.BaseURL {
					t.Errorf("Name() = %q, want BaseURL", c.Name())
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
		name          string
		handler       http.HandlerFunc
		stream        bool
		content       string
		reasoning     string
		finish        string
		model         string
		usage         agent.Usage // latency and TTFT checked separately
		wantTTFT      bool
		wantToolCalls []agent.ToolCall
	}{
		{
			name: "plain vllm stream with usage chunk", handler: sse(vllmPlainStream), stream: true,
			content: "movl $0, %eax\nret", finish: "stop", model: "Qwen/Qwen2.5-Coder-7B-Instruct",
			usage: agent.Usage{PromptTokens: 31, CompletionTokens: 9, PromptSource: agent.CountServer,
				CompletionSource: agent.CountServer, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "plain stream read byte by byte", handler: sseBytewise(vllmPlainStream), stream: true,
			content: "movl $0, %eax\nret", finish: "stop", model: "Qwen/Qwen2.5-Coder-7B-Instruct",
			usage: agent.Usage{PromptTokens: 31, CompletionTokens: 9, PromptSource: agent.CountServer,
				CompletionSource: agent.CountServer, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "vllm reasoning field", handler: sse(vllmReasoningStream), stream: true,
			content: "leal 1(%rdi), %eax\nret", reasoning: "The function returns its argument plus one.",
			finish: "stop", model: "Qwen/Qwen3-8B",
			usage: agent.Usage{PromptTokens: 50, CompletionTokens: 40, ReasoningTokens: 11,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "llama.cpp reasoning_content field", handler: sse(llamaCppReasoningStream), stream: true,
			content: "xorl %eax, %eax", reasoning: "Need a loop over the array.", finish: "stop", model: "gpt-oss-20b",
			usage: agent.Usage{PromptTokens: 44, CompletionTokens: 17, ReasoningTokens: 7,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "both reasoning fields are not doubled", handler: sse(bothFieldsStream), stream: true,
			content: "ok", reasoning: "think", finish: "stop", model: "m",
			usage: agent.Usage{PromptTokens: 5, CompletionTokens: 3, ReasoningTokens: 2,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "two parallel streamed tool calls", handler: sse(openAIToolStream), stream: true,
			finish: "tool_calls", model: "gpt-4o-2024-08-06",
			usage: agent.Usage{PromptTokens: 120, CompletionTokens: 96, ReasoningTokens: 64,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountServer, Calls: 1},
			wantTTFT: true,
			wantToolCalls: []agent.ToolCall{
				{ID: "call_compile1", Name: "compile", Arguments: json.RawMessage(`{"source": "int main(){}"}`)},
				{ID: "call_run2", Name: "run_tests", Arguments: json.RawMessage(`{"cases": [1, 2]}`)},
			},
		},
		{
			name: "no usage from server is estimated", handler: sse(noUsageStream), stream: true,
			content: "abcdefgh", finish: "length", model: "m",
			usage: agent.Usage{PromptTokens: 2, CompletionTokens: 2, PromptSource: agent.CountEstimate,
				CompletionSource: agent.CountEstimate, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "finish_reason without [DONE] is complete", stream: true,
			handler: sse(strings.TrimSuffix(vllmPlainStream, "data: [DONE]\n\n")),
			content: "movl $0, %eax\nret", finish: "stop", model: "Qwen/Qwen2.5-Coder-7B-Instruct",
			usage: agent.Usage{PromptTokens: 31, CompletionTokens: 9, PromptSource: agent.CountServer,
				CompletionSource: agent.CountServer, Calls: 1},
			wantTTFT: true,
		},
		{
			name: "non-streamed vllm answer with reasoning", handler: jsonReply(200, vllmNonStream),
			content: "ret", reasoning: "Nothing to compute.", finish: "stop", model: "Qwen/Qwen3-8B",
			usage: agent.Usage{PromptTokens: 12, CompletionTokens: 8, ReasoningTokens: 5,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
		},
		{
			name: "non-streamed tool calls", handler: jsonReply(200, openAIToolNonStream),
			finish: "tool_calls", model: "gpt-4o-2024-08-06",
			usage: agent.Usage{PromptTokens: 80, CompletionTokens: 30, PromptSource: agent.CountServer,
				CompletionSource: agent.CountServer, ReasoningSource: agent.CountServer, Calls: 1},
			wantToolCalls: []agent.ToolCall{
				{ID: "call_a", Name: "compile", Arguments: json.RawMessage(`{"source":"x"}`)},
				{ID: "call_b", Name: "run_tests", Arguments: json.RawMessage(`{}`)},
			},
		},
		{
			name: "stream requested but server answers JSON", handler: jsonReply(200, vllmNonStream), stream: true,
			content: "ret", reasoning: "Nothing to compute.", finish: "stop", model: "Qwen/Qwen3-8B",
			usage: agent.Usage{PromptTokens: 12, CompletionTokens: 8, ReasoningTokens: 5,
				PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
				ReasoningSource: agent.CountEstimate, Calls: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newClient(t, srv.URL, func(cfg *Config) { cfg.Stream = ptr(tt.stream) })
			resp, err := c.Chat(context.Background(), userReq("write f"))
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			m := resp.Message
			if m.Role != agent.RoleAssistant || m.Content != tt.content || m.Reasoning != tt.reasoning {
				t.Errorf("message = %+v, want content %q reasoning %q", m, tt.content, tt.reasoning)
			}
			if resp.FinishReason != tt.finish || resp.Model != tt.model {
				t.Errorf("finish %q model %q, want %q %q", resp.FinishReason, resp.Model, tt.finish, tt.model)
			}
			got := resp.Usage
			if got.Latency <= 0 {
				t.Errorf("latency %v, want > 0", got.Latency)
			}
			if tt.wantTTFT && (got.TTFT <= 0 || got.TTFT > got.Latency) {
				t.Errorf("TTFT %v (latency %v), want in (0, latency]", got.TTFT, got.Latency)
			}
			if !tt.wantTTFT && got.TTFT != 0 {
				t.Errorf("TTFT %v for a non-streamed call, want 0", got.TTFT)
			}
			got.Latency, got.TTFT = 0, 0
			if got != tt.usage {
				t.Errorf("usage = %+v\nwant    %+v", got, tt.usage)
			}
			if len(m.ToolCalls) != len(tt.wantToolCalls) {
				t.Fatalf("tool calls = %+v, want %+v", m.ToolCalls, tt.wantToolCalls)
			}
			for i, want := range tt.wantToolCalls {
				g := m.ToolCalls[i]
				if g.ID != want.ID || g.Name != want.Name || string(g.Arguments) != string(want.Arguments) {
					t.Errorf("tool call %d = {%s %s %s}, want {%s %s %s}", i, g.ID, g.Name, g.Arguments,
						want.ID, want.Name, want.Arguments)
				}
			}
		})
	}
}

func TestToolCallEdgeCases(t *testing.T) {
	t.Parallel()
	// No ids, no index (some servers), and arguments that are not JSON.
	const stream = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"compile","arguments":"{\"a\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":5,"function":{"name":"run","arguments":"not json"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":6,"function":{"name":"noargs"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	srv := serve(t, sse(stream))
	c := newClient(t, srv.URL, nil)
	resp, err := c.Chat(context.Background(), userReq("x"))
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 3 {
		t.Fatalf("tool calls = %+v, want 3", calls)
	}
	want := []struct{ name, args string }{{"compile", `{"a":1}`}, {"run", `"not json"`}, {"noargs", `{}`}}
	seen := map[string]bool{}
	for i, w := range want {
		if calls[i].Name != w.name || string(calls[i].Arguments) != w.args {
			t.Errorf("call %d = %s %s, want %s %s", i, calls[i].Name, calls[i].Arguments, w.name, w.args)
		}
		if !strings.HasPrefix(calls[i].ID, "call_") || seen[calls[i].ID] {
			t.Errorf("call %d id %q: want a fresh generated call_ id", i, calls[i].ID)
		}
		seen[calls[i].ID] = true
		if !json.Valid(calls[i].Arguments) {
			t.Errorf("call %d arguments %s are not valid JSON", i, calls[i].Arguments)
		}
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	srv := serve(t, sse(vllmPlainStream))
	c := newClient(t, srv.URL, func(cfg *Config) {
		cfg.APIKey = "sk-test"
		cfg.Headers = map[string]string{"X-Kiln-Run": "r1"}
		cfg.ExtraBody = map[string]any{"top_k": 20, "chat_template_kwargs": map[string]any{"enable_thinking": false}}
	})
	req := agent.Request{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Content: "You write x86-64 assembly."},
			{Role: agent.RoleUser, Content: "int f(int x){return x+1;}"},
			{Role: agent.RoleAssistant, Reasoning: "not sent back", ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "compile", Arguments: json.RawMessage(`{"source":"f: ret"}`)},
				{ID: "call_2", Name: "compile", Arguments: json.RawMessage(`"{broken"`)},
			}},
			{Role: agent.RoleTool, ToolCallID: "call_1", Name: "compile", Content: "ok"},
		},
		Tools: []agent.ToolSpec{{
			Name: "compile", Description: "Assemble a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"source":{"type":"string"}},"required":["source"]}`),
		}},
		Sampling: agent.Sampling{Temperature: ptr(0.0), TopP: ptr(0.95), MaxTokens: 512, Seed: ptr(7)},
	}
	if _, err := c.Chat(context.Background(), req); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	got := srv.last(t)
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path %q", got.Path)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer sk-test", "Accept": "text/event-stream",
		"Content-Type": "application/json", "X-Kiln-Run": "r1",
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	var body struct {
		Model         string           `json:"model"`
		Stream        bool             `json:"stream"`
		StreamOptions map[string]any   `json:"stream_options"`
		Temperature   *float64         `json:"temperature"`
		TopP          *float64         `json:"top_p"`
		MaxTokens     int              `json:"max_tokens"`
		Seed          *int             `json:"seed"`
		TopK          int              `json:"top_k"`
		Kwargs        map[string]any   `json:"chat_template_kwargs"`
		Tools         []map[string]any `json:"tools"`
		Messages      []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatalf("body %s: %v", got.Body, err)
	}
	if body.Model != "Qwen/Qwen3-8B" || !body.Stream || body.StreamOptions["include_usage"] != true {
		t.Errorf("model/stream/stream_options wrong: %s", got.Body)
	}
	if body.Temperature == nil || *body.Temperature != 0 {
		t.Errorf("temperature 0 must be sent explicitly: %s", got.Body)
	}
	if body.TopP == nil || *body.TopP != 0.95 || body.MaxTokens != 512 || body.Seed == nil || *body.Seed != 7 {
		t.Errorf("sampling wrong: %s", got.Body)
	}
	if body.TopK != 20 || body.Kwargs["enable_thinking"] != false {
		t.Errorf("extra body not merged: %s", got.Body)
	}
	if len(body.Tools) != 1 {
		t.Fatalf("tools: %s", got.Body)
	}
	fn, _ := body.Tools[0]["function"].(map[string]any)
	params, _ := fn["parameters"].(map[string]any)
	if body.Tools[0]["type"] != "function" || fn["name"] != "compile" || params["type"] != "object" {
		t.Errorf("tool wrong: %v", body.Tools[0])
	}
	if len(body.Messages) != 4 {
		t.Fatalf("messages: %s", got.Body)
	}
	asst := body.Messages[2]
	if _, ok := asst["reasoning_content"]; ok {
		t.Errorf("reasoning must not be sent back: %v", asst)
	}
	calls, _ := asst["tool_calls"].([]any)
	if len(calls) != 2 {
		t.Fatalf("assistant tool calls: %v", asst)
	}
	c0 := calls[0].(map[string]any)
	f0 := c0["function"].(map[string]any)
	if c0["id"] != "call_1" || c0["type"] != "function" || f0["name"] != "compile" || f0["arguments"] != `{"source":"f: ret"}` {
		t.Errorf("tool call 0 = %v", c0)
	}
	if f1 := calls[1].(map[string]any)["function"].(map[string]any); f1["arguments"] != "{broken" {
		t.Errorf("unparsable arguments must go back as the model wrote them, got %v", f1["arguments"])
	}
	tool := body.Messages[3]
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != "ok" {
		t.Errorf("tool message = %v", tool)
	}
}

func TestRequestBodyNonStreamAndDefaults(t *testing.T) {
	t.Parallel()
	srv := serve(t, jsonReply(200, vllmNonStream))
	c := newClient(t, srv.URL, func(cfg *Config) { cfg.Stream = ptr(false) })
	if _, err := c.Chat(context.Background(), userReq("hi")); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	got := srv.last(t)
	var body map[string]any
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["stream"] != false {
		t.Errorf("stream = %v, want false", body["stream"])
	}
	for _, k := range []string{"stream_options", "temperature", "top_p", "seed", "max_tokens", "tools"} {
		if _, ok := body[k]; ok {
			t.Errorf("unset %s was sent: %s", k, got.Body)
		}
	}
	if got.Header.Get("Authorization") != "" || got.Header.Get("Accept") != "application/json" {
		t.Errorf("headers = %v", got.Header)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		stream    bool
		kind      agent.ErrorKind
		status    int
		retryMin  time.Duration
		retryMax  time.Duration
		errSubstr string
	}{
		{
			name: "429 with Retry-After seconds", stream: true,
			handler: jsonReply(429, `{"error":{"message":"Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "7"),
			kind:    agent.KindRetryable, status: 429, retryMin: 7 * time.Second, retryMax: 7 * time.Second, errSubstr: "Rate limit",
		},
		{
			name: "503 with Retry-After date", stream: true,
			handler: jsonReply(503, `{"error":{"message":"overloaded","type":"server_error","param":null,"code":503}}`, "Retry-After", future),
			kind:    agent.KindRetryable, status: 503, retryMin: 20 * time.Second, retryMax: 31 * time.Second, errSubstr: "overloaded",
		},
		{
			name: "500 from vllm", stream: true,
			handler: jsonReply(500, `{"error":{"message":"EngineCore encountered an issue. See stack trace (above) for the root cause.","type":"InternalServerError","param":null,"code":500}}`),
			kind:    agent.KindRetryable, status: 500, errSubstr: "EngineCore",
		},
		{
			name: "502 plain text from a proxy", stream: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(502)
				_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
			},
			kind: agent.KindRetryable, status: 502, errSubstr: "502 Bad Gateway",
		},
		{
			name: "401 bad key", stream: true,
			handler: jsonReply(401, `{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			kind:    agent.KindAuth, status: 401, errSubstr: "Incorrect API key",
		},
		{
			name: "403", stream: false,
			handler: jsonReply(403, `{"error":{"message":"Project does not have access to model","type":"invalid_request_error","param":null,"code":"model_not_found"}}`),
			kind:    agent.KindAuth, status: 403,
		},
		{
			name: "404 vllm model does not exist", stream: true,
			handler: jsonReply(404, "{\"error\":{\"message\":\"The model `Qwen/Qwen3-8B` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}}"),
			kind:    agent.KindModelNotFound, status: 404, errSubstr: `model "Qwen/Qwen3-8B" is not served`,
		},
		{
			name: "404 older vllm flat error", stream: true,
			handler: jsonReply(404, "{\"object\":\"error\",\"message\":\"The model `Qwen/Qwen3-8B` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}"),
			kind:    agent.KindModelNotFound, status: 404, errSubstr: "does not exist",
		},
		{
			name: "404 openai model_not_found", stream: false,
			handler: jsonReply(404, "{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}"),
			kind:    agent.KindModelNotFound, status: 404, errSubstr: "Qwen/Qwen3-8B",
		},
		{
			name: "404 wrong path", stream: true,
			handler: jsonReply(404, `{"detail":"Not Found"}`),
			kind:    agent.KindBadRequest, status: 404, errSubstr: "BaseURL",
		},
		{
			name: "400 context too long", stream: true,
			handler: jsonReply(400, `{"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}}`),
			kind:    agent.KindBadRequest, status: 400, errSubstr: "maximum context length",
		},
		{
			name: "stream dropped mid-answer", stream: true,
			handler: sseCut(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:3], "")),
			kind:    agent.KindTruncated, status: 200,
		},
		{
			name: "stream dropped mid-line", stream: true,
			handler: sseCut(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:2], "") + `data: {"id":"chatcmpl-7f3c","object":"chat.comp`),
			kind:    agent.KindTruncated, status: 200,
		},
		{
			name: "stream ends cleanly without [DONE] or finish_reason", stream: true,
			handler: sse(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:3], "")),
			kind:    agent.KindTruncated, status: 200, errSubstr: "without [DONE]",
		},
		{
			name: "empty 200 stream", stream: true, handler: sse(""),
			kind: agent.KindTruncated, status: 200,
		},
		{
			name: "200 with an HTML page, not an event stream", stream: true,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = io.WriteString(w, "<!DOCTYPE html>\n<html>\n<body>Please log in to the proxy.</body>\n</html>\n")
			},
			kind: agent.KindBadResponse, status: 200, errSubstr: "not an event stream",
		},
		{
			name: "[DONE] without any choice", stream: true, handler: sse("data: [DONE]\n\n"),
			kind: agent.KindBadResponse, status: 200,
		},
		{
			name: "garbage JSON chunk", stream: true,
			handler: sse(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:2], "") + "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\ndata: [DONE]\n\n"),
			kind:    agent.KindBadResponse, status: 200, errSubstr: "decode stream chunk",
		},
		{
			name: "error event inside the stream", stream: true,
			handler: sse(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:2], "") + `data: {"error":{"message":"engine dead","type":"InternalServerError","param":null,"code":500}}` + "\n\n"),
			kind:    agent.KindRetryable, status: 500, errSubstr: "engine dead",
		},
		{
			name: "older vllm flat error event inside the stream", stream: true,
			handler: sse(strings.Join(strings.SplitAfter(vllmPlainStream, "\n\n")[:2], "") + `data: {"object":"error","message":"out of KV cache","type":"InternalServerError","param":null,"code":503}` + "\n\n"),
			kind:    agent.KindRetryable, status: 503, errSubstr: "out of KV cache",
		},
		{
			name: "garbage non-streamed body", stream: false,
			handler: jsonReply(200, `{"id":"x","choices":[{"message":`),
			kind:    agent.KindBadResponse, status: 200,
		},
		{
			name: "non-streamed body without choices", stream: false,
			handler: jsonReply(200, `{"id":"x","object":"chat.completion","choices":[]}`),
			kind:    agent.KindBadResponse, status: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newClient(t, srv.URL, func(cfg *Config) { cfg.Stream = ptr(tt.stream) })
			resp, err := c.Chat(context.Background(), userReq("x"))
			if resp != nil {
				t.Errorf("got a response %+v alongside the error: partial answers must never be returned", resp)
			}
			var ae *agent.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T) is not *agent.Error", err, err)
			}
			if ae.Kind != tt.kind || ae.Status != tt.status {
				t.Errorf("kind %s status %d, want %s %d (err: %v)", ae.Kind, ae.Status, tt.kind, tt.status, err)
			}
			if ae.Endpoint != "test" || ae.Model != "Qwen/Qwen3-8B" {
				t.Errorf("endpoint %q model %q", ae.Endpoint, ae.Model)
			}
			if ae.RetryIn < tt.retryMin || (tt.retryMax > 0 && ae.RetryIn > tt.retryMax) || (tt.retryMax == 0 && ae.RetryIn != 0) {
				t.Errorf("RetryIn %v, want in [%v, %v]", ae.RetryIn, tt.retryMin, tt.retryMax)
			}
			if !strings.Contains(err.Error(), tt.errSubstr) {
				t.Errorf("error %q does not contain %q", err, tt.errSubstr)
			}
		})
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

// hang sends one chunk and then waits until the client goes away.
func hang(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, strings.SplitAfter(vllmPlainStream, "\n\n")[1])
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
	if agent.KindOf(err) != "" || agent.Retryable(err) {
		t.Errorf("cancellation must not be an *agent.Error: kind %q", agent.KindOf(err))
	}
}

func TestCallTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	srv := serve(t, hang(release))
	c := newClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 150 * time.Millisecond })
	start := time.Now()
	_, err := c.Chat(context.Background(), userReq("x"))
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("Chat returned after %v", elapsed)
	}
	if agent.KindOf(err) != agent.KindRetryable || !strings.Contains(err.Error(), "timed out") ||
		!errors.Is(err, agent.ErrCallTimeout) || agent.FaultClass(err) != agent.FaultTimeout {
		t.Fatalf("err = %v, want retryable timeout", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	srv := serve(t, sse(openAIToolStream))
	c := newClient(t, srv.URL, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			resp, err := c.Chat(context.Background(), userReq("x"))
			if err == nil && len(resp.Message.ToolCalls) != 2 {
				err = errors.New("wrong tool calls")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestNoGoroutineLeak runs before the parallel tests resume, so the goroutine
// count is stable around it. The count is compared while the server is still
// up: a response body left open would keep both ends of its connection (and
// their goroutines) alive.
func TestNoGoroutineLeak(t *testing.T) {
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	release := make(chan struct{})
	handlers := map[string]http.HandlerFunc{
		"/ok/v1/chat/completions":    sse(vllmPlainStream),
		"/tools/v1/chat/completions": sse(openAIToolStream),
		"/json/v1/chat/completions":  jsonReply(200, vllmNonStream),
		"/cut/v1/chat/completions":   sseCut(strings.SplitAfter(vllmPlainStream, "\n\n")[1]),
		"/bad/v1/chat/completions":   sse("data: {oops\n\n"),
		"/err/v1/chat/completions":   jsonReply(500, `{"error":{"message":"x"}}`),
		"/hang/v1/chat/completions":  hang(release),
		// Keeps the connection open after [DONE]: only closing the body
		// frees it.
		"/linger/v1/chat/completions": func(w http.ResponseWriter, r *http.Request) {
			sse(vllmPlainStream)(w, r)
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
	settle := func(limit int) int {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > limit && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		return runtime.NumGoroutine()
	}
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for path := range handlers {
		c, err := New(Config{BaseURL: srv.URL + strings.TrimSuffix(path, "/chat/completions"), Model: "m", HTTPClient: hc})
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
	if n := settle(before); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {"1.5", 1500 * time.Millisecond}, {"0", 0}, {"-4", 0}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.v != "" {
			h.Set("Retry-After", tt.v)
		}
		if got := agent.RetryAfter(h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

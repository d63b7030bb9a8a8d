package ollamatest_test

// Interop with a real Ollama server (built from the ollama module, see
// setup.sh's ollama step) serving the tiny model of this package, through
// both adapters: agent/ollama on /api/chat and agent/openai on Ollama's
// OpenAI-compatible /v1.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/ollama"
	"github.com/kiln-dev/kiln/agent/ollama/ollamatest"
	"github.com/kiln-dev/kiln/agent/openai"
)

type adapter struct {
	name string
	make func(url, model string) (agent.Model, error)
}

func adapters() []adapter {
	return []adapter{
		{"native", func(url, model string) (agent.Model, error) {
			return ollama.New(ollama.Config{BaseURL: url, Model: model, NumCtx: 2048, Timeout: time.Minute})
		}},
		{"openai", func(url, model string) (agent.Model, error) {
			return openai.New(openai.Config{BaseURL: url + "/v1", Model: model, Timeout: time.Minute})
		}},
	}
}

func user(text string) []agent.Message {
	return []agent.Message{{Role: agent.RoleSystem, Content: "You write C."}, {Role: agent.RoleUser, Content: text}}
}

var compileTool = agent.ToolSpec{Name: ollamatest.ToolName, Description: "compile C code",
	Parameters: json.RawMessage(`{"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}`)}

func TestInteropChat(t *testing.T) {
	s := ollamatest.Start(t, ollamatest.Options{})
	for _, ad := range adapters() {
		t.Run(ad.name, func(t *testing.T) {
			m, err := ad.make(s.URL, ollamatest.ModelName)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()

			// A plain turn, streamed: the answer, server counts, stop.
			resp, err := m.Chat(ctx, agent.Request{Messages: user("write hello world")})
			if err != nil {
				t.Fatal(err)
			}
			u := resp.Usage
			t.Logf("reply %q finish %q usage %+v", resp.Message.Content, resp.FinishReason, u)
			if resp.Message.Content != ollamatest.ReplyText || resp.FinishReason != "stop" {
				t.Errorf("reply %q finish %q, want %q stop", resp.Message.Content, resp.FinishReason, ollamatest.ReplyText)
			}
			wantPrompt := ollamatest.PromptTokens("You write C.", "write hello world")
			if u.CompletionTokens != ollamatest.ReplyTokens+1 || u.CompletionSource != agent.CountServer ||
				u.PromptTokens != wantPrompt || u.PromptSource != agent.CountServer {
				t.Errorf("usage %+v: want %d completion tokens (the reply and its end) and %d prompt tokens, both from the server",
					u, ollamatest.ReplyTokens+1, wantPrompt)
			}
			if u.TTFT <= 0 || u.TTFT > u.Latency {
				t.Errorf("ttft %s, latency %s: the reply was not streamed", u.TTFT, u.Latency)
			}

			// num_predict / max_tokens 2: cut, finish reason length.
			resp, err = m.Chat(ctx, agent.Request{Messages: user("again"), Sampling: agent.Sampling{MaxTokens: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != agent.FinishLength || resp.Usage.CompletionTokens != 2 || resp.Message.Content != "Hello from" {
				t.Errorf("max 2 tokens: %q finish %q, %d tokens; want \"Hello from\", length, 2", resp.Message.Content,
					resp.FinishReason, resp.Usage.CompletionTokens)
			}

			// A tool offered: the model calls it; the call goes back
			// with its result and the model answers.
			req := agent.Request{Messages: user("compile this"), Tools: []agent.ToolSpec{compileTool}}
			resp, err = m.Chat(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 1 || calls[0].Name != ollamatest.ToolName || !sameJSON(calls[0].Arguments, ollamatest.ToolArguments) {
				t.Fatalf("tool turn: content %q, calls %+v; want one %s call with %s", resp.Message.Content, calls,
					ollamatest.ToolName, ollamatest.ToolArguments)
			}
			if calls[0].ID == "" {
				t.Error("tool call without an ID")
			}
			req.Messages = append(req.Messages, agent.Message{Role: agent.RoleAssistant, ToolCalls: calls},
				agent.Message{Role: agent.RoleTool, ToolCallID: calls[0].ID, Name: calls[0].Name, Content: "exit status 0"})
			resp, err = m.Chat(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != ollamatest.ReplyText || len(resp.Message.ToolCalls) != 0 {
				t.Errorf("after the tool result: %q, calls %+v; want the plain reply", resp.Message.Content, resp.Message.ToolCalls)
			}

			// A model that is not there: the hint, not a retry.
			m2, err := ad.make(s.URL, "nosuch-model")
			if err != nil {
				t.Fatal(err)
			}
			_, err = m2.Chat(ctx, agent.Request{Messages: user("hi")})
			var ae *agent.Error
			if !errors.As(err, &ae) || ae.Kind != agent.KindModelNotFound {
				t.Fatalf("missing model: %v, want %s", err, agent.KindModelNotFound)
			}
			want := map[string]string{"native": `run "ollama pull nosuch-model"`, "openai": "is not served"}[ad.name]
			if !strings.Contains(err.Error(), want) {
				t.Errorf("missing model: %v, want it to say %q", err, want)
			}
		})
	}
}

// TestInteropContextOverflow: a prompt longer than num_ctx is an error
// that names num_ctx (the native adapter sends truncate false), not a
// prompt cut in silence, and not retried.
func TestInteropContextOverflow(t *testing.T) {
	s := ollamatest.Start(t, ollamatest.Options{})
	m, err := ollama.New(ollama.Config{BaseURL: s.URL, Model: ollamatest.ModelName, NumCtx: 256})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("int x; ", 100) // 700 byte tokens
	_, err = m.Chat(context.Background(), agent.Request{Messages: user(long)})
	var ae *agent.Error
	if !errors.As(err, &ae) || ae.Kind != agent.KindBadRequest || !strings.Contains(err.Error(), "num_ctx") {
		t.Fatalf("a 700-token prompt with num_ctx 256: %v; want a bad_request naming num_ctx", err)
	}
	t.Logf("overflow: %v", err)
	// The same prompt fits 2048.
	m, _ = ollama.New(ollama.Config{BaseURL: s.URL, Model: ollamatest.ModelName, NumCtx: 2048})
	resp, err := m.Chat(context.Background(), agent.Request{Messages: user(long)})
	if err != nil || resp.Usage.PromptTokens < 700 {
		t.Fatalf("num_ctx 2048: %v, usage %+v", err, resp)
	}
	// Ollama's OpenAI-compatible /v1 sets neither num_ctx nor truncate: a
	// prompt longer than the server's default context (4096 tokens on a
	// host without a GPU) is cut without an error. That is why kiln warns
	// (runs/models OllamaWarnings) when an openai endpoint is an Ollama
	// server, which ollama.Detect tells from the /v1 URL.
	longer := strings.Repeat("int x; ", 800) // 5,600 byte tokens
	o, _ := openai.New(openai.Config{BaseURL: s.URL + "/v1", Model: ollamatest.ModelName, Timeout: time.Minute})
	resp, err = o.Chat(context.Background(), agent.Request{Messages: user(longer)})
	if err != nil || resp.Usage.PromptTokens >= 5600 {
		t.Fatalf("/v1 with a 5,600-token prompt: %v, usage %+v; want a reply from a cut prompt", err, resp)
	}
	t.Logf("/v1: %d of about 5,610 prompt tokens kept, no error", resp.Usage.PromptTokens)
	v, err := ollama.Detect(context.Background(), s.URL+"/v1", nil)
	if err != nil || v == "" {
		t.Fatalf("Detect(%s/v1) = %q, %v; want the server's version", s.URL, v, err)
	}
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// TestInteropKeepAliveAndQueue: keep_alive as kiln sends it is honoured
// (the model is listed as loaded after a call, and unloaded once it
// expires), and with OLLAMA_NUM_PARALLEL 2 a burst of 8 concurrent calls
// (kiln concurrency above the server's) all complete with the whole reply.
func TestInteropKeepAliveAndQueue(t *testing.T) {
	s := ollamatest.Start(t, ollamatest.Options{NumParallel: 2})
	m, err := ollama.New(ollama.Config{BaseURL: s.URL, Model: ollamatest.ModelName, NumCtx: 2048, KeepAlive: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := m.Chat(ctx, agent.Request{Messages: user(fmt.Sprintf("task %d", i))})
			if err == nil && resp.Message.Content != ollamatest.ReplyText {
				err = fmt.Errorf("reply %q", resp.Message.Content)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d of 8 at OLLAMA_NUM_PARALLEL 2: %v", i, err)
		}
	}
	if n := loaded(t, s.URL); n != 1 {
		t.Errorf("after the calls: %d models loaded, want 1", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for loaded(t, s.URL) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the model is still loaded 30 s after a call with keep_alive 3s")
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// loaded is the number of models /api/ps lists.
func loaded(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url + "/api/ps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ps struct {
		Models []json.RawMessage `json:"models"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		t.Fatal(err)
	}
	return len(ps.Models)
}

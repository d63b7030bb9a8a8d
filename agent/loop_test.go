package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/script"
	"github.com/kiln-dev/kiln/tools"
)

// fakeLane is a tools.Lane whose behaviour is funcs.
type fakeLane struct {
	extract func(text string) (string, bool)
	tools   func(item tools.Item) []tools.Tool
	verify  func(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error)
}

func (l *fakeLane) Name() string                       { return "fake" }
func (l *fakeLane) Extract(text string) (string, bool) { return l.extract(text) }
func (l *fakeLane) Tools(item tools.Item) []tools.Tool { return l.tools(item) }
func (l *fakeLane) Verify(ctx context.Context, item tools.Item, a string) (tools.Verdict, error) {
	return l.verify(ctx, item, a)
}

// fakeTool is a tools.Tool whose Call is a func.
type fakeTool struct {
	name string
	call func(ctx context.Context, args json.RawMessage) (string, error)
}

func (t *fakeTool) Name() string            { return t.name }
func (t *fakeTool) Description() string     { return "the " + t.name + " tool" }
func (t *fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type": "object"}`) }
func (t *fakeTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return t.call(ctx, args)
}

var fenceRE = regexp.MustCompile("(?s)```[a-z]*\n(.*?)\n?```")

// codeBlockLane extracts the first fenced block, offers an echo tool and a
// failing tool, and passes only the answer "RIGHT".
func codeBlockLane() *fakeLane {
	echo := &fakeTool{name: "echo", call: func(_ context.Context, args json.RawMessage) (string, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return "echo: " + a.Text, nil
	}}
	broken := &fakeTool{name: "broken", call: func(context.Context, json.RawMessage) (string, error) {
		return "", errors.New("toolchain missing")
	}}
	return &fakeLane{
		extract: func(text string) (string, bool) {
			m := fenceRE.FindStringSubmatch(text)
			if m == nil {
				return "", false
			}
			return m[1], true
		},
		tools: func(tools.Item) []tools.Tool { return []tools.Tool{echo, broken} },
		verify: func(_ context.Context, _ tools.Item, answer string) (tools.Verdict, error) {
			if answer == "RIGHT" {
				return tools.Verdict{Pass: true, Stage: "compare"}, nil
			}
			return tools.Verdict{Class: tools.ClassWrongOutput, Stage: "compare",
				Diagnostic: "expected RIGHT, got " + answer}, nil
		},
	}
}

// recorder wraps a Model and keeps every request and response.
type recorder struct {
	inner agent.Model
	mu    sync.Mutex
	reqs  []agent.Request
	resps []*agent.Response
}

func (r *recorder) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	resp, err := r.inner.Chat(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if err == nil {
		r.resps = append(r.resps, resp)
	}
	return resp, err
}

func scriptModel(t *testing.T, lines ...string) *recorder {
	t.Helper()
	m, err := script.Parse(strings.NewReader(strings.Join(lines, "\n")), t.Name()+".jsonl", script.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{inner: m}
}

func roles(msgs []agent.Message) string {
	var s []string
	for _, m := range msgs {
		s = append(s, string(m.Role))
	}
	return strings.Join(s, ",")
}

// jsonLine builds one script line.
func jsonLine(match, response string, calls ...string) string {
	v := map[string]any{"match": match, "response": response}
	if len(calls) > 0 {
		var tcs []json.RawMessage
		for _, c := range calls {
			tcs = append(tcs, json.RawMessage(c))
		}
		v["tool_calls"] = tcs
	}
	b, _ := json.Marshal(v)
	return string(b)
}

const answerRight = "Here it is:\n```\nRIGHT\n```"

func TestLoopNativeToolCall(t *testing.T) {
	t.Parallel()
	rec := scriptModel(t,
		jsonLine(`^echo: hi$`, answerRight),
		jsonLine(`^Solve`, "", `{"name": "echo", "arguments": {"text": "hi"}}`),
	)
	var stored []string
	l := &agent.Loop{Model: rec, Lane: codeBlockLane(), ToolMode: agent.ToolsNative,
		OnAnswer: func(_ context.Context, a string) error { stored = append(stored, a); return nil }}
	a, err := l.Run(context.Background(), "You are terse.", "Solve it.", tools.Item{Lane: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Verdict.Pass || a.Answer != "RIGHT" || !a.Extracted || a.Err != nil {
		t.Errorf("attempt = %+v, want a passing answer RIGHT", a)
	}
	if got := roles(a.Messages); got != "system,user,assistant,tool,assistant" {
		t.Errorf("roles = %s", got)
	}
	call := a.Messages[2].ToolCalls[0]
	res := a.Messages[3]
	if res.ToolCallID != call.ID || call.ID == "" || res.Name != "echo" || res.Content != "echo: hi" {
		t.Errorf("tool call %+v, result %+v", call, res)
	}
	if a.Turns != 2 || a.ToolCalls != 1 || a.RepairTurns != 0 || len(a.Checks) != 1 {
		t.Errorf("turns %d, tool calls %d, repairs %d, checks %d", a.Turns, a.ToolCalls, a.RepairTurns, len(a.Checks))
	}
	if len(rec.reqs[0].Tools) != 2 || rec.reqs[0].Tools[0].Name != "echo" {
		t.Errorf("tools offered = %+v, want echo and broken", rec.reqs[0].Tools)
	}
	if strings.Contains(rec.reqs[0].Messages[0].Content, agent.ToolCallOpen) {
		t.Error("native mode put the text protocol into the system prompt")
	}
	if fmt.Sprint(stored) != "[RIGHT]" {
		t.Errorf("OnAnswer got %v", stored)
	}
	// Usage is the sum of both calls.
	var want agent.Usage
	for _, r := range rec.resps {
		want.Add(r.Usage)
	}
	if a.Usage.PromptTokens != want.PromptTokens || a.Usage.CompletionTokens != want.CompletionTokens ||
		a.Usage.Calls != 2 || a.Usage.PromptSource != agent.CountEstimate {
		t.Errorf("usage = %+v, want sum %+v over 2 calls", a.Usage, want)
	}
	if _, err := json.Marshal(a); err != nil {
		t.Errorf("attempt does not marshal: %v", err)
	}
}

func TestLoopTextProtocol(t *testing.T) {
	t.Parallel()
	rec := scriptModel(t,
		jsonLine(`(?s)^<tool_result name="echo">\s*echo: hi\s*</tool_result>$`, answerRight),
		jsonLine(`^Solve`, "Let me check.\n<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"hi\"}}</tool_call>"),
	)
	l := &agent.Loop{Model: rec, Lane: codeBlockLane(), ToolMode: agent.ToolsText}
	a, err := l.Run(context.Background(), "You are terse.", "Solve it.", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Verdict.Pass || a.ToolCalls != 1 || a.Turns != 2 {
		t.Fatalf("attempt = %+v", a)
	}
	if got := roles(a.Messages); got != "system,user,assistant,user,assistant" {
		t.Errorf("roles = %s", got)
	}
	sys := rec.reqs[0].Messages[0].Content
	if !strings.HasPrefix(sys, "You are terse.\n\n") || !strings.Contains(sys, agent.ToolCallOpen) ||
		!strings.Contains(sys, "- echo: the echo tool") || !strings.Contains(sys, `{"type":"object"}`) {
		t.Errorf("system prompt lacks the protocol:\n%s", sys)
	}
	for i, r := range rec.reqs {
		if len(r.Tools) != 0 {
			t.Errorf("request %d offered native tools in text mode", i)
		}
	}
}

func TestLoopBadToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mode     agent.ToolMode
		response string
		calls    []string
		want     string // in the tool result text
	}{
		{name: "unknown tool, native", mode: agent.ToolsNative,
			calls: []string{`{"name": "nope", "arguments": {}}`}, want: `unknown tool "nope"; available tools: broken, echo`},
		{name: "arguments not an object", mode: agent.ToolsNative,
			calls: []string{`{"name": "echo", "arguments": [1, 2]}`}, want: "arguments of echo are not a JSON object"},
		{name: "tool fails", mode: agent.ToolsNative,
			calls: []string{`{"name": "broken", "arguments": {}}`}, want: "tool broken failed: toolchain missing"},
		{name: "unknown tool, text", mode: agent.ToolsText,
			response: `<tool_call>{"name": "nope", "arguments": {}}</tool_call>`, want: `unknown tool "nope"`},
		{name: "malformed text call", mode: agent.ToolsText,
			response: `<tool_call>{"name": echo}</tool_call>`, want: "bad tool call: <tool_call> is not a JSON object"},
		{name: "text call without name", mode: agent.ToolsText,
			response: `<tool_call>{"arguments": {}}</tool_call>`, want: "has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := scriptModel(t,
				jsonLine(`error`, answerRight),
				jsonLine(`^Solve`, tt.response, tt.calls...),
			)
			l := &agent.Loop{Model: rec, Lane: codeBlockLane(), ToolMode: tt.mode}
			a, err := l.Run(context.Background(), "", "Solve it.", tools.Item{})
			if err != nil {
				t.Fatal(err)
			}
			if !a.Verdict.Pass || a.ToolCalls != 1 {
				t.Fatalf("attempt = %+v, want the model to recover and pass", a)
			}
			var result string // the message after the first assistant one
			for i, m := range a.Messages {
				if m.Role == agent.RoleAssistant {
					result = a.Messages[i+1].Content
					break
				}
			}
			if !strings.Contains(result, tt.want) {
				t.Errorf("tool result %q lacks %q", result, tt.want)
			}
		})
	}
}

func TestLoopToolCallCap(t *testing.T) {
	t.Parallel()
	for _, mode := range []agent.ToolMode{agent.ToolsNative, agent.ToolsText} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			call := `{"name": "echo", "arguments": {"text": "again"}}`
			text := agent.ToolCallOpen + call + agent.ToolCallClose
			var calls []string
			if mode == agent.ToolsNative {
				text, calls = "", []string{call, call} // two calls per reply
			} else {
				text += "\n" + text
			}
			rec := scriptModel(t,
				jsonLine(`You have used all 3 tool calls`, answerRight),
				jsonLine(`echo: again|^Solve`, text, calls...),
			)
			l := &agent.Loop{Model: rec, Lane: codeBlockLane(), ToolMode: mode, MaxToolCalls: 3}
			a, err := l.Run(context.Background(), "", "Solve it.", tools.Item{})
			if err != nil {
				t.Fatal(err)
			}
			if !a.Verdict.Pass || a.ToolCalls != 3 || a.Turns != 3 {
				t.Fatalf("pass %v, tool calls %d, turns %d; want pass, 3, 3", a.Verdict.Pass, a.ToolCalls, a.Turns)
			}
			var notRun int
			for _, m := range a.Messages {
				notRun += strings.Count(m.Content, agent.ToolNotRunResult)
			}
			if notRun != 1 {
				t.Errorf("%d results say not run, want 1 (the 4th call)", notRun)
			}
			if last := rec.reqs[len(rec.reqs)-1]; len(last.Tools) != 0 {
				t.Error("tools still offered after the cap")
			}
			for i := 1; i < len(a.Messages); i++ {
				if a.Messages[i].Role == agent.RoleUser && a.Messages[i-1].Role == agent.RoleUser {
					t.Errorf("messages %d and %d are both user turns", i-1, i)
				}
			}
			if mode == agent.ToolsNative && len(rec.reqs[1].Tools) == 0 {
				t.Error("tools not offered before the cap")
			}
		})
	}
}

func TestLoopNativeCallsAfterCapAreAnswered(t *testing.T) {
	t.Parallel()
	// Past the cap the model still asks for a tool: the call gets a "not
	// run" result (keeping the transcript well formed) and the reply is
	// judged as final; no answer in it means a repair turn.
	rec := scriptModel(t,
		jsonLine(`could not find an answer`, answerRight),
		jsonLine(`.`, "", `{"name": "echo", "arguments": {"text": "x"}}`),
	)
	l := &agent.Loop{Model: rec, Lane: codeBlockLane(), MaxToolCalls: 1, RepairTurns: 1}
	a, err := l.Run(context.Background(), "", "Solve it.", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	want := "user,assistant,tool,user,assistant,tool,user,assistant"
	if got := roles(a.Messages); got != want || !a.Verdict.Pass || a.ToolCalls != 1 || a.RepairTurns != 1 {
		t.Errorf("roles %s (want %s), pass %v, tool calls %d, repairs %d", got, want, a.Verdict.Pass, a.ToolCalls, a.RepairTurns)
	}
	if a.Messages[5].Content != agent.ToolNotRunResult || a.Messages[5].ToolCallID != a.Messages[4].ToolCalls[0].ID {
		t.Errorf("call past the cap answered with %+v", a.Messages[5])
	}
}

func TestLoopRepair(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		lines       []string
		repairTurns int
		wantPass    bool
		wantClasses string // verdict class per check ("" for pass)
		wantAnswer  string
		wantStored  string
	}{
		{
			name: "wrong then right",
			lines: []string{
				jsonLine(`(?s)failed verification at the compare stage \(wrong_output\).*expected RIGHT, got WRONG`, answerRight),
				jsonLine(`^Solve`, "```\nWRONG\n```"),
			},
			repairTurns: 1, wantPass: true, wantClasses: "[wrong_output ]", wantAnswer: "RIGHT", wantStored: "[WRONG RIGHT]",
		},
		{
			name: "no answer then right",
			lines: []string{
				jsonLine(`could not find an answer`, answerRight),
				jsonLine(`^Solve`, "I would rather chat."),
			},
			repairTurns: 1, wantPass: true, wantClasses: "[no_answer ]", wantAnswer: "RIGHT", wantStored: "[RIGHT]",
		},
		{
			name:        "no answer, no repair turns",
			lines:       []string{jsonLine(`^Solve`, "I would rather chat.")},
			repairTurns: 0, wantClasses: "[no_answer]", wantStored: "[]",
		},
		{
			name:        "repairs run out",
			lines:       []string{jsonLine(`.`, "```\nWRONG\n```")},
			repairTurns: 2, wantClasses: "[wrong_output wrong_output wrong_output]", wantAnswer: "WRONG",
			wantStored: "[WRONG WRONG WRONG]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var events []string
			lane := codeBlockLane()
			verify := lane.verify
			lane.verify = func(ctx context.Context, item tools.Item, ans string) (tools.Verdict, error) {
				events = append(events, "verify "+ans)
				return verify(ctx, item, ans)
			}
			var stored []string
			l := &agent.Loop{Model: scriptModel(t, tt.lines...), Lane: lane, RepairTurns: tt.repairTurns,
				OnAnswer: func(_ context.Context, a string) error {
					events = append(events, "store "+a)
					stored = append(stored, a)
					return nil
				}}
			a, err := l.Run(context.Background(), "", "Solve it.", tools.Item{})
			if err != nil {
				t.Fatal(err)
			}
			var classes []string
			for _, c := range a.Checks {
				classes = append(classes, string(c.Verdict.Class))
			}
			if a.Verdict.Pass != tt.wantPass || fmt.Sprint(classes) != tt.wantClasses || a.Answer != tt.wantAnswer {
				t.Errorf("pass %v, classes %v, answer %q; want %v, %s, %q", a.Verdict.Pass, classes, a.Answer,
					tt.wantPass, tt.wantClasses, tt.wantAnswer)
			}
			if fmt.Sprint(stored) != tt.wantStored {
				t.Errorf("stored %v, want %s", stored, tt.wantStored)
			}
			for i := 0; i+1 < len(events); i += 2 {
				if !strings.HasPrefix(events[i], "store ") || !strings.HasPrefix(events[i+1], "verify ") {
					t.Errorf("events %v: want each answer stored before it is verified", events)
					break
				}
			}
			if a.RepairTurns != len(a.Checks)-1 || a.Turns != len(a.Checks) {
				t.Errorf("repairs %d, turns %d, checks %d", a.RepairTurns, a.Turns, len(a.Checks))
			}
		})
	}
}

func TestLoopModelErrorMidAttempt(t *testing.T) {
	t.Parallel()
	fm := &fakeModel{chat: func(_ context.Context, req agent.Request, n int) (*agent.Response, error) {
		if n == 1 {
			return &agent.Response{
				Message: agent.Message{Role: agent.RoleAssistant, Reasoning: "need a tool",
					ToolCalls: []agent.ToolCall{{Name: "echo", Arguments: json.RawMessage(`{"text": "a"}`)}}},
				Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 20, ReasoningTokens: 5,
					PromptSource: agent.CountServer, CompletionSource: agent.CountServer, ReasoningSource: agent.CountServer},
			}, nil
		}
		return nil, &agent.Error{Kind: agent.KindRetryable, Endpoint: "ep", Status: 503}
	}}
	l := &agent.Loop{Model: fm, Lane: codeBlockLane()}
	a, err := l.Run(context.Background(), "sys", "Solve it.", tools.Item{})
	if err != nil {
		t.Fatalf("Run error %v, want nil (a model failure is an outcome)", err)
	}
	if agent.KindOf(a.Err) != agent.KindRetryable || a.Verdict.Class != tools.ClassModelError || a.Verdict.Pass {
		t.Errorf("err %v, verdict %+v", a.Err, a.Verdict)
	}
	if got := roles(a.Messages); got != "system,user,assistant,tool" {
		t.Errorf("transcript roles %s", got)
	}
	if a.Messages[2].Reasoning != "need a tool" || a.Messages[2].ToolCalls[0].ID != "call_1_1" {
		t.Errorf("assistant message %+v: want reasoning kept and an ID assigned", a.Messages[2])
	}
	if a.Turns != 1 || a.Usage.PromptTokens != 100 || a.Usage.ReasoningTokens != 5 || a.Usage.Calls != 1 {
		t.Errorf("turns %d usage %+v", a.Turns, a.Usage)
	}
}

func TestLoopUsageSummed(t *testing.T) {
	t.Parallel()
	fm := &fakeModel{chat: func(_ context.Context, _ agent.Request, n int) (*agent.Response, error) {
		text := "```\nWRONG\n```"
		if n == 3 {
			text = answerRight
		}
		src := agent.CountServer
		if n == 2 {
			src = agent.CountEstimate
		}
		r := reply(text)
		r.Usage = agent.Usage{PromptTokens: 10 * n, CompletionTokens: n, ReasoningTokens: 1,
			PromptSource: agent.CountServer, CompletionSource: src, ReasoningSource: agent.CountServer, Calls: 1}
		return r, nil
	}}
	a, err := (&agent.Loop{Model: fm, Lane: codeBlockLane(), RepairTurns: 5}).Run(context.Background(), "", "x", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	u := a.Usage
	if !a.Verdict.Pass || u.PromptTokens != 60 || u.CompletionTokens != 6 || u.ReasoningTokens != 3 || u.Calls != 3 ||
		u.PromptSource != agent.CountServer || u.CompletionSource != agent.CountEstimate {
		t.Errorf("usage %+v", u)
	}
}

func TestLoopErrors(t *testing.T) {
	t.Parallel()
	t.Run("verifier cannot run", func(t *testing.T) {
		t.Parallel()
		lane := codeBlockLane()
		lane.verify = func(context.Context, tools.Item, string) (tools.Verdict, error) {
			return tools.Verdict{}, errors.New("disk full")
		}
		l := &agent.Loop{Model: scriptModel(t, jsonLine(`.`, answerRight)), Lane: lane, RepairTurns: 3}
		a, err := l.Run(context.Background(), "", "x", tools.Item{})
		if err == nil || !strings.Contains(err.Error(), "disk full") || a.Verdict.Class != tools.ClassInternal || a.Turns != 1 {
			t.Errorf("err %v, verdict %+v, turns %d", err, a.Verdict, a.Turns)
		}
	})
	t.Run("store fails", func(t *testing.T) {
		t.Parallel()
		verified := false
		lane := codeBlockLane()
		lane.verify = func(context.Context, tools.Item, string) (tools.Verdict, error) {
			verified = true
			return tools.Verdict{Pass: true}, nil
		}
		l := &agent.Loop{Model: scriptModel(t, jsonLine(`.`, answerRight)), Lane: lane,
			OnAnswer: func(context.Context, string) error { return errors.New("db locked") }}
		_, err := l.Run(context.Background(), "", "x", tools.Item{})
		if err == nil || !strings.Contains(err.Error(), "store answer: db locked") || verified {
			t.Errorf("err %v, verified %v; want the store error and no verification", err, verified)
		}
	})
	t.Run("context cancelled in a tool", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		lane := codeBlockLane()
		lane.tools = func(tools.Item) []tools.Tool {
			return []tools.Tool{&fakeTool{name: "echo", call: func(ctx context.Context, _ json.RawMessage) (string, error) {
				cancel()
				return "", ctx.Err()
			}}}
		}
		l := &agent.Loop{Model: scriptModel(t, jsonLine(`.`, "", `{"name": "echo"}`)), Lane: lane}
		a, err := l.Run(ctx, "", "x", tools.Item{})
		if !errors.Is(err, context.Canceled) || a == nil {
			t.Errorf("err %v, attempt %v; want context.Canceled and the attempt so far", err, a)
		}
	})
	t.Run("context cancelled before the model answers", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		l := &agent.Loop{Model: scriptModel(t, jsonLine(`.`, answerRight)), Lane: codeBlockLane()}
		a, err := l.Run(ctx, "", "x", tools.Item{})
		if !errors.Is(err, context.Canceled) || a.Verdict.Class != tools.ClassModelError {
			t.Errorf("err %v, verdict %+v", err, a.Verdict)
		}
	})
	t.Run("bad tool mode", func(t *testing.T) {
		t.Parallel()
		l := &agent.Loop{Model: &fakeModel{}, Lane: codeBlockLane(), ToolMode: "smoke"}
		if _, err := l.Run(context.Background(), "", "x", tools.Item{}); err == nil {
			t.Error("Run accepted tool mode smoke")
		}
	})
}

func TestLoopToolsNoneAndNoLimit(t *testing.T) {
	t.Parallel()
	for _, l := range []*agent.Loop{
		{ToolMode: agent.ToolsNone},
		{MaxToolCalls: -1},
	} {
		called := false
		lane := codeBlockLane()
		lane.tools = func(tools.Item) []tools.Tool { called = true; return nil }
		rec := scriptModel(t, jsonLine(`.`, answerRight))
		l.Model, l.Lane = rec, lane
		a, err := l.Run(context.Background(), "", "x", tools.Item{})
		if err != nil || !a.Verdict.Pass || called || len(rec.reqs[0].Tools) != 0 {
			t.Errorf("mode %q max %d: err %v pass %v, lane.Tools called %v", l.ToolMode, l.MaxToolCalls, err, a.Verdict.Pass, called)
		}
	}
}

func TestLoopTruncatesToolResults(t *testing.T) {
	t.Parallel()
	lane := codeBlockLane()
	lane.tools = func(tools.Item) []tools.Tool {
		return []tools.Tool{&fakeTool{name: "big", call: func(context.Context, json.RawMessage) (string, error) {
			return strings.Repeat("é", 100), nil // 200 bytes
		}}}
	}
	rec := scriptModel(t, jsonLine(`more bytes cut`, answerRight), jsonLine(`.`, "", `{"name": "big"}`))
	a, err := (&agent.Loop{Model: rec, Lane: lane, MaxToolResult: 51}).Run(context.Background(), "", "x", tools.Item{})
	if err != nil || !a.Verdict.Pass {
		t.Fatalf("err %v, attempt %+v", err, a)
	}
	if got := a.Messages[2].Content; !strings.HasPrefix(got, strings.Repeat("é", 25)+"\n[... 150 more bytes cut]") {
		t.Errorf("truncated result %q", got)
	}
}

// TestLoopConcurrentAttempts runs many attempts on one Loop at once (for the
// race detector) and checks that none sees another's transcript. The
// synctest bubble fails the test if a goroutine is left blocked.
func TestLoopConcurrentAttempts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m, err := script.Parse(strings.NewReader(jsonLine(`^echo: `, answerRight)+"\n"+
			jsonLine(`^task (\d+)$`, "", `{"name": "echo", "arguments": {"text": "t"}}`)),
			"s.jsonl", script.Config{Latency: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		l := &agent.Loop{Model: m, Lane: codeBlockLane()}
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				a, err := l.Run(context.Background(), "", fmt.Sprintf("task %d", i), tools.Item{})
				if err != nil || !a.Verdict.Pass || a.Messages[0].Content != fmt.Sprintf("task %d", i) || len(a.Messages) != 4 {
					t.Errorf("attempt %d: err %v, %+v", i, err, a)
				}
			})
		}
		wg.Wait()
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("16 attempts of 2 calls took %v, want 20ms (run concurrently)", d)
		}
	})
}

// TestLoopCutOffReplyIsNotAnswer: a reply cut at the token limit
// (finish reason "length") is not extracted or verified, even when it
// holds a complete code block: no_answer at stage model, saying so.
func TestLoopCutOffReplyIsNotAnswer(t *testing.T) {
	t.Parallel()
	lane := codeBlockLane()
	verified := 0
	inner := lane.verify
	lane.verify = func(ctx context.Context, item tools.Item, a string) (tools.Verdict, error) {
		verified++
		return inner(ctx, item, a)
	}
	m := &fakeModel{chat: func(ctx context.Context, req agent.Request, n int) (*agent.Response, error) {
		r := reply("```\nRIGHT\n```\nand then the model went on and on and")
		r.FinishReason = agent.FinishLength
		r.Usage.CompletionTokens = 16
		return r, nil
	}}
	l := &agent.Loop{Model: m, Lane: lane, RepairTurns: 2, Sampling: agent.Sampling{MaxTokens: 16}}
	a, err := l.Run(context.Background(), "sys", "user", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	if verified != 0 || a.Extracted || a.Verdict.Class != tools.ClassNoAnswer || a.Verdict.Stage != "model" ||
		!strings.Contains(a.Verdict.Diagnostic, "max_tokens 16") {
		t.Errorf("verified %d, extracted %v, verdict %+v", verified, a.Extracted, a.Verdict)
	}
	if m.calls.Load() != 1 || a.RepairTurns != 0 {
		t.Errorf("%d calls, %d repair turns: a cut reply ends the attempt", m.calls.Load(), a.RepairTurns)
	}
	// The same reply finished normally is judged.
	m2 := &fakeModel{chat: func(ctx context.Context, req agent.Request, n int) (*agent.Response, error) {
		return reply("```\nRIGHT\n```\n"), nil
	}}
	l.Model = m2
	if a, err := l.Run(context.Background(), "sys", "user", tools.Item{}); err != nil || !a.Extracted || verified != 1 {
		t.Errorf("a finished reply: err %v, extracted %v, verified %d", err, a.Extracted, verified)
	}
}

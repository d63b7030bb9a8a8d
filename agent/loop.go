package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kiln-dev/kiln/tools"
)

// ToolMode is how tools are offered to the model.
type ToolMode string

const (
	// ToolsNative passes tools as ToolSpecs; the server returns structured
	// tool calls and results go back as RoleTool messages.
	ToolsNative ToolMode = "native"
	// ToolsText describes the tools in the system prompt; the model writes
	// <tool_call>{"name": ..., "arguments": {...}}</tool_call> in its text and
	// gets the results back in one user message of <tool_result> blocks.
	ToolsText ToolMode = "text"
	// ToolsNone offers no tools.
	ToolsNone ToolMode = "none"
)

// Validate reports an unknown mode. The empty mode means ToolsNative.
func (m ToolMode) Validate() error {
	switch m {
	case "", ToolsNative, ToolsText, ToolsNone:
		return nil
	}
	return fmt.Errorf("unknown tool mode %q (want native, text or none)", string(m))
}

// Defaults of Loop's limits.
const (
	DefaultMaxToolCalls  = 16
	DefaultMaxToolResult = 16 << 10 // bytes
)

// Check is one final reply of an attempt and its verdict.
type Check struct {
	Turn      int           `json:"turn"` // the model call (1-based) that gave the reply
	Answer    string        `json:"answer,omitempty"`
	Extracted bool          `json:"extracted"`
	Verdict   tools.Verdict `json:"verdict"`
}

// Attempt is the outcome of one Loop.Run.
type Attempt struct {
	// Messages is the full transcript, the system prompt and reasoning
	// included.
	Messages []Message `json:"messages"`
	// Answer, Extracted and Verdict describe the attempt's last judged
	// step: the last final reply and its verdict (a model failure after it,
	// in a repair turn, leaves them as they are and sets Err beside them),
	// or, when the model failed before any reply was judged, an empty
	// answer with a model_error verdict. Earlier answers are in Checks.
	Answer    string        `json:"answer,omitempty"`
	Extracted bool          `json:"extracted"`
	Verdict   tools.Verdict `json:"verdict"`
	// Checks holds every final reply judged, in order.
	Checks []Check `json:"checks,omitempty"`
	// Usage sums every model call of the attempt.
	Usage Usage `json:"usage"`
	// Turns counts model calls that returned a reply.
	Turns int `json:"turns"`
	// ToolCalls counts tool calls run (unknown tools and bad calls included,
	// calls past the limit not).
	ToolCalls int `json:"tool_calls"`
	// RepairTurns counts repair requests sent (after no answer or a failed
	// verdict).
	RepairTurns int `json:"repair_turns"`
	// Model and Endpoint are what the last response reported.
	Model    string `json:"model,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Err is the model failure that ended the attempt, if any. With
	// Checks, the attempt keeps the class of its last judged reply
	// (Verdict) and Err is a model fault beside it.
	Err error `json:"-"`
}

// Loop runs attempts: a conversation with Model about one item of Lane, with
// tool calls, answer extraction, verification and repair turns. A Loop holds
// no per-attempt state; one Loop may run many attempts concurrently.
type Loop struct {
	Model    Model
	Lane     tools.Lane
	Sampling Sampling
	ToolMode ToolMode // "" means ToolsNative
	// MaxToolCalls caps tool calls per attempt: 0 means DefaultMaxToolCalls,
	// negative means no tools. Once used up the model is told to answer and
	// no tools are offered.
	MaxToolCalls int
	// RepairTurns is how many times a failed or missing answer is sent back
	// for another try.
	RepairTurns int
	// MaxToolResult caps a tool result's bytes (0: DefaultMaxToolResult).
	MaxToolResult int
	Log           *slog.Logger // may be nil
	// OnAnswer, when set, is called with every extracted answer before it is
	// verified, so the caller can store it durably. Its error ends the attempt.
	OnAnswer func(ctx context.Context, answer string) error
	// Repair, when set, writes the repair turn after a failed verdict (the
	// lane's template); nil uses RepairPrompt.
	Repair func(v tools.Verdict) string
	// Metrics, when set, is told about every model call that returned a
	// reply.
	Metrics CallMetrics
}

// Run runs one attempt. system may be empty.
//
// The conversation: system and user message (and, in native mode, the
// lane's tools as ToolSpecs; in text mode, the tool protocol appended to the
// system prompt). Replies with tool calls have the tools run and the results
// sent back, until the tool-call cap. A reply without tool calls is final:
// the lane extracts the answer (none: a no_answer verdict), OnAnswer stores
// it, the lane verifies it. A failed verdict, no_answer included, is sent
// back for repair while RepairTurns last; a task fault (the task's own
// reference failed: tools.Verdict.TaskFault) is not, since no answer can
// repair it.
//
// A model error ends the attempt with Attempt.Err set; the verdict stays
// that of the last reply judged, or is a model_error verdict when none
// was. Run then returns the attempt and a nil error. Run's error is for
// what is not the attempt's outcome: the context ending, OnAnswer failing,
// or the verifier failing to run (Verdict class internal_error). The
// attempt so far is returned with it.
func (l *Loop) Run(ctx context.Context, system, user string, item tools.Item) (*Attempt, error) {
	log := l.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mode := l.ToolMode
	if mode == "" {
		mode = ToolsNative
	}
	if err := mode.Validate(); err != nil {
		return nil, fmt.Errorf("attempt: %w", err)
	}
	maxCalls := l.toolCallCap()

	var ts []tools.Tool
	if mode != ToolsNone && maxCalls > 0 {
		ts = l.Lane.Tools(item)
	}
	run := newAttemptRun(l, log, maxCalls, ts)
	toolsOpen := len(ts) > 0
	if mode == ToolsText && toolsOpen {
		system = withToolProtocol(system, ts)
	}

	a := &Attempt{}
	run.a = a
	if system != "" {
		a.Messages = append(a.Messages, Message{Role: RoleSystem, Content: system})
	}
	a.Messages = append(a.Messages, Message{Role: RoleUser, Content: user})

	for {
		msg, ok, err := run.ask(ctx, mode == ToolsNative && toolsOpen)
		if !ok {
			return a, err
		}

		// Tool calls of this reply. Structured calls are answered with
		// RoleTool messages whatever the mode (past the limit, or when no
		// tools were offered, with ToolNotRunResult), since a request holding
		// a tool call without its result is malformed.
		structured, textual := run.toolCalls(&msg, mode == ToolsText && toolsOpen)
		a.Messages = append(a.Messages, msg)

		nativeOpen := mode == ToolsNative && toolsOpen
		if err := run.tools(ctx, structured, nativeOpen, true); err != nil {
			return a, fmt.Errorf("attempt: %w", err)
		}
		if err := run.tools(ctx, textual, toolsOpen, false); err != nil {
			return a, fmt.Errorf("attempt: %w", err)
		}
		if (nativeOpen && len(structured) > 0) || len(textual) > 0 {
			if a.ToolCalls >= maxCalls {
				toolsOpen = false
				a.Messages = appendUser(a.Messages, ToolLimitPrompt(maxCalls))
			}
			continue
		}

		// A final reply; one cut at the token limit is not an answer.
		if run.lastFinish == FinishLength {
			return a, run.cutOff()
		}
		if done, err := run.final(ctx, item, msg.Content); done {
			return a, err
		}
	}
}

// toolCallCap is the tool-call cap of an attempt: MaxToolCalls, with 0
// meaning DefaultMaxToolCalls and negative meaning none (0).
func (l *Loop) toolCallCap() int {
	maxCalls := l.MaxToolCalls
	switch {
	case maxCalls == 0:
		maxCalls = DefaultMaxToolCalls
	case maxCalls < 0:
		maxCalls = 0
	}
	return maxCalls
}

// withToolProtocol appends the text-mode tool protocol for ts to the
// system prompt, a blank line apart.
func withToolProtocol(system string, ts []tools.Tool) string {
	system = strings.TrimRight(system, "\n")
	if system != "" {
		system += "\n\n"
	}
	return system + TextToolProtocol(ts)
}

// attemptRun is the per-attempt state of Loop.Run.
type attemptRun struct {
	loop     *Loop
	log      *slog.Logger
	maxCalls int
	byName   map[string]tools.Tool
	names    []string
	specs    []ToolSpec
	a        *Attempt
	// lastFinish is the finish reason of the last reply.
	lastFinish string
}

// newAttemptRun indexes the tools ts offered to one attempt by name, with
// their sorted names and their ToolSpecs. The caller sets the attempt.
func newAttemptRun(l *Loop, log *slog.Logger, maxCalls int, ts []tools.Tool) *attemptRun {
	run := &attemptRun{loop: l, log: log, maxCalls: maxCalls, byName: map[string]tools.Tool{}}
	for _, t := range ts {
		run.byName[t.Name()] = t
		run.names = append(run.names, t.Name())
		run.specs = append(run.specs, ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
	}
	sort.Strings(run.names)
	return run
}

// ask sends the transcript to the model (offering the tools' specs when
// withTools) and returns its reply as an assistant message, counting the
// turn and adding its usage. A model failure ends the attempt: ok is false,
// the attempt gets Err (and a model_error verdict when no reply was judged
// yet: otherwise it keeps its last judged reply and verdict), and err is
// the context's error when it has ended, else nil.
func (r *attemptRun) ask(ctx context.Context, withTools bool) (msg Message, ok bool, err error) {
	l, a := r.loop, r.a
	req := Request{Messages: append([]Message(nil), a.Messages...), Sampling: l.Sampling}
	if withTools {
		req.Tools = r.specs
	}
	start := time.Now()
	resp, err := l.Model.Chat(ctx, req)
	if err == nil && resp == nil {
		err = &Error{Kind: KindBadResponse, Err: errors.New("model returned neither a response nor an error")}
	}
	if err != nil {
		a.Err = err
		if len(a.Checks) == 0 {
			a.Answer, a.Extracted = "", false
			a.Verdict = tools.Verdict{Class: tools.ClassModelError, Stage: "model", Diagnostic: err.Error()}
		}
		r.log.Warn("model call failed", "turn", a.Turns+1, "judged_replies", len(a.Checks), "err", err)
		if cerr := ctx.Err(); cerr != nil {
			return Message{}, false, fmt.Errorf("attempt: %w", cerr)
		}
		return Message{}, false, nil
	}
	a.Turns++
	u := resp.Usage
	if u.Calls == 0 {
		u.Calls = 1
	}
	if u.Latency == 0 {
		u.Latency = time.Since(start)
	}
	a.Usage.Add(u)
	a.Model, a.Endpoint = resp.Model, resp.Endpoint
	if l.Metrics != nil {
		l.Metrics.ModelCall(resp.Model, resp.Endpoint, u)
	}
	r.lastFinish = resp.FinishReason
	msg = resp.Message
	msg.Role = RoleAssistant
	msg.ToolCalls = append([]ToolCall(nil), msg.ToolCalls...) // IDs are filled in by toolCalls
	return msg, true, nil
}

// toolCalls returns the tool calls of the reply msg: its structured calls,
// given IDs where they lack one and arguments that are valid JSON (in msg
// too), and, when textOpen, the calls written in its text.
func (r *attemptRun) toolCalls(msg *Message, textOpen bool) (structured, textual []textToolCall) {
	a := r.a
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d_%d", a.Turns, i+1)
		}
		tc.Arguments = validJSON(tc.Arguments)
		structured = append(structured, textToolCall{call: *tc})
	}
	if textOpen {
		textual = parseTextToolCalls(msg.Content)
		for i := range textual {
			textual[i].call.ID = fmt.Sprintf("call_%d_%d", a.Turns, i+1)
		}
	}
	return structured, textual
}

// final handles a reply without tool calls, whose text is content: the
// lane extracts the answer, OnAnswer stores it, the lane verifies it. It
// reports whether the attempt is over, and Run's error if any; when the
// attempt goes on, a repair request has been added to the transcript.
func (r *attemptRun) final(ctx context.Context, item tools.Item, content string) (done bool, err error) {
	l, a := r.loop, r.a
	answer, ok := l.Lane.Extract(content)
	if !ok {
		return r.noAnswer(), nil
	}
	a.Answer, a.Extracted = answer, true
	if l.OnAnswer != nil {
		if err := l.OnAnswer(ctx, answer); err != nil {
			return true, fmt.Errorf("store answer: %w", err)
		}
	}
	v, err := l.Lane.Verify(ctx, item, answer)
	if err != nil {
		a.Verdict = tools.Verdict{Class: tools.ClassInternal, Stage: "verify", Diagnostic: err.Error()}
		if cerr := ctx.Err(); cerr != nil {
			return true, fmt.Errorf("verify: %w", cerr)
		}
		return true, fmt.Errorf("verify: %w", err)
	}
	a.Verdict = v
	a.Checks = append(a.Checks, Check{Turn: a.Turns, Answer: answer, Extracted: true, Verdict: v})
	r.log.Debug("answer verified", "turn", a.Turns, "pass", v.Pass, "class", string(v.Class), "stage", v.Stage)
	if v.Pass || v.TaskFault() || a.RepairTurns >= l.RepairTurns {
		return true, nil
	}
	a.RepairTurns++
	a.Messages = append(a.Messages, Message{Role: RoleUser, Content: l.repair(v)})
	return false, nil
}

// FinishLength is the finish reason of a reply cut at the token limit
// (OpenAI's finish_reason and Ollama's done_reason).
const FinishLength = "length"

// cutOff ends the attempt on a final reply cut at the token limit: its
// text is not an answer (a cut answer would be judged as if the model had
// meant it), so nothing is extracted or verified; the verdict is
// no_answer at stage "model", saying so. It returns nil (not an error:
// the call itself succeeded).
func (r *attemptRun) cutOff() error {
	l, a := r.loop, r.a
	diag := fmt.Sprintf("the reply was cut at the token limit (finish reason %q after %d completion tokens in all): "+
		"not judged as an answer; raise sampling.max_tokens (Ollama: num_predict)", FinishLength, a.Usage.CompletionTokens)
	if l.Sampling.MaxTokens > 0 {
		diag = fmt.Sprintf("the reply was cut at the token limit (finish reason %q, max_tokens %d): "+
			"not judged as an answer; raise sampling.max_tokens", FinishLength, l.Sampling.MaxTokens)
	}
	a.Answer, a.Extracted = "", false
	a.Verdict = tools.Verdict{Class: tools.ClassNoAnswer, Stage: "model",
		Stages: []tools.Stage{{Name: "model", Detail: "truncated: " + FinishLength}}, Diagnostic: diag}
	a.Checks = append(a.Checks, Check{Turn: a.Turns, Verdict: a.Verdict})
	r.log.Warn("reply cut at the token limit", "turn", a.Turns, "completion_tokens", a.Usage.CompletionTokens)
	return nil
}

// noAnswer records a no_answer verdict for a final reply the lane found no
// answer in and, while repair turns last, asks again; it reports whether
// the attempt is over.
func (r *attemptRun) noAnswer() (done bool) {
	l, a := r.loop, r.a
	a.Answer, a.Extracted = "", false
	a.Verdict = tools.Verdict{Class: tools.ClassNoAnswer, Stage: "extract",
		Stages:     []tools.Stage{{Name: "extract", Detail: "no answer found in the reply"}},
		Diagnostic: "no answer found in the reply"}
	a.Checks = append(a.Checks, Check{Turn: a.Turns, Verdict: a.Verdict})
	r.log.Debug("no answer in reply", "turn", a.Turns)
	if a.RepairTurns < l.RepairTurns {
		a.RepairTurns++
		a.Messages = append(a.Messages, Message{Role: RoleUser, Content: NoAnswerPrompt})
		return false
	}
	return true
}

// tools runs calls (when open and within the cap) and appends their results
// to the transcript: as RoleTool messages when native, else as one user
// message of <tool_result> blocks. Only the context ending is an error.
func (r *attemptRun) tools(ctx context.Context, calls []textToolCall, open, native bool) error {
	var text strings.Builder
	for _, c := range calls {
		result := ToolNotRunResult
		if open && r.a.ToolCalls < r.maxCalls {
			r.a.ToolCalls++
			var err error
			if result, err = r.call(ctx, c); err != nil {
				return err
			}
		}
		if native {
			r.a.Messages = append(r.a.Messages, Message{Role: RoleTool, ToolCallID: c.call.ID, Name: c.call.Name, Content: result})
			continue
		}
		if text.Len() > 0 {
			text.WriteString("\n")
		}
		text.WriteString(FormatToolResult(c.call.Name, result))
	}
	if text.Len() > 0 {
		r.a.Messages = append(r.a.Messages, Message{Role: RoleUser, Content: text.String()})
	}
	return nil
}

// call runs one tool call and returns the text for the model. Unknown tools,
// bad arguments and tool failures are texts; only the context ending is an
// error.
func (r *attemptRun) call(ctx context.Context, c textToolCall) (string, error) {
	if c.err != nil {
		return BadToolCallResult(c.err), nil
	}
	t, ok := r.byName[c.call.Name]
	if !ok {
		return UnknownToolResult(c.call.Name, r.names), nil
	}
	args := c.call.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return BadToolCallResult(fmt.Errorf("arguments of %s are not a JSON object: %v", c.call.Name, err)), nil
	}
	start := time.Now()
	out, err := t.Call(ctx, args)
	r.log.Debug("tool call", "tool", c.call.Name, "duration", time.Since(start), "err", err)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("tool %s: %w", c.call.Name, cerr)
		}
		return ToolErrorResult(c.call.Name, err), nil
	}
	return truncate(out, r.maxResult()), nil
}

func (r *attemptRun) maxResult() int {
	if r.loop.MaxToolResult > 0 {
		return r.loop.MaxToolResult
	}
	return DefaultMaxToolResult
}

// truncate cuts s to at most n bytes on a rune boundary, saying so.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... %d more bytes cut]", len(s)-cut)
}

// appendUser adds a user message, merging it into the last message when that
// is a user message already (text-mode tool results), since some chat
// templates insist that user and assistant turns alternate.
func appendUser(msgs []Message, text string) []Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == RoleUser {
		msgs[n-1].Content += "\n\n" + text
		return msgs
	}
	return append(msgs, Message{Role: RoleUser, Content: text})
}

// validJSON returns raw when it is valid JSON (or empty) and raw as a JSON
// string otherwise, so that transcripts always marshal.
func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

func (l *Loop) repair(v tools.Verdict) string {
	if l.Repair != nil {
		return l.Repair(v)
	}
	return RepairPrompt(v)
}

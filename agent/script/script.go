// Package script is an agent.Model that answers from a script file instead of
// a server: for tests, demos and benchmarks of everything around the model.
//
// A script is a JSONL file, one rule per line:
//
//	{"match": "<Go regexp>", "response": "...", "reasoning": "...",
//	 "tool_calls": [{"name": "compile", "arguments": {"code": "..."}}]}
//
// Only "match" is required. Blank lines and lines whose first non-blank
// character is '#' are skipped; unknown fields are errors.
//
// What is matched: the Content of the last message in the request whose role
// is user or tool, found by walking back from the end. So after a native tool
// call it is the last tool result's text, after a text-protocol tool call the
// user message holding the <tool_result> blocks, and otherwise the latest
// user message (a repair request, or the task prompt). System and assistant
// messages are never matched. The regexp is unanchored (use ^ and $, and
// (?s) to let . cross newlines). The first rule that matches answers; no
// match is an *agent.Error of kind bad_request naming the script file.
package script

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kiln-dev/kiln/agent"
)

// Config tunes a script Model.
type Config struct {
	// Latency is a fixed delay added to every call (for benchmarks).
	Latency time.Duration
}

// Rule is one line of a script.
type Rule struct {
	Match     string     `json:"match"`
	Response  string     `json:"response"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Line      int        `json:"-"` // line number in the file

	re *regexp.Regexp
}

// ToolCall is a tool call a rule makes the model return.
type ToolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Model answers chat requests from a script. It is safe for concurrent use.
type Model struct {
	name  string
	rules []Rule
	cfg   Config
	calls atomic.Int64 // numbers tool call IDs
}

var _ agent.Model = (*Model)(nil)

// Load reads the script at path.
func Load(path string, cfg Config) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	defer f.Close()
	return Parse(f, path, cfg)
}

// Parse reads a script from r; name (usually the file path) labels errors and
// the model.
func Parse(r io.Reader, name string, cfg Config) (*Model, error) {
	m := &Model{name: name, cfg: cfg}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if perr := m.addLine(line, n); perr != nil {
				return nil, perr
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("script %s:%d: %w", name, n, err)
		}
	}
	if len(m.rules) == 0 {
		return nil, fmt.Errorf("script %s: no rules", name)
	}
	return m, nil
}

func (m *Model) addLine(line []byte, n int) error {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] == '#' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	var r Rule
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("script %s:%d: bad JSON: %w", m.name, n, err)
	}
	if dec.More() {
		return fmt.Errorf("script %s:%d: bad JSON: more than one value on the line", m.name, n)
	}
	if r.Match == "" {
		return fmt.Errorf("script %s:%d: missing \"match\"", m.name, n)
	}
	re, err := regexp.Compile(r.Match)
	if err != nil {
		return fmt.Errorf("script %s:%d: bad match regexp: %w", m.name, n, err)
	}
	for i, tc := range r.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("script %s:%d: tool call %d has no name", m.name, n, i+1)
		}
	}
	r.re, r.Line = re, n
	m.rules = append(m.rules, r)
	return nil
}

// Rules returns the parsed rules, in file order.
func (m *Model) Rules() []Rule { return append([]Rule(nil), m.rules...) }

// MatchedText returns the text a request is matched against (see the package
// doc) and whether there is one.
func MatchedText(msgs []agent.Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if r := msgs[i].Role; r == agent.RoleUser || r == agent.RoleTool {
			return msgs[i].Content, true
		}
	}
	return "", false
}

// Chat answers req with the first rule matching it.
func (m *Model) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	text, _ := MatchedText(req.Messages)
	var rule *Rule
	for i := range m.rules {
		if m.rules[i].re.MatchString(text) {
			rule = &m.rules[i]
			break
		}
	}
	if rule == nil {
		return nil, &agent.Error{Kind: agent.KindBadRequest, Endpoint: m.name, Model: m.modelName(),
			Err: fmt.Errorf("no script line in %s matched %q", m.name, clip(text, 200))}
	}
	if m.cfg.Latency > 0 {
		t := time.NewTimer(m.cfg.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	msg := agent.Message{Role: agent.RoleAssistant, Content: rule.Response, Reasoning: rule.Reasoning}
	for _, tc := range rule.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{
			ID:        fmt.Sprintf("script_call_%d", m.calls.Add(1)),
			Name:      tc.Name,
			Arguments: append(json.RawMessage(nil), args...),
		})
	}
	finish := "stop"
	if len(msg.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	u := agent.EstimateUsage(req, msg)
	u.Latency = time.Since(start)
	return &agent.Response{Message: msg, Usage: u, FinishReason: finish, Model: m.modelName()}, nil
}

func (m *Model) modelName() string { return "script:" + m.name }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

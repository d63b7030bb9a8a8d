// Package hipify is an agent.Model that answers without a language model:
// it finds the CUDA program in the request and replies with its
// rule-based HIP translation (tools/hipify), the baseline an LLM's CUDA to
// HIP translations are measured against (spec models[].kind: hipify).
//
// The program is the last ```cuda (or ```cu, ```cpp, ```c++, ```cxx)
// fenced block of the latest user message that has one, so a repair turn
// gets the same answer again: the model is deterministic. The reply is a
// sentence and one ```hip fenced block. When the translator refuses (a
// construct it cannot translate, such as inline PTX), or there is no CUDA
// program, the reply is a plain sentence saying so, with no code, which a
// lane records as no_answer; it is never an error, which would read as a
// server fault. The model calls no tools.
//
// Usage is exact: zero prompt, completion and reasoning tokens, since no
// language model ran. The counts are the endpoint's own report, so they
// carry agent.CountServer (an estimate or "unknown" would be wrong).
package hipify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// Model answers with the rule-based translation. It is safe for
// concurrent use.
type Model struct {
	name  string
	table *hipify.Mapping
}

var _ agent.Model = (*Model)(nil)

// New returns a Model named name (the endpoint's name, reported as the
// model) translating with the built-in hipify table.
func New(name string) *Model { return &Model{name: name, table: hipify.Table()} }

// cudaLangs are the fence info strings that mark the CUDA program.
var cudaLangs = map[string]bool{"cuda": true, "cu": true, "cpp": true, "c++": true, "cxx": true}

// Program returns the CUDA program of a request: the last CUDA-labelled
// fenced block of the latest user message that has one.
func Program(msgs []agent.Message) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != agent.RoleUser {
			continue
		}
		fs := tools.Fences(msgs[i].Content)
		for j := len(fs) - 1; j >= 0; j-- {
			if cudaLangs[strings.ToLower(fs[j].Lang)] && strings.TrimSpace(fs[j].Body) != "" {
				return fs[j].Body, true
			}
		}
	}
	return "", false
}

// Chat answers req with the translation of its CUDA program.
func (m *Model) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	content := m.answer(req.Messages)
	u := agent.Usage{PromptSource: agent.CountServer, CompletionSource: agent.CountServer,
		ReasoningSource: agent.CountServer, Calls: 1, Latency: time.Since(start)}
	return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: content},
		Usage: u, FinishReason: "stop", Model: "hipify:" + m.name}, nil
}

// answer is the reply's text.
func (m *Model) answer(msgs []agent.Message) string {
	src, ok := Program(msgs)
	if !ok {
		return "I found no CUDA program (a fenced code block labelled cuda) in the request, so the rule-based translator has nothing to translate."
	}
	if !strings.HasSuffix(src, "\n") {
		src += "\n"
	}
	r, err := m.table.Translate(src)
	if err != nil {
		return "The rule-based translator cannot read this program: " + oneLine(err.Error()) + "."
	}
	if !r.OK() {
		var parts []string
		for i, is := range r.Unsupported {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", len(r.Unsupported)-i))
				break
			}
			parts = append(parts, fmt.Sprintf("line %d: %s (%s)", is.Line, is.Construct, oneLine(is.Reason)))
		}
		return "The rule-based translator cannot translate this program to HIP: " + strings.Join(parts, "; ") + "."
	}
	return fmt.Sprintf("Rule-based translation (hipify, %d replacements):\n\n```hip\n%s```\n", r.Replacements, r.HIP)
}

// oneLine keeps a message on one line and free of backticks, so that a
// refusal never reads as code.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "`", "'")
}

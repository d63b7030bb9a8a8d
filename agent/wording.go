package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// The words the attempt loop says to a model. They live here until the
// prompts package takes them over; keep them free of lane specifics.

// Markers of the plain-text tool protocol (ToolMode "text").
const (
	ToolCallOpen    = "<tool_call>"
	ToolCallClose   = "</tool_call>"
	ToolResultClose = "</tool_result>"
)

// NoAnswerPrompt is sent after a final reply from which no answer could be
// extracted.
const NoAnswerPrompt = "I could not find an answer in your reply. Reply again with your " +
	"complete final answer inside a fenced code block (```)."

// ToolNotRunResult is the tool result for a call made past the tool-call limit.
const ToolNotRunResult = "error: not run: the tool call limit was reached"

// RepairPrompt asks for a corrected full answer after verdict v failed.
func RepairPrompt(v tools.Verdict) string {
	var b strings.Builder
	b.WriteString("Your answer failed verification")
	if v.Stage != "" {
		fmt.Fprintf(&b, " at the %s stage", v.Stage)
	}
	if v.Class != tools.ClassNone {
		fmt.Fprintf(&b, " (%s)", v.Class)
	}
	b.WriteString(".\n")
	if d := strings.TrimSpace(v.Diagnostic); d != "" {
		b.WriteString("\n" + d + "\n")
	}
	b.WriteString("\nFix the problem and reply with the complete corrected answer in a fenced " +
		"code block: the whole answer, not only the changed lines.")
	return b.String()
}

// ToolLimitPrompt tells the model that its max tool calls are used up.
func ToolLimitPrompt(max int) string {
	return fmt.Sprintf("You have used all %d tool calls. No more tools are available: "+
		"give your complete final answer now, in a fenced code block.", max)
}

// UnknownToolResult is the tool result for a call to a tool that is not offered.
func UnknownToolResult(name string, known []string) string {
	if len(known) == 0 {
		return fmt.Sprintf("error: unknown tool %q: no tools are available", name)
	}
	return fmt.Sprintf("error: unknown tool %q; available tools: %s", name, strings.Join(known, ", "))
}

// BadToolCallResult is the tool result for a call that could not be read
// (malformed <tool_call> block, arguments that are not a JSON object).
func BadToolCallResult(err error) string {
	return fmt.Sprintf("error: bad tool call: %v", err)
}

// ToolErrorResult is the tool result when the tool itself failed to run.
func ToolErrorResult(name string, err error) string {
	return fmt.Sprintf("error: tool %s failed: %v", name, err)
}

// FormatToolResult wraps one tool result for the text protocol.
func FormatToolResult(name, text string) string {
	return fmt.Sprintf("<tool_result name=%q>\n%s\n%s", name, text, ToolResultClose)
}

// TextToolProtocol describes ts and the text tool protocol; the loop appends
// it to the system prompt in ToolMode "text".
func TextToolProtocol(ts []tools.Tool) string {
	var b strings.Builder
	b.WriteString("You can call tools before you give your final answer. To call a tool, write a line\n")
	b.WriteString(ToolCallOpen + `{"name": "TOOL_NAME", "arguments": {...}}` + ToolCallClose + "\n")
	b.WriteString("and stop. The result comes back in a message of the form\n")
	b.WriteString(`<tool_result name="TOOL_NAME">...` + ToolResultClose + "\n")
	b.WriteString("You may call several tools in one message. A message without tool calls is " +
		"your final answer.\n\nTools:\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "\n- %s: %s\n  arguments (JSON schema): %s\n", t.Name(), t.Description(), compactJSON(t.Schema()))
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

var textToolCallRE = regexp.MustCompile(`(?s)` + regexp.QuoteMeta(ToolCallOpen) + `(.*?)` + regexp.QuoteMeta(ToolCallClose))

// textToolCall is one <tool_call> block of a reply; err is set when it could
// not be read.
type textToolCall struct {
	call ToolCall
	err  error
}

// parseTextToolCalls finds the <tool_call> blocks in content, in order.
func parseTextToolCalls(content string) []textToolCall {
	var out []textToolCall
	for _, m := range textToolCallRE.FindAllStringSubmatch(content, -1) {
		var v struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		body := strings.TrimSpace(m[1])
		var tc textToolCall
		switch err := json.Unmarshal([]byte(body), &v); {
		case err != nil:
			tc.err = fmt.Errorf("%s is not a JSON object with name and arguments: %v", ToolCallOpen, err)
		case v.Name == "":
			tc.err = fmt.Errorf("%s has no name", ToolCallOpen)
		default:
			tc.call = ToolCall{Name: v.Name, Arguments: v.Arguments}
		}
		out = append(out, tc)
	}
	return out
}

package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
)

// Format is an export's record layout.
type Format string

// The formats.
const (
	// Raw is kiln's own record (runs.Sample, schema kiln.sample/v1) with
	// a curation section: full provenance, not a trainer's format.
	Raw Format = "raw"
	// Messages is chat JSONL in the OpenAI layout that TRL's SFTTrainer,
	// ms-swift and Axolotl (type chat_template) read:
	// {"messages": [{"role": "system"|"user"|"assistant"|"tool", "content": ...}]}.
	Messages Format = "messages"
	// ShareGPT is LLaMA-Factory's sharegpt layout: {"conversations":
	// [{"from": "human"|"gpt"|"function_call"|"observation", "value": ...}],
	// "system": ...}.
	ShareGPT Format = "sharegpt"
	// Alpaca is {"instruction", "input", "output", "system"}.
	Alpaca Format = "alpaca"
)

// Formats lists the formats by name.
var Formats = []Format{Raw, Messages, ShareGPT, Alpaca}

// ParseFormat checks a format name.
func ParseFormat(s string) (Format, error) {
	f := Format(s)
	if slices.Contains(Formats, f) {
		return f, nil
	}
	return "", fmt.Errorf("format %q: want one of raw, messages, sharegpt, alpaca", s)
}

// Think says where a sample's reasoning goes.
type Think string

// The reasoning placements.
const (
	// ThinkField puts the reasoning in the assistant message's
	// "reasoning_content" (messages format; the field Qwen3's and
	// DeepSeek-R1's chat templates read). Formats without such a field
	// use tags.
	ThinkField Think = "field"
	// ThinkTags puts it in the content, before the answer, inside
	// <think>...</think>.
	ThinkTags Think = "tags"
	// ThinkNone drops it.
	ThinkNone Think = "none"
)

// ParseThink checks a reasoning placement.
func ParseThink(s string) (Think, error) {
	switch t := Think(s); t {
	case ThinkField, ThinkTags, ThinkNone:
		return t, nil
	}
	return "", fmt.Errorf("think %q: want field, tags or none", s)
}

// conversation is the part of an attempt's transcript a record keeps.
type conversation struct {
	system string
	turns  []agent.Message // user, assistant and tool turns
}

// transcript reads a sample's conversation: with trajectories every turn
// (tool calls, tool results, repair turns); otherwise the first user turn
// and the final assistant reply. Attempts stored without a transcript
// give the task's prompt and the answer.
func transcript(r runs.Result, trajectories bool) (conversation, error) {
	var msgs []agent.Message
	if len(r.Attempt.Transcript) > 0 {
		if err := json.Unmarshal(r.Attempt.Transcript, &msgs); err != nil {
			return conversation{}, fmt.Errorf("attempt %s: transcript: %w", r.Attempt.ID, err)
		}
	}
	var c conversation
	var user, final *agent.Message
	var turns []agent.Message
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case agent.RoleSystem:
			if c.system == "" {
				c.system = m.Content
			}
			continue
		case agent.RoleUser:
			if user == nil {
				user = m
			}
		case agent.RoleAssistant:
			if len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
				final = m
			}
		}
		turns = append(turns, *m)
	}
	if user == nil || final == nil {
		prompt := r.Task.Prompt
		if user != nil {
			prompt = user.Content
		}
		if prompt == "" || r.Attempt.Answer == "" {
			return conversation{}, fmt.Errorf("attempt %s: no user turn and final reply in the transcript, and no stored prompt", r.Attempt.ID)
		}
		c.turns = []agent.Message{{Role: agent.RoleUser, Content: prompt}, {Role: agent.RoleAssistant, Content: r.Attempt.Answer}}
		return c, nil
	}
	if !trajectories {
		c.turns = []agent.Message{*user, *final}
		return c, nil
	}
	// The trajectory ends with the final reply: turns after it (a repair
	// request the model never answered) are not part of the sample.
	end := len(turns)
	for end > 0 && !(turns[end-1].Role == agent.RoleAssistant && turns[end-1].Content == final.Content && len(turns[end-1].ToolCalls) == 0) {
		end--
	}
	c.turns = turns[:end]
	return c, nil
}

// withThink puts reasoning before content in think tags.
func withThink(reasoning, content string) string {
	if strings.TrimSpace(reasoning) == "" {
		return content
	}
	return "<think>\n" + strings.TrimSpace(reasoning) + "\n</think>\n\n" + content
}

// meta are the fields every trainer record carries besides the
// conversation: what it is and where it came from.
type meta struct {
	ID         string   `json:"id"`
	Lane       string   `json:"lane"`
	Task       string   `json:"task"`
	Round      int      `json:"round"`
	Categories []string `json:"categories"`
	Model      string   `json:"model"`
	Difficulty string   `json:"difficulty"`
	Speedup    *float64 `json:"speedup,omitempty"`
}

type chatMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Name             string         `json:"name,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // a JSON string, as OpenAI sends it
}

type messagesRecord struct {
	Messages []chatMessage `json:"messages"`
	meta
}

func messagesOf(c conversation, think Think, m meta) messagesRecord {
	rec := messagesRecord{meta: m}
	if c.system != "" {
		rec.Messages = append(rec.Messages, chatMessage{Role: "system", Content: c.system})
	}
	for _, t := range c.turns {
		cm := chatMessage{Role: string(t.Role), Content: t.Content, ToolCallID: t.ToolCallID, Name: t.Name}
		if t.Role == agent.RoleAssistant {
			switch think {
			case ThinkField:
				cm.ReasoningContent = strings.TrimSpace(t.Reasoning)
			case ThinkTags:
				cm.Content = withThink(t.Reasoning, t.Content)
			}
			for _, tc := range t.ToolCalls {
				args := string(tc.Arguments)
				if args == "" {
					args = "{}"
				}
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: args}})
			}
		}
		rec.Messages = append(rec.Messages, cm)
	}
	return rec
}

type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

type shareGPTRecord struct {
	Conversations []shareGPTTurn `json:"conversations"`
	System        string         `json:"system"`
	meta
}

// shareGPTOf writes LLaMA-Factory's sharegpt layout: human and
// observation turns at odd positions, gpt and function_call at even ones.
// An assistant turn with tool calls becomes one function_call turn (its
// calls as a JSON object, or a list when several; text beside the calls
// is not kept), consecutive tool results one observation turn. Reasoning
// goes in think tags unless think is none.
func shareGPTOf(c conversation, think Think, m meta) shareGPTRecord {
	rec := shareGPTRecord{System: c.system, meta: m}
	for _, t := range c.turns {
		switch t.Role {
		case agent.RoleUser:
			rec.Conversations = append(rec.Conversations, shareGPTTurn{From: "human", Value: t.Content})
		case agent.RoleTool:
			if n := len(rec.Conversations); n > 0 && rec.Conversations[n-1].From == "observation" {
				rec.Conversations[n-1].Value += "\n\n" + t.Content
				continue
			}
			rec.Conversations = append(rec.Conversations, shareGPTTurn{From: "observation", Value: t.Content})
		case agent.RoleAssistant:
			if len(t.ToolCalls) > 0 {
				type call struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				}
				calls := make([]call, len(t.ToolCalls))
				for i, tc := range t.ToolCalls {
					args := tc.Arguments
					if !json.Valid(args) {
						args, _ = json.Marshal(string(tc.Arguments))
					}
					calls[i] = call{Name: tc.Name, Arguments: args}
				}
				var v []byte
				if len(calls) == 1 {
					v, _ = json.Marshal(calls[0])
				} else {
					v, _ = json.Marshal(calls)
				}
				rec.Conversations = append(rec.Conversations, shareGPTTurn{From: "function_call", Value: string(v)})
				continue
			}
			content := t.Content
			if think != ThinkNone {
				content = withThink(t.Reasoning, content)
			}
			rec.Conversations = append(rec.Conversations, shareGPTTurn{From: "gpt", Value: content})
		}
	}
	return rec
}

type alpacaRecord struct {
	Instruction string `json:"instruction"`
	Input       string `json:"input"`
	Output      string `json:"output"`
	System      string `json:"system"`
	meta
}

// alpacaOf writes one instruction and its answer (no trajectories).
func alpacaOf(c conversation, think Think, m meta) alpacaRecord {
	user, final := c.turns[0], c.turns[len(c.turns)-1]
	out := final.Content
	if think != ThinkNone {
		out = withThink(final.Reasoning, out)
	}
	return alpacaRecord{Instruction: user.Content, Output: out, System: c.system, meta: m}
}

// reasoningLength is an attempt's reasoning in tokens: the count the
// model's usage gave, or, when it gave none, the reasoning text of the
// transcript at four bytes a token.
func reasoningLength(r runs.Result) int {
	if n := r.Attempt.Usage.ReasoningTokens; n > 0 {
		return n
	}
	if !bytes.Contains(r.Attempt.Transcript, []byte(`"reasoning"`)) {
		return 0
	}
	var msgs []struct {
		Reasoning string `json:"reasoning"`
	}
	if json.Unmarshal(r.Attempt.Transcript, &msgs) != nil {
		return 0
	}
	n := 0
	for _, m := range msgs {
		n += len(m.Reasoning)
	}
	return (n + 3) / 4
}

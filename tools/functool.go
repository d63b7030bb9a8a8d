package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// FuncTool is a Tool made of fields and a function, for tools whose state
// is a closure (a lane's tools bound to one item).
type FuncTool struct {
	ToolName        string
	ToolDescription string
	// ToolSchema is the JSON schema of the arguments object.
	ToolSchema json.RawMessage
	Fn         func(ctx context.Context, args json.RawMessage) (string, error)
}

var _ Tool = (*FuncTool)(nil)

func (t *FuncTool) Name() string            { return t.ToolName }
func (t *FuncTool) Description() string     { return t.ToolDescription }
func (t *FuncTool) Schema() json.RawMessage { return t.ToolSchema }

// Call runs Fn.
func (t *FuncTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return t.Fn(ctx, args)
}

// SourceTool is a FuncTool whose arguments are one source text,
// {"source": string}, described to the model by sourceDescription. fn gets
// the source, a fenced block in it unwrapped by extract (nil: none); bad
// arguments are answered "error: ..." without calling fn.
func SourceTool(name, description, sourceDescription string, extract func(string) (string, bool),
	fn func(ctx context.Context, source string) (string, error)) *FuncTool {
	return &FuncTool{ToolName: name, ToolDescription: description, ToolSchema: sourceSchema(sourceDescription),
		Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
			src, err := parseSource(args, extract)
			if err != nil {
				return "error: " + err.Error(), nil
			}
			return fn(ctx, src)
		}}
}

// sourceSchema is the arguments schema of a SourceTool.
func sourceSchema(description string) json.RawMessage {
	desc, _ := json.Marshal(description)
	return json.RawMessage(`{"type":"object","properties":{"source":{"type":"string",` +
		`"description":` + string(desc) + `}},"required":["source"],"additionalProperties":false}`)
}

// parseSource reads {"source": ...}; a fenced block inside it is
// unwrapped by extract.
func parseSource(args json.RawMessage, extract func(string) (string, bool)) (string, error) {
	var a struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("arguments must be a JSON object {\"source\": string}: %v", err)
	}
	if extract != nil && strings.Contains(a.Source, "```") {
		if inner, ok := extract(a.Source); ok {
			a.Source = inner
		}
	}
	if strings.TrimSpace(a.Source) == "" {
		return "", fmt.Errorf("\"source\" is empty")
	}
	return a.Source, nil
}

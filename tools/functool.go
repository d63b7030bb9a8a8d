package tools

import (
	"context"
	"encoding/json"
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

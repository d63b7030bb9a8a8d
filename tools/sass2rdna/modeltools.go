package sass2rdna

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

var (
	asmArgsSchema = json.RawMessage(`{"type":"object","properties":{"asm":{"type":"string",` +
		`"description":"the complete gfx1100 assembly: target directive, every kernel, descriptors and metadata"}},` +
		`"required":["asm"],"additionalProperties":false}`)
	noArgsSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
)

// Tools returns the model tools: "sass_sm90" (the task's SASS, compiled
// from its CUDA program: what a synthesised task's prompt does not show)
// and "check_rdna3" (the lane's verification of a draft).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	return []tools.Tool{
		&tools.FuncTool{
			ToolName: "sass_sm90",
			ToolDescription: "Compile the task's CUDA program with nvcc 11.8 for sm_90 and return its SASS " +
				"(cuobjdump -sass, comments removed). Takes no arguments.",
			ToolSchema: noArgsSchema,
			Fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
				cu := item.Files[FileCUDA]
				if strings.TrimSpace(cu) == "" {
					return "error: this task has no CUDA program", nil
				}
				sass, err := l.SASS(ctx, cu)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				return sass, nil
			},
		},
		&tools.FuncTool{
			ToolName: "check_rdna3",
			ToolDescription: "Check a draft of the answer as the final answer is checked: target and kernel descriptors, " +
				"llvm-mc for gfx1100, ld.lld, symbols and metadata. Returns PASS or the failing stage and its errors.",
			ToolSchema: asmArgsSchema,
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a struct {
					Asm string `json:"asm"`
				}
				if err := json.Unmarshal(args, &a); err != nil {
					return "error: arguments must be a JSON object {\"asm\": string}: " + err.Error(), nil
				}
				if strings.Contains(a.Asm, "```") {
					if inner, ok := Extract(a.Asm); ok {
						a.Asm = inner
					}
				}
				v, err := l.Verify(ctx, item, a.Asm)
				if err != nil {
					return "", err
				}
				if pending := tools.PendingStages(v); v.Pass && len(pending) > 0 {
					return fmt.Sprintf("PASS (CPU stages; opcode similarity to hipcc %.2f; %s needs an AMD GPU)",
						v.Measurements["opcode_similarity"], strings.Join(pending, ", ")), nil
				} else if v.Pass {
					return fmt.Sprintf("PASS (every stage, run on this host's AMD GPU; opcode similarity to hipcc %.2f)", v.Measurements["opcode_similarity"]), nil
				}
				return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic), nil
			},
		},
	}
}

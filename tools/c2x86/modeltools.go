package c2x86

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// asmArgsSchema is the arguments schema of both model tools.
var asmArgsSchema = json.RawMessage(`{"type":"object","properties":{"asm":{"type":"string",` +
	`"description":"the complete x86-64 GNU assembler source (AT&T syntax, or .intel_syntax noprefix); ` +
	`floating constants may be written as .float/.double expressions such as .double 1.0/3.0"}},` +
	`"required":["asm"],"additionalProperties":false}`)

type asmArgs struct {
	Asm string `json:"asm"`
}

// parseAsmArgs reads {"asm": ...}; a fenced block inside it is unwrapped.
func parseAsmArgs(args json.RawMessage) (string, error) {
	var a asmArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("arguments must be a JSON object {\"asm\": string}: %v", err)
	}
	if strings.Contains(a.Asm, "```") {
		if inner, ok := ExtractAsm(a.Asm); ok {
			a.Asm = inner
		}
	}
	if strings.TrimSpace(a.Asm) == "" {
		return "", fmt.Errorf("\"asm\" is empty")
	}
	return a.Asm, nil
}

// Tools returns the model-facing tools for item: "assemble" (convert and
// assemble only) and "run_tests" (the full verification).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	fn := item.Meta["function"]
	if fn == "" {
		fn = "the function"
	}
	return []tools.Tool{
		&tools.FuncTool{
			ToolName: "assemble",
			ToolDescription: fmt.Sprintf("Assemble x86-64 assembly for %s with GNU as (after converting "+
				".float/.double constant expressions). Returns \"ok\" or the assembler errors with line numbers.", fn),
			ToolSchema: asmArgsSchema,
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				asm, err := parseAsmArgs(args)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				return l.assembleOnly(ctx, asm)
			},
		},
		&tools.FuncTool{
			ToolName: "run_tests",
			ToolDescription: fmt.Sprintf("Assemble the x86-64 assembly for %s, link it with the test driver, "+
				"run it and compare its output with the reference. Returns PASS, or the failing stage with "+
				"assembler/linker errors, the crash signal or the first differing output lines.", fn),
			ToolSchema: asmArgsSchema,
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				asm, err := parseAsmArgs(args)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				v, err := l.Verify(ctx, item, asm)
				if err != nil {
					return "", err
				}
				return describeVerdict(v), nil
			},
		},
	}
}

// assembleOnly prepares (the convert stage) and assembles asm.
func (l *Lane) assembleOnly(ctx context.Context, asm string) (string, error) {
	converted, _, _, err := prepareAsm(asm)
	if err != nil {
		return err.Error(), nil
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return "", fmt.Errorf("c2x86 assemble: %w", err)
	}
	defer box.Close()
	if err := box.WriteFile(answerFile, []byte(converted), 0o644); err != nil {
		return "", fmt.Errorf("c2x86 assemble: %w", err)
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{l.cfg.AS, "--64", "-o", answerObj, answerFile}, Limits: l.cfg.BuildLimits})
	if err != nil {
		return "", fmt.Errorf("c2x86 assemble: %w", err)
	}
	if !res.OK() {
		return toolFailure(res, assemblerDiagnostic(string(res.Stderr), converted, l.cfg.DiagnosticLines)), nil
	}
	if w := strings.TrimSpace(string(res.Stderr)); w != "" {
		return "ok (with warnings)\n" + firstLines(w, l.cfg.DiagnosticLines), nil
	}
	return "ok", nil
}

// describeVerdict is the text run_tests returns.
func describeVerdict(v tools.Verdict) string {
	if v.Pass {
		return "PASS: the program's output matches the reference."
	}
	return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic)
}

package ptx2cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// sourceArgsSchema is the arguments schema of the model tools.
var sourceArgsSchema = json.RawMessage(`{"type":"object","properties":{"source":{"type":"string",` +
	`"description":"the CUDA source of the kernel (the __global__ function and its helpers; no main)"}},` +
	`"required":["source"],"additionalProperties":false}`)

// parseSourceArgs reads {"source": ...}; a fenced block inside is
// unwrapped.
func parseSourceArgs(args json.RawMessage) (string, error) {
	var a struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return "", fmt.Errorf("arguments must be a JSON object {\"source\": string}: %v", err)
	}
	if strings.Contains(a.Source, "```") {
		if inner, ok := ExtractKernel(a.Source); ok {
			a.Source = inner
		}
	}
	if strings.TrimSpace(a.Source) == "" {
		return "", fmt.Errorf("\"source\" is empty")
	}
	return a.Source, nil
}

// Tools returns the model-facing tools: "compile_kernel" (the check and
// compile stages: does the kernel build into the task's harness) and
// "check_kernel" (the whole verification; on a host without a GPU it
// stops after compiling).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	return []tools.Tool{
		&tools.FuncTool{
			ToolName: "compile_kernel",
			ToolDescription: "Compile a kernel into the task's test harness with nvcc 11.8 for sm_90 (the same flags as the " +
				"original). Returns \"ok\" or the errors.",
			ToolSchema: sourceArgsSchema,
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				src, err := parseSourceArgs(args)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				return l.compileOnly(ctx, item, src)
			},
		},
		&tools.FuncTool{
			ToolName: "check_kernel",
			ToolDescription: "Run the whole check on a kernel: build it into the task's harness and, on a GPU host, run it " +
				"and the original kernel on the same inputs and compare every output. Returns PASS or the failing stage and why.",
			ToolSchema: sourceArgsSchema,
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				src, err := parseSourceArgs(args)
				if err != nil {
					return "error: " + err.Error(), nil
				}
				v, err := l.Verify(ctx, item, src)
				if err != nil {
					return "", err
				}
				return describeVerdict(v), nil
			},
		},
	}
}

// compileOnly is compile_kernel: the check stage, then the answer's build
// (cached like Verify's).
func (l *Lane) compileOnly(ctx context.Context, item tools.Item, src string) (string, error) {
	if isProgramTask(item) {
		return l.compileProgramOnly(ctx, item, src)
	}
	h, _, err := taskOf(item)
	if err != nil {
		return "", err
	}
	if class, why := CheckAnswer(src, h.Kernel); class != tools.ClassNone {
		return fmt.Sprintf("FAIL (%s): %s", class, why), nil
	}
	res, err := l.compile(ctx, l.buildJob(h, src))
	if err != nil {
		return "", fmt.Errorf("ptx2cuda compile: %w", err)
	}
	if !res.ok() {
		return "FAIL (" + string(res.class(tools.ClassCompileError)) + "):\n" +
			failureText(res, compilerDiagnostic(string(res.e.Stderr), l.cfg.DiagnosticLines)), nil
	}
	return "ok: the kernel builds into the harness", nil
}

// describeVerdict is the text check_kernel returns.
func describeVerdict(v tools.Verdict) string {
	if v.Pass {
		if pending := tools.PendingStages(v); len(pending) > 0 {
			return "PASS (compiles; not run here, no GPU: " + strings.Join(pending, ", ") + ")"
		}
		return "PASS: the outputs match the original kernel's."
	}
	return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic)
}

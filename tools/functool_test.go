package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSourceTool(t *testing.T) {
	t.Parallel()
	extract := func(s string) (string, bool) {
		s = strings.TrimPrefix(strings.TrimSpace(s), "```cuda\n")
		return strings.TrimSuffix(s, "\n```"), true
	}
	tool := SourceTool("compile", "Compile.", "the kernel (no main)", extract,
		func(_ context.Context, src string) (string, error) { return "got " + src, nil })
	if want := `{"type":"object","properties":{"source":{"type":"string","description":"the kernel (no main)"}},` +
		`"required":["source"],"additionalProperties":false}`; string(tool.Schema()) != want {
		t.Errorf("schema = %s, want %s", tool.Schema(), want)
	}
	tests := []struct {
		name, args, want string
	}{
		{"plain", `{"source":"k()"}`, "got k()"},
		{"fenced", `{"source":"` + "```cuda\\nk()\\n```" + `"}`, "got k()"},
		{"empty", `{"source":"  "}`, `error: "source" is empty`},
		{"not an object", `[1]`, `error: arguments must be a JSON object {"source": string}: json: cannot unmarshal array into Go value of type struct { Source string "json:\"source\"" }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tool.Call(context.Background(), json.RawMessage(tt.args))
			if err != nil || got != tt.want {
				t.Errorf("Call(%s) = %q, %v; want %q", tt.args, got, err, tt.want)
			}
		})
	}
}

package tools

import (
	"strings"
	"testing"
)

func TestDiffLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want, got string
		max             int
		has             []string
	}{
		{"equal", "a\nb\n", "a\nb\n", 10, nil},
		{"one line", "a\nb\nc\n", "a\nX\nc\n", 10, []string{`line 2: expected "b"`, `got      "X"`, "(expected 3 lines, got 3)"}},
		{"missing lines", "a\nb\n", "a\n", 10, []string{`line 2: expected "b"`, "(no line)"}},
		{"extra lines", "a\n", "a\nb\n", 10, []string{`expected (no line)`, `got      "b"`}},
		{"capped", "1\n2\n3\n4\n", "a\nb\nc\nd\n", 2, []string{"line 1:", "line 2:", "... and 2 more differing lines"}},
		{"final newline", "a\n", "a", 10, []string{"final newline differs"}},
	}
	for _, tt := range tests {
		d := DiffLines([]byte(tt.want), []byte(tt.got), tt.max)
		if tt.has == nil && d != "" {
			t.Errorf("%s: want no diff, got %q", tt.name, d)
		}
		for _, h := range tt.has {
			if !strings.Contains(d, h) {
				t.Errorf("%s: diff %q lacks %q", tt.name, d, h)
			}
		}
		if tt.name == "capped" && strings.Contains(d, "line 3:") {
			t.Errorf("capped diff shows line 3: %q", d)
		}
	}
}

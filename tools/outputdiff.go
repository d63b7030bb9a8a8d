package tools

import (
	"bytes"
	"fmt"
	"strings"
)

// maxDiffLineLen bounds one quoted line in a diff.
const maxDiffLineLen = 200

// DiffLines describes how got differs from want, line by line, for a repair
// prompt: the first differing lines (at most maxLines of them) as
//
//	line 3: expected "42"
//	        got      "41"
//
// followed by a count of further differences and line totals. It returns ""
// when the two are equal.
func DiffLines(want, got []byte, maxLines int) string {
	if bytes.Equal(want, got) {
		return ""
	}
	if maxLines < 1 {
		maxLines = 1
	}
	w, g := splitLines(want), splitLines(got)
	var b strings.Builder
	shown, differing := 0, 0
	n := max(len(w), len(g))
	for i := 0; i < n; i++ {
		var wl, gl string
		wok, gok := i < len(w), i < len(g)
		if wok {
			wl = w[i]
		}
		if gok {
			gl = g[i]
		}
		if wok && gok && wl == gl {
			continue
		}
		differing++
		if shown >= maxLines {
			continue
		}
		shown++
		fmt.Fprintf(&b, "line %d: expected %s\n", i+1, quoteLine(wl, wok))
		fmt.Fprintf(&b, "%*s got      %s\n", len(fmt.Sprint(i+1))+5, "", quoteLine(gl, gok))
	}
	if differing > shown {
		fmt.Fprintf(&b, "... and %d more differing lines\n", differing-shown)
	}
	fmt.Fprintf(&b, "(expected %d lines, got %d)", len(w), len(g))
	if len(want) > 0 && len(got) > 0 && (want[len(want)-1] == '\n') != (got[len(got)-1] == '\n') {
		b.WriteString("; the final newline differs")
	}
	return b.String()
}

func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

func quoteLine(s string, ok bool) string {
	if !ok {
		return "(no line)"
	}
	if len(s) > maxDiffLineLen {
		return fmt.Sprintf("%q...", s[:maxDiffLineLen])
	}
	return fmt.Sprintf("%q", s)
}

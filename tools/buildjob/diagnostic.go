package buildjob

import (
	"fmt"
	"regexp"
	"strings"
)

// boxPathRE matches a sandbox box's folder in a path.
var boxPathRE = regexp.MustCompile(`\S*/box-[0-9a-f]+/`)

// Diagnostics picks a tool's error lines out of its output, without
// sandbox paths; what differs between tools is a field.
type Diagnostics struct {
	// ErrorLine matches a line that reports an error.
	ErrorLine *regexp.Regexp
	// Ignore, when set, passes over error lines that contain it.
	Ignore string
	// Excerpt, when set, keeps up to two lines after an error line while
	// it holds (gcc's and clang's source excerpts, llvm-mc's caret).
	Excerpt func(line string) bool
	// ErrorsPerLine is how many error lines each line of the budget
	// keeps (0: 1).
	ErrorsPerLine int
	// Count, when set, ends a diagnostic that kept fewer error lines
	// than the text has lines containing Count with their number.
	Count string
}

// Of is text's error lines (maxLines × ErrorsPerLine at most, with their
// excerpts); text's first maxLines lines when no line says error.
func (d Diagnostics) Of(text string, maxLines int) string {
	text = boxPathRE.ReplaceAllString(text, "")
	lines := strings.Split(text, "\n")
	limit := maxLines
	if d.ErrorsPerLine > 0 {
		limit = d.ErrorsPerLine * maxLines
	}
	var out []string
	errs := 0
	for i := 0; i < len(lines) && errs < limit; i++ {
		if !d.ErrorLine.MatchString(lines[i]) || (d.Ignore != "" && strings.Contains(lines[i], d.Ignore)) {
			continue
		}
		errs++
		out = append(out, Clip(strings.TrimRight(lines[i], " \r"), 300))
		for k := i + 1; d.Excerpt != nil && k < len(lines) && k <= i+2 && d.Excerpt(lines[k]); k++ {
			out = append(out, Clip(strings.TrimRight(lines[k], " \r"), 300))
			i = k
		}
	}
	if len(out) == 0 {
		return FirstLines(text, maxLines)
	}
	if d.Count != "" {
		if n := strings.Count(text, d.Count); n > errs {
			out = append(out, fmt.Sprintf("... (%d errors in all)", n))
		}
	}
	return strings.Join(out, "\n")
}

// FirstLines is s's first n lines, each clipped, and how many it left out.
func FirstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	for i, l := range lines {
		lines[i] = Clip(l, 300)
	}
	return strings.Join(lines, "\n")
}

// Clip is s cut to n bytes, marked "..." when cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

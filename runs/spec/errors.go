package spec

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem in a spec, located by file, line and field path.
// Line is 0 when unknown (a spec built in code rather than parsed); Field is
// empty for problems with the document as a whole (syntax errors, empty file).
type Error struct {
	File  string // as given to Parse; may be empty
	Line  int    // 1-based; 0 = unknown
	Field string // path such as "models[1].concurrency"
	Msg   string
}

// Error formats the problem as "file:line: field: msg", leaving out the
// parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		} else {
			b.WriteString("line ")
		}
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Field)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one spec, sorted by line. Parse, Load and
// Validate return it (never empty) as their error.
type Errors []*Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.As find the individual *Error values.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sortErrors orders by line, then field, then message, and drops exact
// duplicates.
func sortErrors(es Errors) Errors {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Msg, b.Msg))
	})
	return slices.CompactFunc(es, func(a, b *Error) bool {
		return a.Line == b.Line && a.Field == b.Field && a.Msg == b.Msg
	})
}

// suggest returns the candidate closest to s when it is close enough to be a
// plausible typo, or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(1, len(s)/3)
	if bestD < 0 || bestD > limit || bestD == len(s) {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent bytes
// each cost 1 (field names are ASCII).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

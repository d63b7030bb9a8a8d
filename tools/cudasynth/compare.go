package cudasynth

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/tools/buildjob"
)

// Tolerance says when the CUDA build's and the HIP build's outputs agree.
//
// Both outputs are compared line by line. Two lines agree when they are
// equal, or when they are equal after every number is replaced by a
// placeholder and each pair of numbers a, b satisfies
//
//	|a - b| <= Abs + Rel * max(|a|, |b|)
//
// (NaN equals NaN, infinities must match in sign). Both builds come from
// the same nvcc on the same GPU, so most programs agree bit for bit; the
// tolerance absorbs float reductions whose order depends on scheduling
// (atomicAdd on floats). On lines that match IgnoreNumbers (timings,
// bandwidths) the numbers are not compared at all, only the words around
// them. The line counts must be equal.
type Tolerance struct {
	Rel, Abs float64
	// IgnoreNumbers matches lines whose numbers are measurements, not
	// results. nil: DefaultIgnoreNumbers; set an expression that matches
	// nothing ("$^") to compare every number.
	IgnoreNumbers *regexp.Regexp
}

// DefaultIgnoreNumbers matches lines that report time or throughput.
var DefaultIgnoreNumbers = regexp.MustCompile(`(?i)\b(time|elapsed|ms|msec|usec|us|ns|sec|secs|seconds?|milliseconds?|` +
	`microseconds?|gb/s|gib/s|mb/s|gflops?|tflops?|bandwidth|throughput|speed ?up|duration|clock|cycles)\b`)

// DefaultTolerance is relative 1e-4, absolute 1e-6, timing lines ignored.
func DefaultTolerance() Tolerance {
	return Tolerance{Rel: 1e-4, Abs: 1e-6, IgnoreNumbers: DefaultIgnoreNumbers}
}

var numberRe = regexp.MustCompile(`[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|(?i:nan|inf(?:inity)?))`)

// CompareOutputs compares the outputs of the CUDA (want) and HIP (got)
// builds under tol. It returns "" when they agree, otherwise the first
// differing lines (at most maxLines) for a diagnostic.
func CompareOutputs(want, got []byte, tol Tolerance, maxLines int) string {
	return CompareOutputsNamed(want, got, tol, maxLines, "CUDA", "HIP")
}

// CompareOutputsNamed is CompareOutputs with the two outputs named in the
// diagnostic (wantName, gotName: "original", "answer").
func CompareOutputsNamed(want, got []byte, tol Tolerance, maxLines int, wantName, gotName string) string {
	if tol.IgnoreNumbers == nil {
		tol.IgnoreNumbers = DefaultIgnoreNumbers
	}
	if maxLines < 1 {
		maxLines = 1
	}
	w := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
	g := strings.Split(strings.TrimRight(string(got), "\n"), "\n")
	var diffs []string
	differing := 0
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		why := ""
		switch {
		case i >= len(w):
			why = "extra line"
		case i >= len(g):
			why = "missing line"
		default:
			why = compareLine(wl, gl, tol)
		}
		if why == "" {
			continue
		}
		differing++
		if len(diffs) < maxLines {
			pad := strings.Repeat(" ", max(len(wantName)-len(gotName), 0))
			diffs = append(diffs, fmt.Sprintf("line %d (%s): %s %q\n    %s%s %q", i+1, why, wantName, buildjob.Clip(wl, 160), gotName, pad, buildjob.Clip(gl, 160)))
		}
	}
	if differing == 0 {
		return ""
	}
	s := strings.Join(diffs, "\n")
	if differing > len(diffs) {
		s += fmt.Sprintf("\n... %d more differing lines", differing-len(diffs))
	}
	return s + fmt.Sprintf("\n(%s printed %d lines, %s %d)", wantName, len(w), gotName, len(g))
}

// compareLine returns "" when two lines agree, else why not.
func compareLine(w, g string, tol Tolerance) string {
	if w == g {
		return ""
	}
	ws, wn := splitNumbers(w)
	gs, gn := splitNumbers(g)
	if ws != gs || len(wn) != len(gn) {
		return "text differs"
	}
	if tol.IgnoreNumbers.MatchString(w) {
		return ""
	}
	for i := range wn {
		a, errA := strconv.ParseFloat(strings.TrimPrefix(wn[i], "+"), 64)
		b, errB := strconv.ParseFloat(strings.TrimPrefix(gn[i], "+"), 64)
		if errA != nil || errB != nil {
			if !strings.EqualFold(wn[i], gn[i]) {
				return "text differs"
			}
			continue
		}
		if !closeEnough(a, b, tol) {
			return fmt.Sprintf("%s vs %s beyond tolerance", wn[i], gn[i])
		}
	}
	return ""
}

func closeEnough(a, b float64, tol Tolerance) bool {
	switch {
	case math.IsNaN(a) || math.IsNaN(b):
		return math.IsNaN(a) && math.IsNaN(b)
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return a == b
	}
	return math.Abs(a-b) <= tol.Abs+tol.Rel*math.Max(math.Abs(a), math.Abs(b))
}

// splitNumbers replaces numbers by "\x00" and returns them in order.
// Numbers glued to identifiers (x86, sm_90) stay text.
func splitNumbers(s string) (string, []string) {
	var nums []string
	var b strings.Builder
	last := 0
	for _, m := range numberRe.FindAllStringIndex(s, -1) {
		if m[0] > 0 && isIdentByte(s[m[0]-1]) || m[1] < len(s) && isIdentByte(s[m[1]]) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteByte(0)
		nums = append(nums, s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), nums
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

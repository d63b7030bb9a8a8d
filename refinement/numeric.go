package refinement

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The wrong-output matchers read the diff format of tools.DiffLines:
//
//	line 3: expected "42"
//	        got      "41"
//	... and 2 more differing lines
//	(expected 9 lines, got 9)
//
// optionally followed by "exit status 7, expected 0" from the lane, and
// the cuda-synth lane's CUDA-versus-HIP format (tools/cudasynth):
//
//	line 3 (1.5 vs 1.7 beyond tolerance): CUDA "x = 1.5"
//	    HIP  "x = 1.7"
//	(CUDA printed 4 lines, HIP 4)

// NumericTolerance is the relative difference up to which two values in
// the same output position count as close. An output whose differing
// numbers are all close, at least one of them a floating value, is
// wrong.numeric: a constant or a precision slightly off rather than wrong
// arithmetic. 1% keeps the integer truncation of a slightly wrong float
// (208 printed as 207) in the numeric class.
const NumericTolerance = 1e-2

// diffPair is one differing line; ok is false for "(no line)".
type diffPair struct {
	line          int
	want, got     string
	wantOK, gotOK bool
}

var (
	diffExpectedRE = regexp.MustCompile(`^line (\d+): expected (.*)$`)
	diffGotRE      = regexp.MustCompile(`^\s+got\s+(.*)$`)
	cudaDiffRE     = regexp.MustCompile(`^line (\d+) \(([^)]*)\): CUDA (.*)$`)
	cudaHIPRE      = regexp.MustCompile(`^\s+HIP\s+(.*)$`)
	exitRE         = regexp.MustCompile(`(?m)^exit status (-?\d+), expected (-?\d+)`)
	lineTotalsRE   = regexp.MustCompile(`\(expected (\d+) lines, got (\d+)\)|\(CUDA printed (\d+) lines, HIP (\d+)\)`)
)

// parseDiff returns the differing line pairs of a diagnostic.
func parseDiff(diag string) []diffPair {
	lines := strings.Split(diag, "\n")
	var out []diffPair
	for i := 0; i+1 < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if m := diffExpectedRE.FindStringSubmatch(line); m != nil {
			g := diffGotRE.FindStringSubmatch(lines[i+1])
			if g == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			p := diffPair{line: n}
			p.want, p.wantOK = unquoteDiff(m[2])
			p.got, p.gotOK = unquoteDiff(g[1])
			out = append(out, p)
			i++
			continue
		}
		if m := cudaDiffRE.FindStringSubmatch(line); m != nil {
			g := cudaHIPRE.FindStringSubmatch(lines[i+1])
			if g == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			p := diffPair{line: n}
			p.want, p.wantOK = unquoteDiff(m[3])
			p.got, p.gotOK = unquoteDiff(g[1])
			switch m[2] {
			case "missing line":
				p.gotOK = false
			case "extra line":
				p.wantOK = false
			}
			out = append(out, p)
			i++
		}
	}
	return out
}

// unquoteDiff reads a quoted line of the diff ("(no line)" is absent; a
// line cut at 200 bytes ends in `"...`).
func unquoteDiff(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "(no line)" {
		return "", false
	}
	s = strings.TrimSuffix(s, "...")
	if u, err := strconv.Unquote(s); err == nil {
		return u, true
	}
	return strings.Trim(s, `"`), true
}

// numberRE finds numbers as C's printf writes them: decimal with optional
// fraction and exponent, hexadecimal floats (%a) and integers, inf, nan.
var numberRE = regexp.MustCompile(`[-+]?(?:0[xX][0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?(?:[pP][-+]?\d+)?|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?i:inf(?:inity)?|nan)\b)`)

// skeleton splits a line into its text with numbers replaced by '#' and
// the numbers themselves.
func skeleton(s string) (string, []string) {
	nums := numberRE.FindAllString(s, -1)
	return numberRE.ReplaceAllString(s, "#"), nums
}

func parseNumber(s string) (float64, bool) {
	t := strings.TrimPrefix(s, "+")
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f, true
	}
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(t, "-")
	if u, err := strconv.ParseUint(t, 0, 64); err == nil {
		f := float64(u)
		if neg {
			f = -f
		}
		return f, true
	}
	return 0, false
}

// isFloatText reports whether a printed number is a floating value (has a
// fraction, exponent or binary exponent, or is inf/nan).
func isFloatText(s string) bool {
	l := strings.ToLower(s)
	if strings.HasPrefix(strings.TrimLeft(l, "+-"), "0x") {
		return strings.ContainsAny(l, ".p")
	}
	return strings.ContainsAny(l, ".ein")
}

// close reports whether a and b differ by at most NumericTolerance
// relative to the larger magnitude (equal infinities and two NaNs count as
// close).
func closeValues(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if a == b {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return false
	}
	return math.Abs(a-b) <= NumericTolerance*math.Max(math.Abs(a), math.Abs(b))
}

// numericShape describes the differing lines of a wrong output: whether
// every pair has the same layout with only numbers differing, and whether
// all differing numbers are floating values close to each other.
type numericShape struct {
	pairs      int
	sameLayout bool // every pair: same text around the numbers, same count
	allClose   bool // every differing number pair close, one of them floating
	anyFloat   bool
	example    string
}

func shapeOf(diag string) numericShape {
	pairs := parseDiff(diag)
	sh := numericShape{pairs: len(pairs), sameLayout: len(pairs) > 0, allClose: len(pairs) > 0}
	for _, p := range pairs {
		if !p.wantOK || !p.gotOK {
			sh.sameLayout, sh.allClose = false, false
			return sh
		}
		ws, wn := skeleton(p.want)
		gs, gn := skeleton(p.got)
		if ws != gs || len(wn) != len(gn) || len(wn) == 0 {
			sh.sameLayout, sh.allClose = false, false
			return sh
		}
		differs := false
		for i := range wn {
			if wn[i] == gn[i] {
				continue
			}
			differs = true
			a, okA := parseNumber(wn[i])
			b, okB := parseNumber(gn[i])
			if !okA || !okB {
				sh.sameLayout, sh.allClose = false, false
				return sh
			}
			if isFloatText(wn[i]) || isFloatText(gn[i]) {
				sh.anyFloat = true
			}
			if !closeValues(a, b) {
				sh.allClose = false
			}
			if sh.example == "" {
				sh.example = fmt.Sprintf("line %d: expected %s, got %s", p.line, wn[i], gn[i])
			}
		}
		if !differs {
			// Same numbers and skeleton but different text: spacing.
			sh.sameLayout, sh.allClose = false, false
			return sh
		}
	}
	sh.allClose = sh.allClose && sh.anyFloat
	return sh
}

// matchNumeric: only floating values differ, and by little.
func matchNumeric(diag string) (string, bool) {
	sh := shapeOf(diag)
	if sh.sameLayout && sh.allClose {
		return sh.example + fmt.Sprintf(" (within %g relative)", NumericTolerance), true
	}
	return "", false
}

// matchValue: same layout, numbers differ by more.
func matchValue(diag string) (string, bool) {
	sh := shapeOf(diag)
	if sh.sameLayout && !sh.allClose {
		return sh.example, true
	}
	return "", false
}

// matchLineCount: some differing line is missing on one side.
func matchLineCount(diag string) (string, bool) {
	for _, p := range parseDiff(diag) {
		if !p.wantOK || !p.gotOK {
			if m := lineTotalsRE.FindString(diag); m != "" {
				return m, true
			}
			return fmt.Sprintf("line %d missing", p.line), true
		}
	}
	return "", false
}

// matchExitOnly: no differing lines, only the exit status.
func matchExitOnly(diag string) (string, bool) {
	if len(parseDiff(diag)) > 0 {
		return "", false
	}
	if m := exitRE.FindString(diag); m != "" {
		return m, true
	}
	return "", false
}

var nonZeroExitRE = regexp.MustCompile(`(?m)program exit status -?[1-9]\d*`)

// MatchExitStatus: a program that exited with a non-zero status (lanes
// that count that as a crash).
func MatchExitStatus(diag string) (string, bool) {
	if m := nonZeroExitRE.FindString(diag); m != "" {
		return m, true
	}
	return "", false
}

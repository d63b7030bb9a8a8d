package cuda2hip

import (
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// hipLangs are fence info strings that may hold the HIP program; "hip"
// is preferred over the others.
var hipLangs = map[string]bool{
	"hip": true, "cpp": true, "c++": true, "cxx": true, "cc": true, "c": true, "hpp": true, "cuda": true, "cu": true, "": true,
}

var (
	thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)
	mainRE  = regexp.MustCompile(`\bmain\s*\(`)
)

// ExtractProgram pulls a HIP program out of a model message: among the
// fenced blocks labelled ```hip it prefers the last holding both a
// __global__ kernel and main, then the last with a kernel, then the last
// one; without a ```hip block it does the same over blocks labelled as
// C++ or CUDA and unlabelled ones. A message without fences counts as the
// program itself when it has a kernel and main. Text inside
// <think>...</think> is ignored. ok is false when there is nothing (a
// plain sentence, such as a refusal).
func ExtractProgram(text string) (string, bool) {
	text = thinkRE.ReplaceAllString(text, "")
	if i := strings.Index(text, "<think>"); i >= 0 && !strings.Contains(text[i:], "</think>") {
		text = text[:i]
	}
	fs := tools.Fences(text)
	if len(fs) == 0 {
		if isProgram(text) {
			return ensureNewline(strings.TrimSpace(text)), true
		}
		return "", false
	}
	var hip, other []tools.Fence
	for _, f := range fs {
		switch lang := strings.ToLower(f.Lang); {
		case lang == "hip":
			hip = append(hip, f)
		case hipLangs[lang]:
			other = append(other, f)
		}
	}
	for _, cands := range [][]tools.Fence{hip, other} {
		if s, ok := pick(cands); ok {
			return s, true
		}
	}
	return "", false
}

// pick chooses among candidates: the last program, else the last block
// with a kernel, else the last non-blank block.
func pick(cands []tools.Fence) (string, bool) {
	for _, pred := range []func(string) bool{isProgram, hasKernel, func(string) bool { return true }} {
		for i := len(cands) - 1; i >= 0; i-- {
			if body := cands[i].Body; strings.TrimSpace(body) != "" && pred(body) {
				return ensureNewline(body), true
			}
		}
	}
	return "", false
}

func hasKernel(s string) bool { return strings.Contains(s, "__global__") }

func isProgram(s string) bool { return hasKernel(s) && mainRE.MatchString(s) }

func ensureNewline(s string) string {
	if !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

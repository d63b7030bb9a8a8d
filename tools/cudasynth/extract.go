package cudasynth

import (
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// cudaLangs are fence info strings that mark a CUDA program.
var cudaLangs = map[string]bool{
	"cuda": true, "cu": true, "cpp": true, "c++": true, "cxx": true, "cc": true, "c": true, "hpp": true,
}

var thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)

// ExtractProgram pulls a CUDA program out of a model message. Among the
// fenced blocks labelled ```cuda, ```cu, ```cpp, ```c++ (or unlabelled),
// it prefers the last one holding both a __global__ kernel and main, then
// the last with a kernel, then the last labelled block. A message without
// fences counts as the program itself when it has a kernel and main.
// Text inside <think>...</think> is ignored. ok is false when there is
// nothing.
func ExtractProgram(text string) (string, bool) {
	text = thinkRE.ReplaceAllString(text, "")
	if i := strings.Index(text, "<think>"); i >= 0 && !strings.Contains(text[i:], "</think>") {
		text = text[:i]
	}
	fs := tools.Fences(text)
	if len(fs) == 0 {
		if isProgram(text) {
			return ensureNewline(text), true
		}
		return "", false
	}
	var candidates []tools.Fence
	for _, f := range fs {
		lang := strings.ToLower(f.Lang)
		if cudaLangs[lang] || lang == "" {
			candidates = append(candidates, f)
		}
	}
	pick := func(pred func(string) bool) (string, bool) {
		for i := len(candidates) - 1; i >= 0; i-- {
			if strings.TrimSpace(candidates[i].Body) != "" && pred(candidates[i].Body) {
				return ensureNewline(candidates[i].Body), true
			}
		}
		return "", false
	}
	if s, ok := pick(isProgram); ok {
		return s, true
	}
	if s, ok := pick(hasKernel); ok {
		return s, true
	}
	return pick(func(body string) bool { return true })
}

var mainRE = regexp.MustCompile(`\bmain\s*\(`)

func hasKernel(s string) bool { return strings.Contains(s, "__global__") }

func isProgram(s string) bool { return hasKernel(s) && mainRE.MatchString(s) }

func ensureNewline(s string) string {
	if !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

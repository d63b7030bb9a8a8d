package cudasynth

import (
	"regexp"
	"strings"
)

// cudaLangs are fence info strings that mark a CUDA program.
var cudaLangs = map[string]bool{
	"cuda": true, "cu": true, "cpp": true, "c++": true, "cxx": true, "cc": true, "c": true, "hpp": true,
}

var thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)

type fence struct {
	lang string
	body string
}

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
	fs := fences(text)
	if len(fs) == 0 {
		if isProgram(text) {
			return ensureNewline(text), true
		}
		return "", false
	}
	var candidates []fence
	for _, f := range fs {
		lang := strings.ToLower(f.lang)
		if cudaLangs[lang] || lang == "" {
			candidates = append(candidates, f)
		}
	}
	pick := func(pred func(string) bool) (string, bool) {
		for i := len(candidates) - 1; i >= 0; i-- {
			if strings.TrimSpace(candidates[i].body) != "" && pred(candidates[i].body) {
				return ensureNewline(candidates[i].body), true
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

// fences lists the fenced code blocks of a markdown text; a last fence
// cut off by the end of the text counts.
func fences(text string) []fence {
	var out []fence
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		marker, info, ok := fenceOpen(lines[i])
		if !ok {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
				break
			}
			body = append(body, lines[j])
		}
		lang, _, _ := strings.Cut(info, " ")
		lang = strings.Trim(lang, "{}.")
		out = append(out, fence{lang: lang, body: strings.Join(body, "\n")})
		i = j
	}
	return out
}

// fenceOpen recognises ``` or ~~~ (three or more) with an info string.
func fenceOpen(line string) (marker, info string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return "", "", false
	}
	for _, ch := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n] == ch[0] {
			n++
		}
		if n >= 3 {
			info = strings.TrimSpace(t[n:])
			if ch == "`" && strings.Contains(info, "`") {
				return "", "", false
			}
			return t[:n], info, true
		}
	}
	return "", "", false
}

package web

import (
	"fmt"
	"html/template"
	"net/url"
	"regexp"
	"strings"
)

// Syntax highlighting is done here, on the server, with a small tokenizer
// per family: C-like (C, CUDA, HIP), assembly (x86 AT&T, PTX, SASS, RDNA3)
// and Python. Tokens become <span class="tk-..."> around escaped text.

var funcs = template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"f1":  func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"q":   urlEscape,
	"add": func(a, b int) int { return a + b },
}

func urlEscape(s string) string { return url.QueryEscape(s) }

// guessLang guesses the language of a text (an answer, an artifact without
// a telling name) from its content, so that no lane needs naming here:
// Python, then C-like code, then assembly (x86, PTX, SASS, RDNA3).
func guessLang(text string) string {
	switch {
	case pyHint.MatchString(text):
		return "python"
	case cHint.MatchString(text):
		return "c"
	case asmHint.MatchString(text):
		return "asm"
	}
	return "text"
}

var (
	pyHint  = regexp.MustCompile(`(?m)^(import \w|from [\w.]+ import |def \w+\(|class \w+(\(.*\))?:)`)
	cHint   = regexp.MustCompile(`__global__|#include|(?m)^\s*(static\s+)?(int|void|float|double|unsigned|long|char|bool)\s+\**\w+\s*\(`)
	asmHint = regexp.MustCompile(`(?m)^\s*(\.(text|globl|section|version|target|entry|visible|amdgcn_target|p2align)\b|[a-z_][\w.]*\s+(%|\$|v\d|s\d|v\[|s\[|R\d))`)
)

// langOf guesses an artifact's or file's language from its name, else from
// its content.
func langOf(name, text string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".s"), strings.HasSuffix(n, ".asm"), strings.HasSuffix(n, ".ptx"), strings.HasSuffix(n, ".sass"),
		strings.Contains(n, "rdna"), strings.Contains(n, "sass"), n == "ptx", strings.Contains(n, "host_asm"):
		return "asm"
	case strings.HasSuffix(n, ".py"):
		return "python"
	case strings.HasSuffix(n, ".c"), strings.HasSuffix(n, ".h"), strings.HasSuffix(n, ".cu"), strings.HasSuffix(n, ".cuh"),
		strings.HasSuffix(n, ".hip"), strings.HasSuffix(n, ".cpp"), strings.HasSuffix(n, "_source"), strings.HasSuffix(n, ".cc"):
		return "c"
	case strings.HasSuffix(n, ".json"), strings.HasPrefix(n, "output"), strings.Contains(n, "stdout"), strings.Contains(n, "stderr"):
		return "text"
	}
	return guessLang(text)
}

type tokenRule struct {
	re    *regexp.Regexp
	class string
}

var (
	cKeywords = `\b(?:__global__|__device__|__host__|__shared__|__constant__|__restrict__|__syncthreads|__launch_bounds__|` +
		`auto|break|case|char|const|constexpr|continue|default|do|double|else|enum|extern|float|for|goto|if|inline|int|long|` +
		`namespace|register|return|short|signed|sizeof|static|struct|switch|template|typedef|typename|union|unsigned|using|` +
		`void|volatile|while|bool|true|false|nullptr|class|public|private|size_t|uint32_t|uint64_t|int32_t|int64_t|uint8_t|` +
		`half|dim3|blockIdx|threadIdx|blockDim|gridDim)\b`
	pyKeywords = `\b(?:and|as|assert|async|await|break|class|continue|def|del|elif|else|except|False|finally|for|from|global|` +
		`if|import|in|is|lambda|None|nonlocal|not|or|pass|raise|return|True|try|while|with|yield|self)\b`

	cRules = []tokenRule{
		{regexp.MustCompile(`^(?://[^\n]*|/\*(?s:.*?)\*/)`), "cm"},
		{regexp.MustCompile(`^#\s*\w+`), "pp"},
		{regexp.MustCompile(`^(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`), "str"},
		{regexp.MustCompile(`^` + cKeywords), "kw"},
		{regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[fFuUlL]*`), "num"},
		{regexp.MustCompile(`^[A-Za-z_]\w*`), ""},
	}
	asmRules = []tokenRule{
		{regexp.MustCompile(`^(?://[^\n]*|/\*(?s:.*?)\*/|#[^\n]*|;[^\n]*)`), "cm"},
		{regexp.MustCompile(`^"(?:[^"\\\n]|\\.)*"`), "str"},
		{regexp.MustCompile(`^(?:%[A-Za-z_][\w.]*|\$[A-Za-z_]\w*|\b[vsa]\[\d+:\d+\]|\b[vsa]\d+\b|\bR\d+\b|\bUR\d+\b|\bP\d\b|\bexec\w*|\bvcc\w*)`), "reg"},
		{regexp.MustCompile(`^\.[A-Za-z_][\w.]*`), "dir"},
		{regexp.MustCompile(`^[A-Za-z_$.][\w$.]*:`), "lbl"},
		{regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|-?\d+\.?\d*(?:[eE][-+]?\d+)?)`), "num"},
		{regexp.MustCompile(`^[A-Za-z_][\w.]*`), "op"},
	}
	pyRules = []tokenRule{
		{regexp.MustCompile(`^#[^\n]*`), "cm"},
		{regexp.MustCompile(`^(?:"""(?s:.*?)"""|'''(?s:.*?)'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')`), "str"},
		{regexp.MustCompile(`^` + pyKeywords), "kw"},
		{regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)`), "num"},
		{regexp.MustCompile(`^[A-Za-z_]\w*`), ""},
	}
)

// highlight returns src as escaped HTML with token spans for lang ("c",
// "asm", "python"; anything else is escaped only). For asm, the first word
// of a line is the mnemonic ("op"); later words are plain.
func highlight(src, lang string) template.HTML {
	var rules []tokenRule
	switch lang {
	case "c":
		rules = cRules
	case "asm":
		rules = asmRules
	case "python":
		rules = pyRules
	default:
		return template.HTML(template.HTMLEscapeString(src))
	}
	var b strings.Builder
	b.Grow(len(src) * 2)
	lineStart := true
	seenOp := false
	for i := 0; i < len(src); {
		c := src[i]
		if c == '\n' {
			b.WriteByte('\n')
			i++
			lineStart, seenOp = true, false
			continue
		}
		if c == ' ' || c == '\t' || c == '\r' {
			b.WriteByte(c)
			i++
			continue
		}
		matched := false
		rest := src[i:]
		for _, r := range rules {
			if r.class == "pp" && !lineStart {
				continue
			}
			loc := r.re.FindStringIndex(rest)
			if loc == nil || loc[1] == 0 {
				continue
			}
			tok := rest[:loc[1]]
			class := r.class
			if lang == "asm" && class == "op" {
				if seenOp {
					class = ""
				}
				seenOp = true
			}
			if class == "" {
				b.WriteString(template.HTMLEscapeString(tok))
			} else {
				b.WriteString(`<span class="tk-` + class + `">` + template.HTMLEscapeString(tok) + `</span>`)
			}
			i += loc[1]
			nl := strings.LastIndexByte(tok, '\n')
			if nl >= 0 {
				seenOp = false
			}
			matched = true
			break
		}
		if !matched {
			b.WriteString(template.HTMLEscapeString(string(c)))
			i++
		}
		lineStart = false
	}
	return template.HTML(b.String())
}

var fence = regexp.MustCompile("(?s)```([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```")

// highlightText escapes a chat message and highlights its fenced code
// blocks by their info string.
func highlightText(s string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range fence.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(template.HTMLEscapeString(s[last:m[0]]))
		info := strings.ToLower(s[m[2]:m[3]])
		lang := "text"
		switch info {
		case "c", "cpp", "c++", "cu", "cuda", "hip", "h":
			lang = "c"
		case "asm", "s", "gas", "x86", "ptx", "sass", "rdna", "rdna3", "amdgpu", "nasm":
			lang = "asm"
		case "py", "python":
			lang = "python"
		}
		b.WriteString("<span class=\"fence\">```" + template.HTMLEscapeString(s[m[2]:m[3]]) + "\n")
		b.WriteString(string(highlight(s[m[4]:m[5]], lang)))
		b.WriteString("```</span>")
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(s[last:]))
	return template.HTML(b.String())
}

// diffLine is one line of a unified line diff: Op is ' ', '-' (expected
// only) or '+' (actual only).
type diffLine struct {
	Op   string
	Text string
}

// maxDiffCells bounds the LCS table (lines x lines); larger outputs get a
// line-by-line comparison instead.
const (
	maxDiffCells = 4 << 20
	maxDiffLines = 2000
)

// diff is a line diff of want and got (longest common subsequence), at most
// maxDiffLines lines; truncated says lines were cut.
func diff(want, got string) ([]diffLine, bool) {
	w, g := splitLines(want), splitLines(got)
	var out []diffLine
	if len(w)*len(g) > maxDiffCells {
		for i := 0; i < max(len(w), len(g)); i++ {
			switch {
			case i < len(w) && i < len(g) && w[i] == g[i]:
				out = append(out, diffLine{" ", w[i]})
			default:
				if i < len(w) {
					out = append(out, diffLine{"-", w[i]})
				}
				if i < len(g) {
					out = append(out, diffLine{"+", g[i]})
				}
			}
		}
	} else {
		// lcs[i][j] = LCS length of w[i:] and g[j:].
		n, m := len(w), len(g)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if w[i] == g[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && w[i] == g[j]:
				out = append(out, diffLine{" ", w[i]})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				out = append(out, diffLine{"-", w[i]})
				i++
			default:
				out = append(out, diffLine{"+", g[j]})
				j++
			}
		}
	}
	if len(out) > maxDiffLines {
		return out[:maxDiffLines], true
	}
	return out, false
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

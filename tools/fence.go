package tools

import "strings"

// Fence is one fenced code block: its info string's first word (the
// language, braces and dots trimmed) and its body.
type Fence struct {
	Lang string
	Body string
}

// Fences lists the fenced code blocks (``` or ~~~) of a markdown text, in
// order; a last fence cut off by the end of the text counts. Lanes use it
// to pull answers out of model replies.
func Fences(text string) []Fence {
	var out []Fence
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
		out = append(out, Fence{Lang: lang, Body: strings.Join(body, "\n")})
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

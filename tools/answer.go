package tools

import "strings"

// FencedAnswer is the answer an answer given by hand stands for: one that
// holds a fenced block (```) is read as a model's message, through the
// lane's Extract (empty when it finds no answer); any other is the code
// itself.
func FencedAnswer(l Lane, answer string) string {
	if !strings.Contains(answer, "```") {
		return answer
	}
	if a, ok := l.Extract(answer); ok {
		return a
	}
	return ""
}

package hipify

import (
	"fmt"
	"sort"
	"strings"
)

// tokKind classifies a lexed token.
type tokKind uint8

const (
	tokSpace   tokKind = iota // blanks and line splices (backslash-newline)
	tokNewline                // a newline that ends a logical line
	tokComment                // // or /* */ comment
	tokIdent                  // identifier or keyword
	tokNumber                 // preprocessing number
	tokString                 // string or character literal, any prefix, raw or not
	tokHeader                 // header name after #include: <x.h> or "x.h"
	tokPunct                  // punctuator (a few multi-char ones kept whole)
	tokOther                  // any other byte
)

// token is one lexed piece of the source: src[start:end].
type token struct {
	kind       tokKind
	start, end int
	// dir is the directive name ("include", "define", "ifdef", ...) when the
	// token belongs to a preprocessing directive, "#" for the directive's
	// own '#' and name tokens, and "" outside directives.
	dir string
}

// SyntaxError reports input the lexer cannot make sense of (an unterminated
// block comment or raw string), which would leave the rest of the file
// unclassified.
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("hipify: %d:%d: %s", e.Line, e.Col, e.Msg)
}

// lineIndex maps byte offsets to 1-based line and column (bytes, as gcc and
// clang count them).
type lineIndex []int // start offset of each line

func newLineIndex(src string) lineIndex {
	li := lineIndex{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			li = append(li, i+1)
		}
	}
	return li
}

func (li lineIndex) pos(off int) (line, col int) {
	i := sort.Search(len(li), func(i int) bool { return li[i] > off }) - 1
	return i + 1, off - li[i] + 1
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isStringPrefix reports whether w is an encoding prefix that may glue to
// a string or character literal.
func isStringPrefix(w string) bool {
	return w == "L" || w == "u" || w == "U" || w == "u8"
}

// isRawPrefix reports whether w opens a raw string literal before a quote.
func isRawPrefix(w string) bool {
	return w == "R" || w == "LR" || w == "uR" || w == "UR" || w == "u8R"
}

// lex splits src into tokens covering every byte. It tracks preprocessing
// directives so that the header name of an #include is one token and every
// token knows which directive, if any, it belongs to.
func lex(src string, li lineIndex) ([]token, error) {
	var toks []token
	atLineStart := true // only blanks and comments so far on this logical line
	dir := ""           // current directive, "" when not in one
	wantDirName := false
	wantHeader := false
	i := 0
	emit := func(k tokKind, start, end int) {
		d := dir
		toks = append(toks, token{kind: k, start: start, end: end, dir: d})
	}
	synErr := func(off int, msg string) error {
		l, c := li.pos(off)
		return &SyntaxError{Line: l, Col: c, Msg: msg}
	}
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case c == '\n':
			i++
			emit(tokNewline, start, i)
			atLineStart, dir, wantDirName, wantHeader = true, "", false, false
			continue
		case c == '\\' && spliceLen(src, i) > 0:
			i += spliceLen(src, i)
			emit(tokSpace, start, i)
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\f' || src[i] == '\v') {
				i++
			}
			emit(tokSpace, start, i)
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			// Line comment; a line splice continues it.
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && spliceLen(src, i) > 0 {
					i += spliceLen(src, i)
					continue
				}
				i++
			}
			emit(tokComment, start, i)
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, synErr(start, "unterminated block comment")
			}
			i += 2 + end + 2
			emit(tokComment, start, i)
			continue
		}

		// Everything below is a significant token.
		if wantHeader && (c == '<' || c == '"') {
			closer := byte('>')
			if c == '"' {
				closer = '"'
			}
			j := i + 1
			for j < len(src) && src[j] != closer && src[j] != '\n' {
				j++
			}
			if j < len(src) && src[j] == closer {
				i = j + 1
				emit(tokHeader, start, i)
				wantHeader = false
				atLineStart = false
				continue
			}
			// Not a well-formed header name (a macro-expanded include, for
			// instance): fall through and lex normally.
		}
		wantHeader = false

		switch {
		case c == '#' && atLineStart:
			i++
			dir = "#"
			emit(tokPunct, start, i)
			wantDirName = true
			atLineStart = false
			continue
		case isIdentStart(c):
			j := i
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			word := src[i:j]
			if j < len(src) && src[j] == '"' && isRawPrefix(word) {
				end, ok := rawStringEnd(src, j)
				if !ok {
					return nil, synErr(start, "unterminated raw string literal")
				}
				i = end
				emit(tokString, start, i)
				break
			}
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(word) {
				i = quotedEnd(src, j)
				emit(tokString, start, i)
				break
			}
			i = j
			if wantDirName {
				emit(tokIdent, start, i)
				dir = word
				wantDirName = false
				switch word {
				case "include", "include_next", "import":
					wantHeader = true
				}
				break
			}
			emit(tokIdent, start, i)
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			i = numberEnd(src, i)
			emit(tokNumber, start, i)
		case c == '"' || c == '\'':
			i = quotedEnd(src, i)
			emit(tokString, start, i)
		default:
			// "->" and "::" stay whole: the translator looks at them to
			// tell member access and scope.
			n := 1
			if strings.HasPrefix(src[i:], "->") || strings.HasPrefix(src[i:], "::") {
				n = 2
			}
			i += n
			if strings.ContainsRune("()[]{}<>,;.:+-*/%&|^!~=?#", rune(c)) {
				emit(tokPunct, start, i)
			} else {
				emit(tokOther, start, i)
			}
		}
		wantDirName = false
		atLineStart = false
	}
	return toks, nil
}

// spliceLen returns the length of a line splice (backslash, optional CR,
// newline) at src[i], or 0.
func spliceLen(src string, i int) int {
	if src[i] != '\\' {
		return 0
	}
	if i+1 < len(src) && src[i+1] == '\n' {
		return 2
	}
	if i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n' {
		return 3
	}
	return 0
}

// quotedEnd returns the end of the string or character literal whose quote
// is at src[i]. Like gcc, a literal left open at the end of the line stops
// there (think of an apostrophe in an #error message).
func quotedEnd(src string, i int) int {
	q := src[i]
	j := i + 1
	for j < len(src) {
		switch src[j] {
		case '\\':
			if n := spliceLen(src, j); n > 0 {
				j += n
				continue
			}
			j += 2
			continue
		case q:
			return j + 1
		case '\n':
			return j
		}
		j++
	}
	if j > len(src) {
		j = len(src)
	}
	return j
}

// rawStringEnd returns the end of the raw string whose opening quote is at
// src[q]: R"delim( ... )delim".
func rawStringEnd(src string, q int) (int, bool) {
	open := strings.IndexByte(src[q+1:], '(')
	if open < 0 || open > 16 {
		return 0, false
	}
	delim := src[q+1 : q+1+open]
	if strings.ContainsAny(delim, " \\)\t\n") {
		return 0, false
	}
	closer := ")" + delim + "\""
	end := strings.Index(src[q+1+open+1:], closer)
	if end < 0 {
		return 0, false
	}
	return q + 1 + open + 1 + end + len(closer), true
}

// numberEnd returns the end of the preprocessing number starting at src[i]
// (digits, letters, dots, digit separators, signed exponents).
func numberEnd(src string, i int) int {
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case (c == '+' || c == '-') && strings.ContainsRune("eEpP", rune(src[j-1])):
			j++
		case c == '\'' && j+1 < len(src) && isIdentChar(src[j+1]):
			j += 2
		case isIdentChar(c) || c == '.':
			j++
		default:
			return j
		}
	}
	return j
}

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
	lx := &lexer{src: src, li: li, atLineStart: true}
	for lx.i < len(src) {
		c := src[lx.i]
		start := lx.i
		done, err := lx.blank(c, start)
		if err != nil {
			return nil, err
		}
		if done {
			continue
		}
		// Everything below is a significant token.
		if lx.wantHeader && (c == '<' || c == '"') && lx.header(c, start) {
			continue
		}
		lx.wantHeader = false
		if c == '#' && lx.atLineStart {
			lx.i++
			lx.dir = "#"
			lx.emit(tokPunct, start, lx.i)
			lx.wantDirName = true
			lx.atLineStart = false
			continue
		}
		if err := lx.significant(c, start); err != nil {
			return nil, err
		}
		lx.wantDirName = false
		lx.atLineStart = false
	}
	return lx.toks, nil
}

// lexer is lex's state: the tokens so far, the offset, and where it is on
// the logical line.
type lexer struct {
	src  string
	li   lineIndex
	toks []token
	i    int
	// atLineStart: only blanks and comments so far on this logical line.
	atLineStart bool
	// dir is the current directive, "" when not in one.
	dir                     string
	wantDirName, wantHeader bool
}

func (lx *lexer) emit(k tokKind, start, end int) {
	lx.toks = append(lx.toks, token{kind: k, start: start, end: end, dir: lx.dir})
}

func (lx *lexer) synErr(off int, msg string) error {
	l, c := lx.li.pos(off)
	return &SyntaxError{Line: l, Col: c, Msg: msg}
}

// blank lexes a newline, a line splice, white space or a comment at start
// (c its first byte); done is false when there is none there.
func (lx *lexer) blank(c byte, start int) (done bool, err error) {
	src := lx.src
	switch {
	case c == '\n':
		lx.i++
		lx.emit(tokNewline, start, lx.i)
		lx.atLineStart, lx.dir, lx.wantDirName, lx.wantHeader = true, "", false, false
	case c == '\\' && spliceLen(src, lx.i) > 0:
		lx.i += spliceLen(src, lx.i)
		lx.emit(tokSpace, start, lx.i)
	case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
		for lx.i < len(src) && (src[lx.i] == ' ' || src[lx.i] == '\t' || src[lx.i] == '\r' || src[lx.i] == '\f' || src[lx.i] == '\v') {
			lx.i++
		}
		lx.emit(tokSpace, start, lx.i)
	case c == '/' && lx.i+1 < len(src) && src[lx.i+1] == '/':
		// Line comment; a line splice continues it.
		for lx.i < len(src) && src[lx.i] != '\n' {
			if src[lx.i] == '\\' && spliceLen(src, lx.i) > 0 {
				lx.i += spliceLen(src, lx.i)
				continue
			}
			lx.i++
		}
		lx.emit(tokComment, start, lx.i)
	case c == '/' && lx.i+1 < len(src) && src[lx.i+1] == '*':
		end := strings.Index(src[lx.i+2:], "*/")
		if end < 0 {
			return false, lx.synErr(start, "unterminated block comment")
		}
		lx.i += 2 + end + 2
		lx.emit(tokComment, start, lx.i)
	default:
		return false, nil
	}
	return true, nil
}

// header lexes the header name of an include at start (c is < or ") and
// reports whether it was one: a macro-expanded include, for instance, is
// lexed normally.
func (lx *lexer) header(c byte, start int) bool {
	src := lx.src
	closer := byte('>')
	if c == '"' {
		closer = '"'
	}
	j := lx.i + 1
	for j < len(src) && src[j] != closer && src[j] != '\n' {
		j++
	}
	if j < len(src) && src[j] == closer {
		lx.i = j + 1
		lx.emit(tokHeader, start, lx.i)
		lx.wantHeader = false
		lx.atLineStart = false
		return true
	}
	return false
}

// significant lexes the token at start (c its first byte): a word, a
// number, a string or a punctuator.
func (lx *lexer) significant(c byte, start int) error {
	src := lx.src
	switch {
	case isIdentStart(c):
		return lx.word(start)
	case isDigit(c) || (c == '.' && lx.i+1 < len(src) && isDigit(src[lx.i+1])):
		lx.i = numberEnd(src, lx.i)
		lx.emit(tokNumber, start, lx.i)
	case c == '"' || c == '\'':
		lx.i = quotedEnd(src, lx.i)
		lx.emit(tokString, start, lx.i)
	default:
		// "->" and "::" stay whole: the translator looks at them to
		// tell member access and scope.
		n := 1
		if strings.HasPrefix(src[lx.i:], "->") || strings.HasPrefix(src[lx.i:], "::") {
			n = 2
		}
		lx.i += n
		if strings.ContainsRune("()[]{}<>,;.:+-*/%&|^!~=?#", rune(c)) {
			lx.emit(tokPunct, start, lx.i)
		} else {
			lx.emit(tokOther, start, lx.i)
		}
	}
	return nil
}

// word lexes an identifier at start, or the string literal it prefixes
// (raw or not); after #, it names the directive.
func (lx *lexer) word(start int) error {
	src := lx.src
	j := lx.i
	for j < len(src) && isIdentChar(src[j]) {
		j++
	}
	word := src[lx.i:j]
	if j < len(src) && src[j] == '"' && isRawPrefix(word) {
		end, ok := rawStringEnd(src, j)
		if !ok {
			return lx.synErr(start, "unterminated raw string literal")
		}
		lx.i = end
		lx.emit(tokString, start, lx.i)
		return nil
	}
	if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(word) {
		lx.i = quotedEnd(src, j)
		lx.emit(tokString, start, lx.i)
		return nil
	}
	lx.i = j
	lx.emit(tokIdent, start, lx.i)
	if lx.wantDirName {
		lx.dir = word
		lx.wantDirName = false
		switch word {
		case "include", "include_next", "import":
			lx.wantHeader = true
		}
	}
	return nil
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

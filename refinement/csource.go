package refinement

import (
	"regexp"
	"strings"
)

// cSource is C or CUDA source prepared for pattern matching: comments are
// blanked (newlines kept), string and character literals are emptied ("",
// ' ') unless kept, and #include lines are blanked (their <a.h> would read
// like comparisons). Offsets do not match the original text.
type cSource struct {
	code    string
	strs    int // string literals seen
	chars   int // character literals seen
	funcs   []CFunc
	funcsOK bool
}

// CFunc is one function definition found at file scope.
type CFunc struct {
	Name   string
	Prefix string // declaration text before the name (return type, qualifiers)
	Params string // text between the parentheses
	Body   string // text between the braces
}

// lexC prepares src. With keepLiterals the contents of string and character
// literals stay (for hashing); comments always go.
func lexC(src string, keepLiterals bool) *cSource {
	var b strings.Builder
	b.Grow(len(src))
	s := &cSource{}
	n := len(src)
	lineStart := true
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			i += 2
			for i < n && !(src[i] == '*' && i+1 < n && src[i+1] == '/') {
				if src[i] == '\n' {
					b.WriteByte('\n')
				}
				i++
			}
			i += 2
			b.WriteByte(' ')
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					j++
				}
				j++
			}
			end := j // exclusive end of the literal
			if j < n && src[j] == c {
				end = j + 1
			}
			if c == '"' {
				s.strs++
			} else {
				s.chars++
			}
			switch {
			case keepLiterals:
				b.WriteString(src[i:end])
			case c == '"':
				b.WriteString(`""`)
			default:
				b.WriteString(`' '`)
			}
			i = end
		case c == '#' && lineStart:
			j := i + 1
			for j < n && (src[j] == ' ' || src[j] == '\t') {
				j++
			}
			if strings.HasPrefix(src[j:], "include") {
				for i < n && src[i] != '\n' {
					i++
				}
				continue
			}
			b.WriteByte(c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
		if i > 0 && i <= n {
			prev := src[i-1]
			if prev == '\n' {
				lineStart = true
			} else if prev != ' ' && prev != '\t' {
				lineStart = false
			}
		}
	}
	s.code = b.String()
	return s
}

// matchClose returns the index of the bracket closing the one at open
// (code[open] is '(' '[' or '{'), or -1.
func matchClose(code string, open int) int {
	o := code[open]
	var c byte
	switch o {
	case '(':
		c = ')'
	case '[':
		c = ']'
	case '{':
		c = '}'
	default:
		return -1
	}
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// matchOpen returns the index of the '(' that the ')' at close closes, or -1.
func matchOpen(code string, close int) int {
	depth := 0
	for i := close; i >= 0; i-- {
		switch code[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

var (
	identBeforeRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*$`)
	// Brace blocks that do not open a function scope: extern "C" { and
	// namespace n {.
	transparentRE = regexp.MustCompile(`(?:\bextern\s*""|\bnamespace(?:\s+[A-Za-z_]\w*)?)\s*$`)
	// Qualifiers that may sit between a parameter list and the body.
	trailingQualRE = regexp.MustCompile(`(?:\s*(?:const|noexcept|override|__attribute__\s*\(\(.*?\)\)))*\s*$`)
)

// cKeywords are words that look like a function name before '(' but are not.
var cKeywords = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"do": true, "else": true, "case": true, "__attribute__": true, "defined": true,
}

// functions returns the function definitions at file scope (inside
// extern "C" and namespace blocks too).
func (s *cSource) functions() []CFunc {
	if s.funcsOK {
		return s.funcs
	}
	s.funcsOK = true
	code := s.code
	stmtStart := 0 // start of the current file-scope declaration
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case ';', '}':
			stmtStart = i + 1
		case '{':
			head := code[stmtStart:i]
			if transparentRE.MatchString(head) {
				stmtStart = i + 1
				continue
			}
			end := matchClose(code, i)
			if end < 0 {
				return s.funcs
			}
			h := trailingQualRE.ReplaceAllString(head, "")
			if strings.HasSuffix(h, ")") {
				closeAt := stmtStart + len(h) - 1
				openAt := matchOpen(code, closeAt)
				if openAt >= stmtStart {
					if m := identBeforeRE.FindStringSubmatchIndex(code[stmtStart:openAt]); m != nil {
						name := code[stmtStart+m[2] : stmtStart+m[3]]
						if !cKeywords[name] {
							s.funcs = append(s.funcs, CFunc{
								Name:   name,
								Prefix: strings.TrimSpace(code[stmtStart : stmtStart+m[2]]),
								Params: code[openAt+1 : closeAt],
								Body:   code[i+1 : end],
							})
						}
					}
				}
			}
			i = end
			stmtStart = end + 1
		}
	}
	return s.funcs
}

var switchRE = regexp.MustCompile(`\bswitch\s*\(`)

// switchCaseCounts returns, for every switch statement, the number of case
// labels that belong to it (not to nested switches; default not counted).
func switchCaseCounts(code string) []int {
	var counts []int
	for _, m := range switchRE.FindAllStringIndex(code, -1) {
		n, ok := casesOf(code, m[1]-1)
		if ok {
			counts = append(counts, n)
		}
	}
	return counts
}

var caseRE = regexp.MustCompile(`\bcase\b`)

// casesOf counts the case labels of the switch whose '(' is at paren.
func casesOf(code string, paren int) (int, bool) {
	closeAt := matchClose(code, paren)
	if closeAt < 0 {
		return 0, false
	}
	j := closeAt + 1
	for j < len(code) && strings.ContainsRune(" \t\r\n", rune(code[j])) {
		j++
	}
	if j >= len(code) || code[j] != '{' {
		return 0, false
	}
	end := matchClose(code, j)
	if end < 0 {
		return 0, false
	}
	body := code[j+1 : end]
	// Blank nested switch bodies so their labels are not counted here.
	for {
		m := switchRE.FindStringIndex(body)
		if m == nil {
			break
		}
		p := m[1] - 1
		ce := matchClose(body, p)
		if ce < 0 {
			break
		}
		k := ce + 1
		for k < len(body) && strings.ContainsRune(" \t\r\n", rune(body[k])) {
			k++
		}
		stop := ce + 1
		if k < len(body) && body[k] == '{' {
			if e := matchClose(body, k); e >= 0 {
				stop = e + 1
			}
		}
		body = body[:m[0]] + strings.Repeat(" ", stop-m[0]) + body[stop:]
	}
	return len(caseRE.FindAllStringIndex(body, -1)), true
}

// callRE finds identifiers followed by '(' and what precedes them.
var callRE = regexp.MustCompile(`(\.|->)?\s*\b([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// calledNames returns the names code calls (not member calls a.f(), p->f()).
func calledNames(code string) map[string]bool {
	out := map[string]bool{}
	for _, m := range callRE.FindAllStringSubmatch(code, -1) {
		if m[1] == "" && !cKeywords[m[2]] {
			out[m[2]] = true
		}
	}
	return out
}

// callGraphHasCycle reports whether some function defined in funcs calls
// itself, directly or through other functions defined there.
func callGraphHasCycle(funcs []CFunc) bool {
	idx := map[string]int{}
	for i, f := range funcs {
		idx[f.Name] = i
	}
	edges := make([][]int, len(funcs))
	for i, f := range funcs {
		for name := range calledNames(f.Body) {
			if j, ok := idx[name]; ok {
				edges[i] = append(edges[i], j)
			}
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(funcs))
	var visit func(int) bool
	visit = func(u int) bool {
		color[u] = grey
		for _, v := range edges[u] {
			if color[v] == grey {
				return true
			}
			if color[v] == white && visit(v) {
				return true
			}
		}
		color[u] = black
		return false
	}
	for i := range funcs {
		if color[i] == white && visit(i) {
			return true
		}
	}
	return false
}

// normalizeSource strips comments and whitespace that does not separate two
// word characters, keeping literals, so that two sources differing only in
// layout and comments normalise to the same text.
func normalizeSource(src string) string {
	code := lexC(src, true).code
	var b strings.Builder
	b.Grow(len(code))
	pendingSpace := false
	var last byte
	for i := 0; i < len(code); i++ {
		c := code[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			pendingSpace = true
			continue
		}
		if pendingSpace && isWordByte(last) && isWordByte(c) {
			b.WriteByte(' ')
		}
		pendingSpace = false
		if c == '"' || c == '\'' {
			// Copy the literal as it is.
			j := i + 1
			for j < len(code) && code[j] != c && code[j] != '\n' {
				if code[j] == '\\' && j+1 < len(code) {
					j++
				}
				j++
			}
			if j >= len(code) {
				j = len(code) - 1
			}
			b.WriteString(code[i : j+1])
			last = code[j]
			i = j
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

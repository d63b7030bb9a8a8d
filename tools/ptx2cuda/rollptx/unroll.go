package rollptx

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Errors Unroll wraps in a *LineError.
var (
	ErrBadHeader  = errors.New("bad loop header")
	ErrShortBody  = errors.New("loop body shorter than its .size")
	ErrUnknownVar = errors.New("unknown variable")
	ErrBadRange   = errors.New("bad range")
	ErrBadExpr    = errors.New("bad expression")
	ErrTooLarge   = errors.New("unrolled text too large")
)

// MaxUnrolled is the largest text Unroll produces, in bytes.
const MaxUnrolled = 1 << 30

// LineError is an error of Unroll at a line of the Rolled-PTX text.
type LineError struct {
	Line int // 1-based
	Err  error
}

func (e *LineError) Error() string {
	return "rollptx: line " + strconv.Itoa(e.Line) + ": " + e.Err.Error()
}

func (e *LineError) Unwrap() error { return e.Err }

func lineErr(line int, sentinel error, format string, args ...any) error {
	if format == "" {
		return &LineError{Line: line, Err: sentinel}
	}
	return &LineError{Line: line, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
}

// Unroll expands Rolled-PTX back into plain PTX.
func Unroll(rolled string) (string, error) { return unroll(rolled, MaxUnrolled) }

// unroll is Unroll with a limit on the output's length.
func unroll(rolled string, limit int64) (string, error) {
	if !strings.Contains(rolled, "for") {
		return rolled, nil // no loop header can be there
	}
	var e expander
	e.out.Grow(2 * len(rolled))
	for pos, no := 0, 1; pos < len(rolled); no++ {
		end := strings.IndexByte(rolled[pos:], '\n')
		if end < 0 {
			end = len(rolled)
		} else {
			end += pos + 1
		}
		line := rolled[pos:end]
		if !isHeaderLike(line[indentLen(line):]) {
			e.out.WriteString(line) // outside loops: plain PTX
			pos = end
			continue
		}
		// a loop: its header and the lines that can be its body
		size, _, _, _, _, err := parseHeader(strings.TrimLeft(strings.TrimSuffix(line, "\n"), " \t"), no)
		if err != nil {
			return "", err
		}
		lines := make([]uline, 0, size+1)
		for p := pos; p < len(rolled) && len(lines) <= size; {
			q := strings.IndexByte(rolled[p:], '\n')
			l := uline{no: no + len(lines)}
			if q < 0 {
				l.text, p = rolled[p:], len(rolled)
			} else {
				l.text, l.nl, p = rolled[p:p+q], true, p+q+1
			}
			lines = append(lines, l)
		}
		nodes, err := parseNodes(lines, nil, true)
		if err != nil {
			return "", err
		}
		sz := textSize(nodes[:1], limit)
		if sz+int64(e.out.Len()) > limit {
			return "", lineErr(no, ErrTooLarge, "more than %d bytes", limit)
		}
		e.out.Grow(int(sz)) // room for the loop: no copies while it expands
		if err := e.expand(nodes[:1]); err != nil {
			return "", err
		}
		pos += len(lines[0].text) + 1
		for _, l := range lines[1 : 1+size] {
			pos += len(l.text) + 1
		}
		no += size
	}
	return e.out.String(), nil
}

type uline struct {
	text string
	no   int  // 1-based line number in the rolled text
	nl   bool // followed by "\n"
}

// unode is a line or a loop of a parsed Rolled-PTX text.
type unode struct {
	line  uline
	segs  []useg // a line: its pieces
	loop  *uloop
	bound int64 // line inside a loop: most bytes it can expand to
}

type uloop struct {
	start, step, count int64
	body               []unode
}

// useg is literal text followed, unless last, by a VarExpr or a table.
type useg struct {
	lit   string
	expr  bool
	kind  byte // 'r' register, 'i' immediate, 'o' offset
	base  int64
	terms []uterm // a table: its variable
	table []int64
}

type uterm struct {
	depth int // index of the variable in the environment
	coef  int64
}

func indentLen(s string) int {
	i := 0
	for i < len(s) && (s[i] == '\t' || s[i] == ' ') {
		i++
	}
	return i
}

// parseNodes parses the lines of a loop body in the scope of the loop
// variables vars; with top, it parses only the loop whose header is lines[0].
func parseNodes(lines []uline, vars []string, top bool) ([]unode, error) {
	var nodes []unode
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		ind := indentLen(l.text)
		if !isHeaderLike(l.text[ind:]) {
			segs, bound, err := parseSegs(l, vars)
			if err != nil {
				return nil, err
			}
			if !l.nl {
				return nil, lineErr(l.no, ErrShortBody, "loop body ends without a newline")
			}
			nodes = append(nodes, unode{line: l, segs: segs, bound: bound})
			continue
		}
		size, name, start, limit, step, err := parseHeader(l.text[ind:], l.no)
		if err != nil {
			return nil, err
		}
		for _, v := range vars {
			if v == name {
				return nil, lineErr(l.no, ErrBadHeader, "variable %s already in use", name)
			}
		}
		count, err := rangeLen(start, limit, step)
		if err != nil {
			return nil, lineErr(l.no, ErrBadRange, "%v", err)
		}
		if i+size >= len(lines) {
			return nil, lineErr(l.no, ErrShortBody, "needs %d body lines, %d follow", size, len(lines)-i-1)
		}
		prefix := l.text[:ind] + "\t"
		body := make([]uline, size)
		for k := range size {
			b := lines[i+1+k]
			switch {
			case b.text == "": // a blank line in a body is a blank line
			case strings.HasPrefix(b.text, prefix):
				b.text = l.text[:ind] + b.text[len(prefix):]
			default:
				return nil, lineErr(l.no, ErrShortBody, "needs %d body lines, line %d is not indented under it", size, b.no)
			}
			body[k] = b
		}
		inner, err := parseNodes(body, append(vars[:len(vars):len(vars)], name), false)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, unode{line: l, loop: &uloop{start: start, step: step, count: count, body: inner}})
		if top {
			break
		}
		i += size
	}
	return nodes, nil
}

// parseHeader parses "for.size.N v in range(a, b, c):".
func parseHeader(s string, no int) (size int, name string, start, limit, step int64, err error) {
	bad := func(why string) error { return lineErr(no, ErrBadHeader, "%s in %q", why, s) }
	rest, ok := strings.CutPrefix(s, "for.size.")
	if !ok {
		return 0, "", 0, 0, 0, bad("want for.size.N")
	}
	sp := strings.IndexByte(rest, ' ')
	if sp < 0 {
		return 0, "", 0, 0, 0, bad("want for.size.N v in range(start, limit, step):")
	}
	n, ok := canonInt(rest[:sp])
	if !ok || n <= 0 || n > 1<<30 {
		return 0, "", 0, 0, 0, bad("bad .size")
	}
	rest = rest[sp+1:]
	sp = strings.IndexByte(rest, ' ')
	if sp < 0 || !validVar(rest[:sp]) {
		return 0, "", 0, 0, 0, bad("bad variable")
	}
	name = rest[:sp]
	rest, ok = strings.CutPrefix(rest[sp:], " in range(")
	if !ok {
		return 0, "", 0, 0, 0, bad("want \"in range(\"")
	}
	args, ok := strings.CutSuffix(rest, "):")
	if !ok {
		return 0, "", 0, 0, 0, bad("want \"):\" at the end")
	}
	parts := strings.Split(args, ",")
	if len(parts) != 3 {
		return 0, "", 0, 0, 0, lineErr(no, ErrBadRange, "want range(start, limit, step) in %q", s)
	}
	var v [3]int64
	for k, p := range parts {
		if v[k], ok = canonInt(strings.TrimSpace(p)); !ok {
			return 0, "", 0, 0, 0, lineErr(no, ErrBadRange, "bad number %q in %q", strings.TrimSpace(p), s)
		}
	}
	return int(n), name, v[0], v[1], v[2], nil
}

func validVar(s string) bool {
	if s == "" || !isLower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// rangeLen is len(range(start, limit, step)), which must not be empty.
// The numbers have at most 18 digits, so the differences do not overflow.
func rangeLen(start, limit, step int64) (int64, error) {
	var n int64
	switch {
	case step == 0:
		return 0, errors.New("step is 0")
	case step > 0 && limit > start:
		n = (limit - start + step - 1) / step
	case step < 0 && limit < start:
		n = (start - limit - step - 1) / -step
	}
	if n == 0 {
		return 0, fmt.Errorf("range(%d, %d, %d) is empty", start, limit, step)
	}
	return n, nil
}

// parseSegs parses a line inside a loop: every "(" starts a VarExpr, and a
// "{" that starts a table ({1, 2, 3}[i]) a table.
func parseSegs(l uline, vars []string) ([]useg, int64, error) {
	s := l.text
	var segs []useg
	bound := int64(len(s)) + 1
	tables := strings.Contains(s, "}[")
	for {
		k := strings.IndexByte(s, '(')
		tk, tend := -1, -1
		if tables {
			tk, tend = findTable(s)
		}
		if tk >= 0 && (k < 0 || tk < k) {
			k = tk
		} else {
			tk = -1
		}
		if k < 0 {
			if strings.IndexByte(s, ')') >= 0 {
				return nil, 0, lineErr(l.no, ErrBadExpr, "\")\" without \"(\"")
			}
			return append(segs, useg{lit: s}), bound, nil
		}
		seg := useg{lit: s[:k], expr: true, kind: 'i'}
		if strings.IndexByte(seg.lit, ')') >= 0 {
			return nil, 0, lineErr(l.no, ErrBadExpr, "\")\" without \"(\"")
		}
		if k > 0 {
			switch c := s[k-1]; {
			case c == '+':
				seg.kind, seg.lit = 'o', s[:k-1]
			case isLetter(c):
				seg.kind = 'r'
			}
		}
		if tk >= 0 {
			if err := parseTable(s[k:tend], vars, &seg); err != nil {
				return nil, 0, lineErr(l.no, err, "%s", s[k:tend])
			}
			segs = append(segs, seg)
			bound += 22
			s = s[tend:]
			continue
		}
		end := strings.IndexByte(s[k:], ')')
		if end < 0 {
			return nil, 0, lineErr(l.no, ErrBadExpr, "\"(\" without \")\"")
		}
		expr := s[k+1 : k+end]
		if err := parseExpr(expr, vars, &seg); err != nil {
			return nil, 0, lineErr(l.no, err, "(%s)", expr)
		}
		segs = append(segs, seg)
		bound += 22 // an int64 and a sign, for the expression's text
		s = s[k+end+1:]
	}
}

// findTable finds the first table in s, "{" numbers "}[" name "]": its start
// and end, or -1. ("}[" is no PTX; Roll leaves lines with it out of loops.)
func findTable(s string) (start, end int) {
	for off := 0; ; {
		e := strings.Index(s[off:], "}[")
		if e < 0 {
			return -1, -1
		}
		e += off
		b := strings.LastIndexByte(s[:e], '{')
		c := strings.IndexByte(s[e+2:], ']')
		if b >= 0 && c >= 0 {
			return b, e + 2 + c + 1
		}
		off = e + 2
	}
}

// parseTable parses a table "{v0, v1, ...}[name]".
func parseTable(s string, vars []string, seg *useg) error {
	e := strings.Index(s, "}[")
	name := s[e+2 : len(s)-1]
	depth := -1
	for d, v := range vars {
		if v == name {
			depth = d
		}
	}
	if !validVar(name) {
		return ErrBadExpr
	}
	if depth < 0 {
		return fmt.Errorf("%w %s", ErrUnknownVar, name)
	}
	for _, f := range strings.Split(s[1:e], ", ") {
		v, ok := canonInt(f)
		if !ok {
			return ErrBadExpr
		}
		seg.table = append(seg.table, v)
	}
	seg.terms = []uterm{{depth: depth}}
	return nil
}

// parseExpr parses a VarExpr without its parentheses: n{(+|-)v*n}.
func parseExpr(s string, vars []string, seg *useg) error {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	base, ok := canonInt(s[:i])
	if !ok {
		return ErrBadExpr
	}
	seg.base = base
	for i < len(s) {
		neg := s[i] == '-'
		if !neg && s[i] != '+' {
			return ErrBadExpr
		}
		i++
		j := i
		for j < len(s) && s[j] != '*' {
			j++
		}
		if j == len(s) || !validVar(s[i:j]) {
			return ErrBadExpr
		}
		name := s[i:j]
		depth := -1
		for d, v := range vars {
			if v == name {
				depth = d
			}
		}
		if depth < 0 {
			return fmt.Errorf("%w %s", ErrUnknownVar, name)
		}
		i = j + 1
		j = i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		coef, ok := canonInt(s[i:j])
		if !ok {
			return ErrBadExpr
		}
		if neg {
			coef = -coef
		}
		seg.terms = append(seg.terms, uterm{depth: depth, coef: coef})
		i = j
	}
	return nil
}

// textSize bounds the length of the expanded nodes, saturating above limit.
func textSize(nodes []unode, limit int64) int64 {
	var total int64
	for _, n := range nodes {
		s := n.bound
		if n.loop != nil {
			hi, lo := bits.Mul64(uint64(textSize(n.loop.body, limit)), uint64(n.loop.count))
			if hi != 0 || lo > uint64(limit) {
				return limit + 1
			}
			s = int64(lo)
		}
		if total += s; total > limit {
			return limit + 1
		}
	}
	return total
}

type expander struct {
	out strings.Builder
	env []int64
}

func (e *expander) expand(nodes []unode) error {
	for i := range nodes {
		n := &nodes[i]
		switch {
		case n.loop != nil:
			l := n.loop
			e.env = append(e.env, 0)
			v := l.start
			for range l.count {
				e.env[len(e.env)-1] = v
				if err := e.expand(l.body); err != nil {
					return err
				}
				v += l.step // no overflow: start+count*step stays near limit
			}
			e.env = e.env[:len(e.env)-1]
		default:
			if err := e.line(n); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *expander) line(n *unode) error {
	var buf [24]byte
	for _, s := range n.segs {
		e.out.WriteString(s.lit)
		if !s.expr {
			continue
		}
		v := s.base
		if s.table != nil {
			x := e.env[s.terms[0].depth]
			if x < 0 || x >= int64(len(s.table)) {
				return lineErr(n.line.no, ErrBadExpr, "index %d out of a table of %d", x, len(s.table))
			}
			v = s.table[x]
		}
		for _, t := range s.terms {
			if s.table != nil {
				break
			}
			p, ok := mulInt(t.coef, e.env[t.depth])
			if ok {
				v, ok = addInt(v, p)
			}
			if !ok {
				return lineErr(n.line.no, ErrBadExpr, "overflow")
			}
		}
		switch s.kind {
		case 'r':
			if v < 0 {
				return lineErr(n.line.no, ErrBadExpr, "negative register number %d", v)
			}
		case 'o':
			if v == 0 {
				continue
			}
			e.out.WriteByte('+')
		}
		e.out.Write(strconv.AppendInt(buf[:0], v, 10))
	}
	e.out.WriteByte('\n')
	return nil
}

func mulInt(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == -1<<63) || (b == -1 && a == -1<<63) {
		return 0, false
	}
	return p, true
}

func addInt(a, b int64) (int64, bool) {
	s := a + b
	if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
		return 0, false
	}
	return s, true
}

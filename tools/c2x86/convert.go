package c2x86

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// LineError is one problem the converter found, with its 1-based line.
type LineError struct {
	Line int
	Msg  string
}

// ConvertError lists what the converter rejected. Its text mirrors the
// assembler's ("answer.s:12: Error: ...") so it reads like any other
// assemble error.
type ConvertError struct {
	File   string
	Errors []LineError
}

func (e *ConvertError) Error() string {
	var b strings.Builder
	for i, le := range e.Errors {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:%d: Error: %s", e.File, le.Line, le.Msg)
	}
	return b.String()
}

// ConvertStats says what ConvertFloats changed.
type ConvertStats struct {
	// Constants is the number of floating values turned into IEEE-754 words.
	Constants int
	// Comments is the number of comments rewritten into '#' comments
	// ("; 6.0" after a value, "// text").
	Comments int
}

// maxConvertErrors bounds the errors reported for one file.
const maxConvertErrors = 10

// ConvertFloats is the rule-based half of the seed paper's "symbolic
// interpretation": the model writes floating constants symbolically and this
// converter, not the model, produces their IEEE-754 encodings.
//
//   - `.float E[, E...]` and `.single` become `.long <word>`; `.double E[,
//     ...]` becomes `.long <lo>, <hi>`: words in signed decimal and
//     little-endian order, exactly as GCC writes them. E is a literal (decimal, C hex-float
//     `0x1.8p3`, hex or decimal integer, GAS flonum `0f6.0` / `0d1.5`, an
//     optional C suffix f/F/l/L, inf/infinity/nan with a sign) or a constant
//     expression of them with + - * / and parentheses (`1.0/3.0`). Every
//     expression is evaluated in float64 (IEEE division, so 1.0/0.0 is inf)
//     and, for .float, rounded once to float32 — the value C gives
//     `(float)(expr)`. nan is the quiet NaN GCC emits (0x7fc00000,
//     0x7ff8000000000000).
//     Plain literals matter too: GNU as's own .float/.double rounds ties
//     away from even (16777217 becomes 16777218.0f), GCC and this converter
//     round to nearest-even (16777216.0f).
//   - Integer directives (.long, .quad, ...) are left alone: `.long 6.0`
//     stays an assembler error.
//   - Comments: `#`, `/* */` and a leading `/` are GAS comments and are
//     kept; `// text` after code is rewritten to `# text`. GAS treats `;` as
//     a statement separator, so a `;` segment that cannot be a statement is
//     rewritten into a `#` comment: one after a data directive that does not
//     start with a directive, label or x86 mnemonic (`.long 1086324736 ;
//     6.0`), or anywhere one that starts with a digit, sign, dot-digit or
//     parenthesis.
//   - `.incbin` and `.include` are rejected: they read files of the machine
//     the assembler runs on. (Macros can still assemble those names, and the
//     built program can open files at run time: the sandbox's file
//     visibility is the real fence.)
//
// The output has exactly the input's lines, so assembler line numbers
// still point at the model's text. Errors are a *ConvertError naming lines
// of file (the name used in messages).
func ConvertFloats(file, src string) (string, ConvertStats, error) {
	var st ConvertStats
	cerr := &ConvertError{File: file}
	lines := strings.Split(src, "\n")
	inBlock := false
	for i, line := range lines {
		out, n, c, errs := convertLine(line, &inBlock)
		st.Constants += n
		st.Comments += c
		for _, e := range errs {
			if len(cerr.Errors) < maxConvertErrors {
				cerr.Errors = append(cerr.Errors, LineError{Line: i + 1, Msg: e})
			}
		}
		lines[i] = out
	}
	if len(cerr.Errors) > 0 {
		return "", st, cerr
	}
	return strings.Join(lines, "\n"), st, nil
}

// scanned is one line split into statements with comments blanked out.
type scanned struct {
	clean      []byte // the line, comment bytes replaced by spaces
	semis      []int  // offsets of statement-separating ';'
	codeEnd    int    // offset where a line comment (#, //, leading /) starts, or len
	slashSlash bool   // the line comment is a "//" after code
}

// scanLine splits line, tracking /* */ across lines in inBlock.
func scanLine(line string, inBlock *bool) scanned {
	s := scanned{clean: []byte(line), codeEnd: len(line)}
	blank := func(from, to int) {
		for k := from; k < to && k < len(s.clean); k++ {
			s.clean[k] = ' '
		}
	}
	firstCode := true // no code seen yet on this line
	for i := 0; i < len(line); {
		if *inBlock {
			end := strings.Index(line[i:], "*/")
			if end < 0 {
				blank(i, len(line))
				return s
			}
			blank(i, i+end+2)
			i += end + 2
			*inBlock = false
			continue
		}
		c := line[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			firstCode = false
			continue
		case c == '\'':
			// GAS character constant: 'c or '\c.
			i += 2
			if i-1 < len(line) && line[i-1] == '\\' {
				i++
			}
			firstCode = false
			continue
		case c == '#':
			s.codeEnd = i
			blank(i, len(line))
			return s
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			*inBlock = true
			blank(i, i+2)
			i += 2
			continue
		case c == '/' && firstCode:
			s.codeEnd = i // GAS: '/' first on a line starts a comment
			blank(i, len(line))
			return s
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			s.codeEnd, s.slashSlash = i, true
			blank(i, len(line))
			return s
		case c == ';':
			s.semis = append(s.semis, i)
		case c != ' ' && c != '\t':
			firstCode = false
		}
		i++
	}
	return s
}

// convertLine rewrites one line. It returns the new line, the number of
// constants converted and comments rewritten, and error messages.
func convertLine(line string, inBlock *bool) (string, int, int, []string) {
	s := scanLine(line, inBlock)
	type span struct{ from, to int }
	var stmts []span
	from := 0
	for _, p := range s.semis {
		stmts = append(stmts, span{from, p})
		from = p + 1
	}
	stmts = append(stmts, span{from, s.codeEnd})

	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	var errs []string
	constants, comments := 0, 0
	commentFrom := -1 // offset of a ';' that starts a comment
	afterData := false
	for k, sp := range stmts {
		text := string(s.clean[sp.from:sp.to])
		if k > 0 && isCommentSegment(text, afterData) {
			commentFrom = sp.from - 1
			break
		}
		body, lead := stripLabels(text)
		name, args := splitDirective(body)
		lname := strings.ToLower(name)
		switch lname {
		case ".incbin", ".include":
			errs = append(errs, fmt.Sprintf("%s is not allowed (it reads files of the build machine)", name))
		case ".float", ".single", ".double":
			repl, n, err := convertDirective(lname, args)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s %s: %v", name, strings.TrimSpace(args), err))
				break
			}
			if n > 0 {
				constants += n
				to := sp.from + len(strings.TrimRight(text, " \t"))
				edits = append(edits, edit{sp.from + lead, to, repl})
			}
		}
		afterData = dataDirectives[lname]
	}
	if len(edits) == 0 && commentFrom < 0 && !s.slashSlash {
		return line, 0, 0, errs
	}
	var b strings.Builder
	pos := 0
	end := len(line)
	if commentFrom >= 0 {
		end = commentFrom
	} else if s.slashSlash {
		end = s.codeEnd
	}
	for _, e := range edits {
		if e.from >= end {
			break
		}
		b.WriteString(line[pos:e.from])
		b.WriteString(e.text)
		pos = e.to
	}
	if pos < end {
		b.WriteString(line[pos:end])
	}
	if commentFrom >= 0 {
		// "; rest" -> "# rest" (the rest of the line, // included).
		b.WriteString("#")
		b.WriteString(line[commentFrom+1:])
		comments++
	} else if s.slashSlash {
		b.WriteString("#")
		b.WriteString(line[s.codeEnd+2:])
		comments++
	}
	return b.String(), constants, comments, errs
}

// dataDirectives emit numbers: a ';' segment after them is likely a note.
var dataDirectives = map[string]bool{
	".long": true, ".int": true, ".quad": true, ".word": true, ".short": true, ".byte": true,
	".value": true, ".hword": true, ".2byte": true, ".4byte": true, ".8byte": true, ".octa": true,
	".float": true, ".single": true, ".double": true, ".zero": true, ".skip": true, ".space": true,
}

// isCommentSegment decides whether the text after a ';' is a comment the
// model meant rather than a statement.
func isCommentSegment(text string, afterData bool) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	if isLabelStart(t) {
		return false
	}
	c := t[0]
	switch {
	case c >= '0' && c <= '9', c == '+', c == '-', c == '(', c == '=', c == ',':
		return true
	case c == '.' && len(t) > 1 && t[1] >= '0' && t[1] <= '9':
		return true
	case c == '.':
		return false // a directive
	}
	if !afterData {
		return false
	}
	word, _, _ := strings.Cut(t, " ")
	word, _, _ = strings.Cut(word, "\t")
	return !isMnemonic(word)
}

// isLabelStart reports whether t begins with "name:" (incl. "1:").
func isLabelStart(t string) bool {
	i := 0
	for i < len(t) && isSymbolChar(t[i]) {
		i++
	}
	return i > 0 && i < len(t) && t[i] == ':'
}

func isSymbolChar(c byte) bool {
	return c == '_' || c == '.' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stripLabels skips leading "label:" prefixes and spaces; it returns the
// rest and its offset in text.
func stripLabels(text string) (string, int) {
	off := 0
	for {
		t := strings.TrimLeft(text[off:], " \t")
		off = len(text) - len(t)
		if !isLabelStart(t) {
			return t, off
		}
		off += strings.IndexByte(t, ':') + 1
	}
}

// splitDirective returns ".name" and its arguments, or "" if body is not a
// directive.
func splitDirective(body string) (string, string) {
	if !strings.HasPrefix(body, ".") {
		return "", ""
	}
	i := 1
	for i < len(body) && isSymbolChar(body[i]) {
		i++
	}
	return body[:i], body[i:]
}

// convertDirective turns the arguments of .float/.single/.double into a
// .long directive; n is the number of values.
func convertDirective(name, args string) (string, int, error) {
	if strings.TrimSpace(args) == "" {
		return "", 0, nil // legal and empty: leave it to GAS
	}
	parts := strings.Split(args, ",")
	words := make([]string, 0, 2*len(parts))
	for _, p := range parts {
		v, err := EvalConstant(p)
		if err != nil {
			return "", 0, err
		}
		if name == ".double" {
			bits := doubleBits(v)
			words = append(words, gccWord(uint32(bits)), gccWord(uint32(bits>>32)))
		} else {
			words = append(words, gccWord(floatBits(v)))
		}
	}
	return ".long " + strings.Join(words, ", "), len(parts), nil
}

// gccWord writes a 32-bit word as GCC does: signed decimal.
func gccWord(w uint32) string { return strconv.FormatInt(int64(int32(w)), 10) }

// Float32Bits is the IEEE-754 binary32 encoding ConvertFloats emits for a
// .float expression.
func Float32Bits(expr string) (uint32, error) {
	v, err := EvalConstant(expr)
	if err != nil {
		return 0, err
	}
	return floatBits(v), nil
}

// Float64Bits is the IEEE-754 binary64 encoding ConvertFloats emits for a
// .double expression.
func Float64Bits(expr string) (uint64, error) {
	v, err := EvalConstant(expr)
	if err != nil {
		return 0, err
	}
	return doubleBits(v), nil
}

func floatBits(v float64) uint32 {
	if math.IsNaN(v) {
		if math.Signbit(v) {
			return 0xffc00000
		}
		return 0x7fc00000
	}
	return math.Float32bits(float32(v))
}

func doubleBits(v float64) uint64 {
	if math.IsNaN(v) {
		if math.Signbit(v) {
			return 0xfff8000000000000
		}
		return 0x7ff8000000000000
	}
	return math.Float64bits(v)
}

// EvalConstant evaluates a constant expression (see ConvertFloats) in
// float64.
func EvalConstant(expr string) (float64, error) {
	p := &exprParser{s: expr}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	p.space()
	if p.i < len(p.s) {
		return 0, fmt.Errorf("unexpected %q at column %d", p.s[p.i:], p.i+1)
	}
	return v, nil
}

type exprParser struct {
	s     string
	i     int
	depth int
}

func (p *exprParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) peek() byte {
	p.space()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *exprParser) expr() (float64, error) {
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for {
		switch p.peek() {
		case '+':
			p.i++
			w, err := p.term()
			if err != nil {
				return 0, err
			}
			v += w
		case '-':
			p.i++
			w, err := p.term()
			if err != nil {
				return 0, err
			}
			v -= w
		default:
			return v, nil
		}
	}
}

func (p *exprParser) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for {
		switch p.peek() {
		case '*':
			p.i++
			w, err := p.unary()
			if err != nil {
				return 0, err
			}
			v *= w
		case '/':
			p.i++
			w, err := p.unary()
			if err != nil {
				return 0, err
			}
			v /= w // IEEE: x/0 is ±inf, 0/0 is nan
		default:
			return v, nil
		}
	}
}

func (p *exprParser) unary() (float64, error) {
	switch p.peek() {
	case '-':
		p.i++
		v, err := p.unary()
		return -v, err
	case '+':
		p.i++
		return p.unary()
	}
	return p.primary()
}

func (p *exprParser) primary() (float64, error) {
	c := p.peek()
	switch {
	case c == 0:
		return 0, fmt.Errorf("missing value")
	case c == '(':
		p.depth++
		if p.depth > 64 {
			return 0, fmt.Errorf("expression nested too deeply")
		}
		p.i++
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("missing ')' at column %d", p.i+1)
		}
		p.i++
		p.depth--
		return v, nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		start := p.i
		for p.i < len(p.s) && (isSymbolChar(p.s[p.i])) {
			p.i++
		}
		switch strings.ToLower(p.s[start:p.i]) {
		case "inf", "infinity":
			return math.Inf(1), nil
		case "nan":
			return math.NaN(), nil
		}
		return 0, fmt.Errorf("unknown name %q (only numbers, inf, nan, + - * / and parentheses)", p.s[start:p.i])
	}
	return 0, fmt.Errorf("unexpected %q at column %d", string(c), p.i+1)
}

// number parses one literal at p.i.
func (p *exprParser) number() (float64, error) {
	rest := p.s[p.i:]
	// GAS flonums: 0f6.0 (single), 0d1.5 (double); an optional sign follows.
	if len(rest) > 2 && rest[0] == '0' && strings.ContainsRune("fFdD", rune(rest[1])) &&
		(rest[2] >= '0' && rest[2] <= '9' || rest[2] == '.' || rest[2] == '+' || rest[2] == '-') {
		p.i += 2
		neg := false
		if c := p.s[p.i]; c == '+' || c == '-' {
			neg = c == '-'
			p.i++
		}
		v, err := p.decimal()
		if neg {
			v = -v
		}
		return v, err
	}
	if len(rest) > 1 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		j := 2
		for j < len(rest) && (isHexDigit(rest[j]) || rest[j] == '.') {
			j++
		}
		isFloat := strings.Contains(rest[:j], ".")
		if j < len(rest) && (rest[j] == 'p' || rest[j] == 'P') {
			isFloat = true
			j++
			if j < len(rest) && (rest[j] == '+' || rest[j] == '-') {
				j++
			}
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
		}
		lit := rest[:j]
		p.i += j
		if isFloat {
			v, err := strconv.ParseFloat(lit, 64)
			if err != nil && !isRangeErr(err) {
				return 0, fmt.Errorf("bad hex float %q (needs a p exponent)", lit)
			}
			p.skipSuffix()
			return v, nil
		}
		u, err := strconv.ParseUint(lit[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("bad hex number %q", lit)
		}
		return float64(u), nil
	}
	return p.decimal()
}

// decimal parses digits[.digits][e[+-]digits] and a C suffix.
func (p *exprParser) decimal() (float64, error) {
	start := p.i
	s := p.s
	digits := 0
	for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
		p.i++
		digits++
	}
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
			p.i++
			digits++
		}
	}
	if digits == 0 {
		return 0, fmt.Errorf("bad number at column %d", start+1)
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		j := p.i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return 0, fmt.Errorf("bad exponent in %q", s[start:k])
		}
		p.i = k
	}
	lit := s[start:p.i]
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil && !isRangeErr(err) {
		return 0, fmt.Errorf("bad number %q", lit)
	}
	p.skipSuffix()
	return v, nil
}

// skipSuffix accepts one C floating suffix (f, F, l, L).
func (p *exprParser) skipSuffix() {
	if p.i < len(p.s) && strings.ContainsRune("fFlL", rune(p.s[p.i])) {
		if p.i+1 >= len(p.s) || !isSymbolChar(p.s[p.i+1]) {
			p.i++
		}
	}
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// isRangeErr: ParseFloat returns ±Inf or 0 with ErrRange, which is the
// IEEE answer we want (1e999 is inf).
func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

package ptx2cuda

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Integer expressions of corpus meta files: element counts, launch
// dimensions, shared bytes and integer arguments are C-like expressions
// over the kernel's macros and the item's sizes, evaluated here (in int64)
// so that the harness gets plain numbers and the prompt shows them.
//
// Grammar: integers (decimal or 0x hex, with an optional u/U/l/L suffix),
// names, + - * / % << >> with C's precedence, unary + and -, parentheses,
// min(a, b), max(a, b) and sizeof(T) for T one of the element types. / and
// % truncate as in C; dividing by zero is an error.

// env resolves names: the first layer that defines a name wins. Values are
// expression texts, evaluated when used (a macro may name other macros).
type env struct {
	layers []map[string]string
}

// lookup returns the text of name.
func (e env) lookup(name string) (string, bool) {
	for _, l := range e.layers {
		if v, ok := l[name]; ok {
			return v, true
		}
	}
	return "", false
}

// evalInt evaluates an integer expression.
func (e env) evalInt(text string) (int64, error) {
	p := &exprParser{env: e, active: map[string]bool{}}
	return p.eval(text)
}

type exprParser struct {
	env    env
	active map[string]bool // names being expanded (cycle check)
	toks   []string
	pos    int
}

var exprTokenRE = regexp.MustCompile(`\s*(0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*|[A-Za-z_][A-Za-z0-9_]*|<<|>>|[-+*/%(),])`)

func tokenize(text string) ([]string, error) {
	var toks []string
	rest := text
	for strings.TrimSpace(rest) != "" {
		m := exprTokenRE.FindStringSubmatchIndex(rest)
		if m == nil || m[0] != 0 {
			return nil, fmt.Errorf("cannot read %q", strings.TrimSpace(rest))
		}
		toks = append(toks, rest[m[2]:m[3]])
		rest = rest[m[1]:]
	}
	return toks, nil
}

func (p *exprParser) eval(text string) (int64, error) {
	toks, err := tokenize(text)
	if err != nil {
		return 0, err
	}
	if len(toks) == 0 {
		return 0, errors.New("empty expression")
	}
	saved, savedPos := p.toks, p.pos
	p.toks, p.pos = toks, 0
	defer func() { p.toks, p.pos = saved, savedPos }()
	v, err := p.shift()
	if err != nil {
		return 0, err
	}
	if p.pos != len(p.toks) {
		return 0, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return v, nil
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *exprParser) shift() (int64, error) {
	v, err := p.additive()
	for err == nil && (p.peek() == "<<" || p.peek() == ">>") {
		op := p.next()
		var r int64
		if r, err = p.additive(); err != nil {
			break
		}
		if r < 0 || r > 62 {
			return 0, fmt.Errorf("shift by %d", r)
		}
		if op == "<<" {
			v <<= r
		} else {
			v >>= r
		}
	}
	return v, err
}

func (p *exprParser) additive() (int64, error) {
	v, err := p.multiplicative()
	for err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := p.next()
		var r int64
		if r, err = p.multiplicative(); err != nil {
			break
		}
		if op == "+" {
			v += r
		} else {
			v -= r
		}
	}
	return v, err
}

func (p *exprParser) multiplicative() (int64, error) {
	v, err := p.unary()
	for err == nil && (p.peek() == "*" || p.peek() == "/" || p.peek() == "%") {
		op := p.next()
		var r int64
		if r, err = p.unary(); err != nil {
			break
		}
		switch op {
		case "*":
			if v != 0 && (v*r)/v != r {
				return 0, errors.New("overflow")
			}
			v *= r
		case "/", "%":
			if r == 0 {
				return 0, errors.New("division by zero")
			}
			if op == "/" {
				v /= r
			} else {
				v %= r
			}
		}
	}
	return v, err
}

func (p *exprParser) unary() (int64, error) {
	switch p.peek() {
	case "-":
		p.next()
		v, err := p.unary()
		return -v, err
	case "+":
		p.next()
		return p.unary()
	}
	return p.primary()
}

func (p *exprParser) expect(tok string) error {
	if got := p.next(); got != tok {
		if got == "" {
			got = "end of expression"
		}
		return fmt.Errorf("want %q, got %q", tok, got)
	}
	return nil
}

func (p *exprParser) primary() (int64, error) {
	t := p.next()
	switch {
	case t == "":
		return 0, errors.New("unexpected end of expression")
	case t == "(":
		v, err := p.shift()
		if err != nil {
			return 0, err
		}
		return v, p.expect(")")
	case t[0] >= '0' && t[0] <= '9':
		lit := strings.TrimRight(t, "uUlL")
		v, err := strconv.ParseInt(lit, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("bad integer %q", t)
		}
		return v, nil
	case t == "sizeof":
		if err := p.expect("("); err != nil {
			return 0, err
		}
		var words []string
		for p.peek() != ")" && p.peek() != "" {
			words = append(words, p.next())
		}
		if err := p.expect(")"); err != nil {
			return 0, err
		}
		et, ok := elemTypes[strings.Join(words, " ")]
		if !ok {
			return 0, fmt.Errorf("sizeof(%s): unknown type", strings.Join(words, " "))
		}
		return int64(et.size * et.lanes), nil
	case t == "min" || t == "max":
		if p.peek() != "(" {
			break
		}
		p.next()
		a, err := p.shift()
		if err != nil {
			return 0, err
		}
		if err := p.expect(","); err != nil {
			return 0, err
		}
		b, err := p.shift()
		if err != nil {
			return 0, err
		}
		if err := p.expect(")"); err != nil {
			return 0, err
		}
		if (t == "min") == (a < b) {
			return a, nil
		}
		return b, nil
	}
	if !identRE.MatchString(t) {
		return 0, fmt.Errorf("unexpected %q", t)
	}
	body, ok := p.env.lookup(t)
	if !ok {
		return 0, fmt.Errorf("unknown name %q", t)
	}
	if p.active[t] {
		return 0, fmt.Errorf("%s is defined in terms of itself", t)
	}
	p.active[t] = true
	defer delete(p.active, t)
	v, err := p.eval(body)
	if err != nil {
		return 0, fmt.Errorf("%s (= %s): %w", t, body, err)
	}
	return v, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// defineRE finds object-like macro definitions: "#define NAME body".
var defineRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)(?:[ \t]+(.*?))?[ \t]*$`)

// commentRE finds the comments a #define line may end with.
var commentRE = regexp.MustCompile(`//.*$|/\*.*?\*/`)

// KernelDefines returns the object-like macros of a kernel source (the
// first definition of each name: for "#ifndef BLOCK / #define BLOCK 256"
// the default), comments removed. Function-like macros are skipped. Bodies
// are kept as text; only those an expression uses must be integers.
func KernelDefines(src string) map[string]string {
	out := map[string]string{}
	for _, m := range defineRE.FindAllStringSubmatch(src, -1) {
		name, body := m[1], strings.TrimSpace(commentRE.ReplaceAllString(m[2], ""))
		if _, seen := out[name]; seen {
			continue
		}
		if body == "" {
			body = "1"
		}
		out[name] = body
	}
	return out
}

// flagDefines returns the -DNAME[=VALUE] macros of nvcc flags (VALUE
// defaults to 1, as for the compiler).
func flagDefines(flags []string) map[string]string {
	out := map[string]string{}
	for _, f := range flags {
		def, ok := strings.CutPrefix(f, "-D")
		if !ok {
			continue
		}
		name, val, hasVal := strings.Cut(def, "=")
		if !hasVal {
			val = "1"
		}
		out[name] = val
	}
	return out
}

// parseFloatValue reads a float scalar's value: a decimal or exponent
// literal (an optional f suffix), or an integer expression.
func parseFloatValue(e env, text string) (float64, error) {
	t := strings.TrimSpace(text)
	if v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(t, "f"), "F"), 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not finite", t)
		}
		return v, nil
	}
	i, err := e.evalInt(t)
	if err != nil {
		return 0, err
	}
	return float64(i), nil
}

package rollptx

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

const (
	// MaxBody is the longest loop body Roll looks for, in lines (a nested
	// loop counts as one).
	MaxBody = 256
	// MaxDepth is the deepest loop nesting Roll makes.
	MaxDepth = 8
	// MaxTable is the most values a table holds.
	MaxTable = 64
)

// Stats describes one Roll.
type Stats struct {
	InBytes, OutBytes           int // text length
	InLines, OutLines           int // lines, a last line without "\n" included
	InStatements, OutStatements int // instruction lines; loop headers count as statements
	Loops                       int // loop headers in the output, all levels
	MaxDepth                    int // deepest loop nesting in the output (0: nothing folded)
}

// Reduction is the fraction of bytes saved: 1 - OutBytes/InBytes.
func (s Stats) Reduction() float64 {
	if s.InBytes == 0 {
		return 0
	}
	return 1 - float64(s.OutBytes)/float64(s.InBytes)
}

// LineReduction is the fraction of lines saved: 1 - OutLines/InLines.
func (s Stats) LineReduction() float64 {
	if s.InLines == 0 {
		return 0
	}
	return 1 - float64(s.OutLines)/float64(s.InLines)
}

// Roll returns Rolled-PTX: unrolled repeats folded into `for` statements.
// Text that cannot be folded comes back unchanged.
func Roll(ptx string) string {
	r := getRoller()
	defer r.release()
	return r.roll(ptx)
}

// RollStats is Roll that also describes what it did.
func RollStats(ptx string) (string, Stats) {
	r := getRoller()
	defer r.release()
	out := r.roll(ptx)
	st := Stats{
		InBytes:      len(ptx),
		OutBytes:     len(out),
		InLines:      countLines(ptx),
		InStatements: r.instr,
	}
	if out == ptx {
		st.OutLines, st.OutStatements = st.InLines, st.InStatements
		return out, st
	}
	st.OutLines = countLines(out)
	for i := range r.items {
		u := &r.items[i]
		switch {
		case u.shape < 0:
			if r.lines[u.line].instr {
				st.OutStatements++
			}
		default:
			r.unitStats(u, 1, &st)
		}
	}
	return out, st
}

func (r *roller) unitStats(u *unit, depth int, st *Stats) {
	if u.loop < 0 {
		if r.lines[u.line].instr {
			st.OutStatements++
		}
		return
	}
	st.OutStatements++
	l := &r.loops[u.loop]
	st.Loops++
	st.MaxDepth = max(st.MaxDepth, depth)
	for i := l.blo; i < l.blo+l.bn; i++ {
		r.unitStats(&r.bodies[i], depth+1, st)
	}
}

func countLines(s string) int {
	n := strings.Count(s, "\n")
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// Hole kinds: a number printed as is (register number, immediate), an
// address offset (printed "+N", nothing when 0), or the number of a label.
const (
	kindPlain  uint8 = 1
	kindOffset uint8 = 2
	kindLabel  uint8 = 3
)

// term is one "+v*stride" of a VarExpr; level names the variable.
type term struct {
	stride int64
	level  int32
}

// hole is a number of a line: its value in the first iteration and,
// inside loops, how it moves: terms r.terms[tlo:tlo+tn], inner loops first,
// or (tn == -1) a table of its values, r.tvals[tlo] the loop's level,
// r.tvals[tlo+1] their count K, then the K values.
type hole struct {
	base  int64
	start int32 // lexed holes: where the number is in the source
	tlo   int32
	tn    int16
	tlen  int16 // length of the rendered terms or table; 0 when there are none
	blen  uint8 // digits(base)
	kind  uint8
	class uint8 // register number: its prefix (%r, %rd, %f, ...); 0 otherwise
}

// srcLen is the length of a lexed hole in the source: "+N" for an offset,
// nothing for offset 0.
func (h *hole) srcLen() int32 {
	if h.kind == kindOffset {
		if h.base == 0 {
			return 0
		}
		return 1 + int32(h.blen)
	}
	return int32(h.blen)
}

// loopNode is a folded loop; its body is the first iteration,
// r.bodies[blo:blo+bn]. The numbers live in the loop's unit.
type loopNode struct {
	blo, bn int32
	k       int32
	level   int32
	lines   int32 // body lines
	indLine int32 // a line whose indentation starts with the loop's
	indLen  int32 // the loop's indentation: the common prefix of its body's
	tabs    bool  // that is tabs only
}

// unit is an item of the text: a separator line, a statement or a loop. The
// roller's tables hold everything it refers to, so units hold no pointers.
type unit struct {
	shape int32 // -1: separator
	line  int32 // statement or separator: its line
	hlo   int32 // numbers: r.holes[hlo:hlo+hn]
	hn    int32
	loop  int32 // index in r.loops; -1: not a loop
	cost  int32 // rendered bytes, newlines included
	lines int32 // rendered lines
	blank int32 // rendered lines that are empty (they take no indentation)
	level int32 // 0 statement, else the loop's variable level (1 = i)
}

func (r *roller) holesOf(u *unit) []hole { return r.holes[u.hlo : u.hlo+u.hn] }

// tableable reports whether a number may become a table: an immediate or
// an offset that does not vary yet.
func tableable(h *hole) bool {
	return h.class == 0 && h.kind != kindLabel && h.tn == 0
}

// fixOf is what a number adds when it becomes a VarExpr besides its new
// term: the parentheses, and the "+0" of an offset 0, unless it has terms.
func fixOf(base int64, tlen int16, kind uint8) uint8 {
	switch {
	case tlen != 0:
		return 0
	case kind == kindOffset && base == 0:
		return 4
	}
	return 2
}

type lineInfo struct {
	start, end int32 // without the "\n"
	ind        int32 // leading white space
	instr      bool  // an instruction line (for Stats)
	tabs       bool  // the leading white space is tabs only
}

type tabEnt struct {
	h   uint64
	id  int32
	gen uint32 // the entry is empty unless gen is the roller's
}

// cand is a candidate body length n at a position p: r1 units from p match
// the unit n further. Once r1 >= n (the candidate is hot), r2 is how many of
// them also move by the same step as the next pair, and w how much the
// VarExprs add to the body u[p:p+n] as long as its numbers move so.
type cand struct {
	n, r1, r2 int32
	r2c       int32 // like r2, for the numbers other than registers
	r2f       int32 // like r2, for the numbers that cannot be tables
	kall      int32 // loops(c), set by heat
	kmost     int32
	at        int32 // long bodies: the position of the candidate
	w         int64
}

type roller struct {
	src   string
	lines []lineInfo
	instr int
	items []unit
	spare []unit
	out   []byte
	work  [4][]unit // the passes of the two strategies
	ins   []int32   // render's stack of loop indentations

	classes []string
	// the last regClass lookup
	lastClass string
	lastID    uint8
	holes     []hole // the lexed holes, then those of loops
	terms     []term
	tvals     []int64 // tables (see hole)
	loops     []loopNode
	bodies    []unit

	// shape interning
	tab        []tabEnt
	tgen       uint32
	nshape     int
	blankShape int32 // the shape of an empty line, once one is lexed
	arena      []byte
	shapeOff   []int32

	// per-run dynamic programming
	next   []int32
	fc     foldCtx
	shp    []int32 // the shapes of the run's units, then gram times -2
	best   []score
	choice []int32 // packed: N, K
	cost   []int64 // prefix sums
	nlines []int64
	ntabs  []int64 // prefix sums of the lines that take indentation
	ninstr []int32 // prefix sums of instruction lines, a loop counting as two
	long   [MaxBody + 1]cand
	base   int32 // see foldRun
	reach  []reach
	indl   []int32 // per position: indentKey
	// nestable: the body of a loop made by the last foldRun for flat holds
	// a fold that pays
	nestable bool
	ind0     []int32 // prefix counts of indentKey 0
	indx     []int32 // prefix counts of indentKey other than -1, 0, 1
	khash    []uint64
	ktab     []int32

	// later passes
	plast  []int32
	pstamp []uint32
	pgen   uint32
	paired []int32
	psame  []int32
	pfar   []int32
	pdiff  []int32
}

var (
	seed = maphash.MakeSeed()
	// free keeps idle rollers and their buffers. Unlike a sync.Pool it
	// survives garbage collections, which Roll's output makes frequent.
	free = make(chan *roller, 8)
)

func (r *roller) release() {
	big := len(r.src) > 4<<20
	r.src, r.lastClass = "", ""
	if big {
		return // do not keep the buffers of a huge text
	}
	select {
	case free <- r:
	default:
	}
}

func getRoller() *roller {
	select {
	case r := <-free:
		return r
	default:
		return new(roller)
	}
}

// roll does the work; its result is src itself when nothing folds.
func (r *roller) roll(src string) string {
	r.src = src
	r.instr = 0
	r.lines = r.lines[:0]
	r.items = r.items[:0]
	r.classes = r.classes[:0]
	r.lastClass, r.lastID = "", 0
	r.holes = r.holes[:0]
	r.terms = r.terms[:0]
	r.tvals = r.tvals[:0]
	r.loops = r.loops[:0]
	r.bodies = r.bodies[:0]
	r.arena = r.arena[:0]
	r.shapeOff = append(r.shapeOff[:0], 0)
	r.nshape = 0
	r.blankShape = -1
	if len(src) >= 1<<31-1 {
		return src
	}
	want := 64
	for want < len(src)/16 { // about two entries a line
		want *= 2
	}
	if len(r.tab) < want {
		r.tab = make([]tabEnt, want)
		r.tgen = 0
	}
	r.tgen++
	if r.tgen == 0 {
		clear(r.tab)
		r.tgen = 1
	}
	if !r.lex() {
		return src // holds a line Unroll would read as a loop header
	}
	if !r.rollRuns() {
		return src
	}
	dst := r.out[:0]
	if cap(r.ins) < MaxDepth+1 {
		r.ins = make([]int32, 0, MaxDepth+1)
	}
	for i := range r.items {
		u := &r.items[i]
		if u.loop >= 0 {
			dst = r.render(dst, u, r.holesOf(u), r.ins[:0])
			continue
		}
		li := r.lines[u.line]
		dst = append(dst, src[li.start:li.end]...)
		if int(li.end) < len(src) {
			dst = append(dst, '\n')
		}
	}
	r.out = dst
	return string(dst)
}

// lex splits src into lines and makes a unit of each; false when a line
// looks like a loop header.
func (r *roller) lex() bool {
	src := r.src
	ok := true
	for pos := 0; pos < len(src); {
		end := strings.IndexByte(src[pos:], '\n')
		nl := true
		if end < 0 {
			end, nl = len(src), false
		} else {
			end += pos
		}
		line := src[pos:end]
		ind, spaces := 0, false
		for ind < len(line) && (line[ind] == '\t' || line[ind] == ' ') {
			spaces = spaces || line[ind] == ' '
			ind++
		}
		body := line[ind:]
		li := lineInfo{start: int32(pos), end: int32(end), ind: int32(ind), tabs: !spaces}
		if isHeaderLike(body) {
			ok = false // keep counting statements for Stats
		}
		li.instr = len(body) > 1 && body[len(body)-1] == ';' && (isLower(body[0]) || body[0] == '@')
		if li.instr {
			r.instr++
		}
		u := unit{shape: -1, line: int32(len(r.lines)), loop: -1}
		switch {
		case !nl:
		case len(line) == 0 && r.blankShape >= 0: // many: skip the interning
			u.shape, u.hlo, u.cost, u.lines, u.blank = r.blankShape, int32(len(r.holes)), 1, 1, 1
		default:
			r.statement(&u, line, pos, ind)
			if len(line) == 0 {
				r.blankShape = u.shape
			}
		}
		r.lines = append(r.lines, li)
		r.items = append(r.items, u)
		pos = end + 1
	}
	return ok
}

func isLower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// isIdent reports whether c can continue an identifier or register name.
func isIdent(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '$'
}

// isHeaderLike reports whether Unroll would read a line with this text (after
// its indentation) as a loop header.
func isHeaderLike(s string) bool {
	if !strings.HasPrefix(s, "for") {
		return false
	}
	if len(s) == 3 {
		return true
	}
	switch s[3] {
	case '.', ' ', '\t', ':', '(':
		return true
	}
	return false
}

// statement lexes a line into u: its numbers become holes and the rest its
// shape. Any line can be a statement (instructions, labels, comments,
// directives, blank lines) unless it holds what a loop body cannot: a
// parenthesis (inside a body "(" starts a VarExpr), "}[" (which ends a
// table) or a control character; such a line stays a separator.
func (r *roller) statement(u *unit, line string, pos, ind int) {
	if i := strings.IndexByte(line, '}'); i >= 0 && strings.Contains(line[i:], "}[") {
		return // inside a body "{1, 2}[i]" is a table
	}
	a0 := len(r.arena)
	holes := r.holes
	h0 := len(holes)
	shape := append(r.arena, line[:ind]...)
	n := len(line)
	i := ind
	for i < n {
		c := line[i]
		switch {
		case c == '%':
			i, shape, holes = r.register(line, i, pos, shape, holes)
		case c == '$' && (i == 0 || !isIdent(line[i-1])):
			i, shape, holes = label(line, i, pos, shape, holes)
		case c == '[':
			shape = append(shape, '[')
			i++
			j := i
			if j < n && line[j] == '%' {
				j, shape, holes = r.register(line, j, pos, shape, holes)
			} else if j < n && (isLetter(line[j]) || line[j] == '_' || line[j] == '$') {
				for j < n && (isIdent(line[j]) || line[j] == '.') {
					j++
				}
				shape = append(shape, line[i:j]...)
			} else {
				continue
			}
			i = j
			if j < n && line[j] == ']' {
				holes = append(holes, hole{start: int32(pos + j), blen: 1, kind: kindOffset})
				shape = append(shape, kindOffset)
			} else if j+1 < n && line[j] == '+' {
				m := j + 1
				if line[m] == '-' {
					m++
				}
				for m < n && isDigit(line[m]) {
					m++
				}
				if m < n && line[m] == ']' {
					if v, ok := canonInt(line[j+1 : m]); ok && v != 0 {
						holes = append(holes, hole{base: v, start: int32(pos + j), blen: uint8(m - j - 1), kind: kindOffset})
						shape = append(shape, kindOffset)
						i = m
					}
				}
			}
		case isDigit(c) || (c == '-' && i+1 < n && isDigit(line[i+1])):
			m := i + 1
			for m < n && isDigit(line[m]) {
				m++
			}
			if i > 0 && isImmPrev(line[i-1]) && m < n && isImmNext(line[m]) {
				if v, ok := canonInt(line[i:m]); ok {
					holes = append(holes, hole{base: v, start: int32(pos + i), blen: uint8(m - i), kind: kindPlain})
					shape = append(shape, kindPlain)
					i = m
					continue
				}
			}
			shape = append(shape, line[i:m]...)
			i = m
		case c == '/':
			// a comment: the rest of the line is text (it holds no
			// parenthesis: checked below)
			for m := i; m < n; m++ {
				if c := line[m]; c == '(' || c == ')' || (c < ' ' && c != '\t') {
					r.arena, r.holes = shape[:a0], holes[:h0]
					return
				}
			}
			shape = append(shape, line[i:]...)
			i = n
		case c < ' ' && c != '\t', c == '(', c == ')':
			r.arena, r.holes = shape[:a0], holes[:h0]
			return
		default:
			// copy up to the next byte that needs a look
			m := i + 1
			for m < n && !special[line[m]] {
				m++
			}
			shape = append(shape, line[i:m]...)
			i = m
		}
	}
	r.arena, r.holes = shape, holes
	u.shape = r.intern(a0)
	u.hlo, u.hn = int32(h0), int32(len(holes)-h0)
	u.cost = int32(n + 1)
	u.lines = 1
	if n == 0 {
		u.blank = 1
	}
}

// special marks the bytes statement looks at; the others are copied in runs.
var special = func() (t [256]bool) {
	for c := 0; c < ' '; c++ {
		t[c] = true
	}
	for _, c := range "%$[-()/0123456789" {
		t[c] = true
	}
	// a digit right after an identifier byte is copied with it below, but
	// identifiers are short: simpler to stop at every digit.
	return t
}()

func isImmPrev(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == '{' || c == '[' }
func isImmNext(c byte) bool { return c == ',' || c == ';' || c == '}' || c == ']' }

// register lexes a "%name123" at line[i]; the number becomes a hole.
func (r *roller) register(line string, i, pos int, shape []byte, holes []hole) (int, []byte, []hole) {
	n := len(line)
	j := i + 1
	for j < n && isLetter(line[j]) {
		j++
	}
	k := j
	var v int64
	for k < n && isDigit(line[k]) {
		v = v*10 + int64(line[k]-'0')
		k++
	}
	// a hole when the number ends the name and is written canonically
	if j > i+1 && k > j && (k == n || !isIdent(line[k])) && k-j <= 18 && (line[j] != '0' || k == j+1) {
		shape = append(shape, line[i:j]...)
		shape = append(shape, kindPlain)
		holes = append(holes, hole{base: v, start: int32(pos + j), blen: uint8(k - j), kind: kindPlain,
			class: r.regClass(line[i+1 : j])})
		return k, shape, holes
	}
	// not a numbered register: copy the name whole
	for k < n && isIdent(line[k]) {
		k++
	}
	return k, append(shape, line[i:k]...), holes
}

// label lexes a "$name123" at line[i] (nvcc's labels, $L__BB0_12): the
// number that ends the name becomes a hole, so that the labels and branch
// targets of an unrolled multi-block loop body can fold.
func label(line string, i, pos int, shape []byte, holes []hole) (int, []byte, []hole) {
	n := len(line)
	k := i + 1
	for k < n && isIdent(line[k]) && line[k] != '$' {
		k++
	}
	j := k
	for j > i+1 && isDigit(line[j-1]) {
		j--
	}
	if j < k && j > i+1 && k-j <= 18 && (line[j] != '0' || k == j+1) {
		var v int64
		for _, c := range []byte(line[j:k]) {
			v = v*10 + int64(c-'0')
		}
		shape = append(shape, line[i:j]...)
		shape = append(shape, kindLabel)
		holes = append(holes, hole{base: v, start: int32(pos + j), blen: uint8(k - j), kind: kindLabel})
		return k, shape, holes
	}
	return k, append(shape, line[i:k]...), holes
}

// regClass numbers register prefixes from 1; 255 stands for all past 254.
func (r *roller) regClass(prefix string) uint8 {
	if prefix == r.lastClass {
		return r.lastID
	}
	id := r.findClass(prefix)
	r.lastClass, r.lastID = prefix, id
	return id
}

func (r *roller) findClass(prefix string) uint8 {
	for i, c := range r.classes {
		if c == prefix {
			return uint8(i + 1)
		}
	}
	if len(r.classes) == 254 {
		return 255
	}
	r.classes = append(r.classes, prefix)
	return uint8(len(r.classes))
}

// canonInt parses a decimal integer written the way strconv prints it, of
// at most 18 digits (so that differences cannot overflow).
func canonInt(s string) (int64, bool) {
	neg := false
	if s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	if s == "" || len(s) > 18 || (s[0] == '0' && (len(s) > 1 || neg)) {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// intern returns the id of the shape in r.arena[a0:], keeping it there when
// it is new.
func (r *roller) intern(a0 int) int32 {
	b := r.arena[a0:]
	h := maphash.Bytes(seed, b)
	if 2*(r.nshape+1) > len(r.tab) {
		r.grow()
	}
	mask := len(r.tab) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := &r.tab[i]
		if e.gen != r.tgen {
			id := int32(r.nshape)
			r.nshape++
			*e = tabEnt{h: h, id: id, gen: r.tgen}
			r.shapeOff = append(r.shapeOff, int32(len(r.arena)))
			return id
		}
		if e.h == h {
			id := e.id
			if bytes.Equal(r.arena[r.shapeOff[id]:r.shapeOff[id+1]], b) {
				r.arena = r.arena[:a0]
				return id
			}
		}
	}
}

func (r *roller) grow() {
	old := r.tab
	r.tab = make([]tabEnt, 2*len(old))
	mask := len(r.tab) - 1
	for _, e := range old {
		if e.gen != r.tgen {
			continue
		}
		i := int(e.h) & mask
		for r.tab[i].gen == r.tgen {
			i = (i + 1) & mask
		}
		r.tab[i] = e
	}
}

func (r *roller) indentOf(u *unit) string {
	if u.loop >= 0 {
		l := &r.loops[u.loop]
		li := r.lines[l.indLine]
		return r.src[li.start : li.start+l.indLen]
	}
	li := r.lines[u.line]
	return r.src[li.start : li.start+li.ind]
}

// rollRuns rolls every run of statements (the lines between two separators)
// and reports whether anything folded.
func (r *roller) rollRuns() bool {
	items := r.items
	out := r.spare[:0]
	folded := false
	for i := 0; i < len(items); {
		if items[i].shape < 0 {
			out = append(out, items[i])
			i++
			continue
		}
		j := i + 1
		for j < len(items) && items[j].shape >= 0 {
			j++
		}
		if j-i < 2 {
			out = append(out, items[i:j]...)
			i = j
			continue
		}
		// Two strategies; the shorter result wins. Flat: each pass makes
		// its own text shortest. Innermost: each pass folds the nearest
		// repeat that pays (PtxDec's order), which leaves the loops of an
		// unrolled nest for the next passes to nest. Innermost runs only
		// where it can win: when the body of a loop of flat's first pass
		// holds a fold that would pay on its own (flat folded a whole
		// unrolled nest into one loop, the inner loops hidden in its body).
		first, f := r.foldRun(items[i:j], flat, r.work[0][:0])
		r.work[0] = first
		a := items[i:j]
		if f {
			a = r.passes(first, flat, 0)
			if r.nestable {
				first, f = r.foldRun(items[i:j], innermost, r.work[2][:0])
				r.work[2] = first
				if b := r.passes(first, innermost, 2); f && unitsCost(b) < unitsCost(a) {
					a = b
				}
			}
		}
		folded = folded || len(a) < j-i
		out = append(out, a...)
		i = j
	}
	r.spare, r.items = items, out
	return folded
}

// passes folds run (the result of a first pass, in r.work[w]) again until a
// pass folds nothing, in r.work[w^1] and r.work[w], and returns the result.
//
// A later pass can only nest: each iteration of a new loop's body holds a
// loop of the passes before (iterations have the shapes of the first one, and
// one of plain statements would have been folded already), and that loop has
// a twin of its shape in the next or the previous iteration, the body's
// length N away. So a pass rolls only the units closer than N to a loop with
// a twin N away (N <= MaxBody), one stretch at a time, and copies the others.
func (r *roller) passes(run []unit, strat int, w int) []unit {
	cur := run
	for pass := 1; pass < MaxDepth; pass++ {
		spans := r.twinSpans(cur)
		if len(spans) == 0 {
			break
		}
		dst := r.work[w^1][:0]
		folded := false
		done := 0
		for k := 0; k < len(spans); k += 2 {
			lo, hi := int(spans[k]), int(spans[k+1])
			dst = append(dst, cur[done:lo]...)
			var f bool
			dst, f = r.foldRun(cur[lo:hi], strat, dst)
			folded = folded || f
			done = hi
		}
		dst = append(dst, cur[done:]...)
		r.work[w^1] = dst
		if !folded {
			break
		}
		cur = dst
		w ^= 1
	}
	return cur
}

// twinSpans returns the stretches of us (lo, hi pairs, in order) where a
// later pass can fold: the units closer than d to a loop that has a loop of
// its shape (a twin) d <= MaxBody units before or after it, the farthest
// such d.
func (r *roller) twinSpans(us []unit) []int32 {
	if len(r.plast) < r.nshape {
		r.plast = make([]int32, r.nshape+r.nshape/2+16)
		r.pstamp = make([]uint32, len(r.plast))
		r.pgen = 0
	}
	r.pgen++
	if r.pgen == 0 {
		clear(r.pstamp)
		r.pgen = 1
	}
	n := len(us)
	if cap(r.psame) < n {
		r.psame = make([]int32, n)
		r.pfar = make([]int32, n)
		r.pdiff = make([]int32, n+1)
	}
	same, far := r.psame[:n], r.pfar[:n]
	any := false
	for y := range us {
		if us[y].loop < 0 {
			continue
		}
		sh := us[y].shape
		same[y], far[y] = -1, 0
		if r.pstamp[sh] == r.pgen {
			same[y] = r.plast[sh]
			for x := same[y]; x >= 0 && y-int(x) <= MaxBody; x = same[x] {
				d := int32(y) - x
				far[y] = max(far[y], d)
				far[x] = max(far[x], d)
				any = true
			}
		}
		r.pstamp[sh], r.plast[sh] = r.pgen, int32(y)
	}
	res := r.paired[:0]
	if any {
		diff := r.pdiff[:n+1]
		clear(diff)
		for y := range us {
			if us[y].loop >= 0 && far[y] > 0 {
				diff[max(0, y-int(far[y])+1)]++
				diff[min(n, y+int(far[y]))]--
			}
		}
		c := int32(0)
		for y := 0; y <= n; y++ {
			was := c
			c += diff[y]
			switch {
			case was == 0 && c > 0:
				res = append(res, int32(y))
			case was > 0 && c == 0:
				res = append(res, int32(y))
			}
		}
	}
	r.paired = res
	return res
}

func unitsCost(us []unit) int64 {
	var c int64
	for i := range us {
		c += int64(us[i].cost)
	}
	return c
}

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// digits is the length of strconv.FormatInt(v, 10).
func digits(v int64) int32 {
	u, n := uint64(v), int32(0)
	if v < 0 {
		u, n = -u, 1
	}
	d := int32(bits.Len64(u|1)*1233) >> 12 // floor(log10(u)) or one more
	if u|1 < pow10[d] {
		d--
	}
	return n + d + 1
}

func headerLen(ind int, bodyLines, k int64) int64 {
	// for.size.<N> i in range(0, <K>, 1):\n
	return int64(ind) + 30 + int64(digits(bodyLines)+digits(k))
}

func termLen(d int64) int32 {
	if d < 0 {
		d = -d // |d| < 2e18: numbers have at most 18 digits
	}
	switch {
	case d < 10:
		return 4
	case d < 100:
		return 5
	}
	return 3 + digits(d)
}

func holeLen(h *hole) int32 {
	if h.tn < 0 { // a table
		if h.kind == kindOffset {
			return 1 + int32(h.tlen)
		}
		return int32(h.tlen)
	}
	if h.tlen == 0 {
		if h.kind == kindOffset {
			if h.base == 0 {
				return 0
			}
			return 1 + int32(h.blen)
		}
		return int32(h.blen)
	}
	return exprLen(h, int32(h.tlen))
}

// exprLen is the length of h written as a VarExpr with terms of length tlen.
func exprLen(h *hole, tlen int32) int32 {
	n := 2 + int32(h.blen) + tlen
	if h.kind == kindOffset {
		n++
	}
	return n
}

// score orders renderings: fewer bytes first; then, for the innermost
// strategy, the one whose loops start earlier (pen sums n-q over the
// statements q left outside loops). Ties otherwise go to later loops; mixing
// the two rules across the strategies gave the shortest corpus total.
type score struct{ b, pen int64 }

func (s score) less(t score) bool { return s.b < t.b || (s.b == t.b && s.pen < t.pen) }

// gram is the length of the shape sequences (k-grams) by which foldRun finds
// repeats of bodies of gram or more units; shorter bodies it finds by
// comparing shapes directly.
const gram = 8

// Strategies of foldRun (see rollRuns).
const (
	flat      = iota // make each pass's text shortest
	innermost        // fold at each position the nearest repeat that pays
)

// foldRun chooses the folds of one run of units by dynamic programming
// (best[p] = the best rendering of u[p:]) with the strategy strat, appends
// the result to out and reports whether anything folded. A fold must be
// shorter than the statements it replaces.
//
// Candidates: at position p, a body of N units can repeat only if u[p+N]
// has the shape of u[p]. For N < gram every such N is a candidate; for
// larger N only those where the gram shapes from p recur N later (a loop of
// such a body needs N >= gram matching units anyway), found through a chain
// of equal k-grams. Per candidate the recurrences over p give, in O(1)
// amortised: r1, how many units from p match the unit N further; once
// r1 >= N (the candidate is hot, a loop can start at p), r2, how many of
// them also move by the same step as the next pair, and w, how much the
// VarExprs add to the body (a window sum that slides with p).
func (r *roller) foldRun(u []unit, strat int, out []unit) ([]unit, bool) {
	n := len(u)
	r.growFoldBuffers(n)
	next, shp := r.next[:n], r.shp[:n+gram]
	best, choice := r.best[:n+1], r.choice[:2*n]
	r.prefixSums(u)
	r.chain(shp[:n], next)
	fc := &r.fc
	*fc = foldCtx{u: u, shp: shp, cost: r.cost[:n+1], nlines: r.nlines[:n+1], ntabs: r.ntabs[:n+1], ninstr: r.ninstr[:n+1], best: best}
	if strat == innermost {
		fc.penW, fc.inner = 1, true
	}
	best[n] = score{}
	base := r.resetCandidates(n)
	small := &fc.small
	for p := n - 1; p >= 0; p-- {
		fc.b = score{int64(u[p].cost) + best[p+1].b, fc.penW*int64(n-p) + best[p+1].pen}
		fc.cn, fc.ck, fc.found = 0, 0, false
		sh := shp[p]
		near := shp[p+1 : p+gram]
		if next[p] < 0 && near[0] != sh && near[1] != sh && near[2] != sh && near[3] != sh &&
			near[4] != sh && near[5] != sh && near[6] != sh {
			// no candidate at p
			for N := 1; N < gram; N++ {
				small[N].r1 = 0
			}
			best[p] = fc.b
			choice[2*p], choice[2*p+1] = 0, 0
			continue
		}
		r.evalCandidates(p, next, near, base)
		best[p] = fc.b
		choice[2*p], choice[2*p+1] = fc.cn, fc.ck
	}
	r.reach = r.reach[:0]
	fc.u, fc.best, fc.shp = nil, nil, nil
	if strat == flat {
		r.nestable = nestable(choice, n)
	}
	return r.emitFolds(u, choice, out)
}

// growFoldBuffers makes foldRun's buffers hold a run of n units.
func (r *roller) growFoldBuffers(n int) {
	if cap(r.next) >= n {
		return
	}
	r.next = make([]int32, n)
	r.shp = make([]int32, n+gram)
	r.best = make([]score, n+1)
	r.choice = make([]int32, 2*n)
	r.cost = make([]int64, n+1)
	r.nlines = make([]int64, n+1)
	r.ntabs = make([]int64, n+1)
	r.ninstr = make([]int32, n+1)
	r.indl = make([]int32, n)
	r.ind0 = make([]int32, n+1)
	r.indx = make([]int32, n+1)
}

// prefixSums fills the shapes of u (then gram that match nothing) and the
// prefix sums over u of the cost, lines, non-blank lines, instructions and
// indentation keys that eval reads in O(1).
func (r *roller) prefixSums(u []unit) {
	n := len(u)
	shp := r.shp[:n+gram]
	cost, nlines, ntabs, ninstr := r.cost[:n+1], r.nlines[:n+1], r.ntabs[:n+1], r.ninstr[:n+1]
	indl, ind0, indx := r.indl[:n], r.ind0[:n+1], r.indx[:n+1]
	cost[0], nlines[0], ntabs[0], ind0[0], indx[0], ninstr[0] = 0, 0, 0, 0, 0, 0
	for q := 0; q < n; q++ {
		uq := &u[q]
		shp[q] = uq.shape
		cost[q+1] = cost[q] + int64(uq.cost)
		nlines[q+1] = nlines[q] + int64(uq.lines)
		ntabs[q+1] = ntabs[q] + int64(uq.lines-uq.blank)
		ninstr[q+1] = ninstr[q]
		switch {
		case uq.loop >= 0:
			ninstr[q+1] += 2 // a loop counts as two instructions
		case r.lines[uq.line].instr:
			ninstr[q+1]++
		}
		k := r.indentKey(uq)
		indl[q] = k
		ind0[q+1], indx[q+1] = ind0[q], indx[q]
		switch k {
		case -1, 1:
		case 0:
			ind0[q+1]++
		default:
			indx[q+1]++
		}
	}
	for q := n; q < n+gram; q++ {
		shp[q] = -2 // no unit: matches nothing
	}
}

// resetCandidates readies the candidates for a run of n units and returns
// its stamp base. small[N] is the candidate N < gram of position p+1 (r1 =
// 0: none); long[N] that of the last position with one, at (plus base:
// stamps of earlier calls never match).
func (r *roller) resetCandidates(n int) int32 {
	small := &r.fc.small
	for N := range small {
		small[N] = cand{n: int32(N)}
	}
	long := &r.long
	if r.base > 1<<30 || long[1].n != 1 {
		for N := range long {
			long[N] = cand{n: int32(N), at: -1}
		}
		r.base = 0
	}
	base := r.base
	r.base += int32(n) + 1
	return base
}

// evalCandidates evaluates the folds that may start at p (near are the
// shapes of the gram-1 units after it): every short body N < gram by its
// recurrence, then the long bodies whose k-grams recur (next).
func (r *roller) evalCandidates(p int, next, near []int32, base int32) {
	small, long := &r.fc.small, &r.long
	u, sh := r.fc.u, r.fc.shp[p]
	hp := r.holesOf(&u[p])
	reach := r.reach[:0]
	r.reach = reach
	// short bodies: r1 by its recurrence for every N < gram
	for N := int32(1); N < gram; N++ {
		c := &small[N]
		if near[N-1] != sh {
			c.r1 = 0
			continue
		}
		pc := *c // p+1's
		c.r1 = 1 + pc.r1
		if c.r1 >= N {
			r.heat(c, &pc, pc.r1 >= N, hp, p, N)
			r.eval(p, c)
			reach = r.addReach(reach, c)
		}
	}
	// long bodies: the candidates whose k-grams recur
	for q := next[p]; q >= 0; q = next[q] {
		N := q - int32(p)
		if N < gram {
			continue
		}
		if N > MaxBody {
			break
		}
		c := &long[N]
		pc := *c
		c.r1 = gram // units p+1 .. p+gram-1 match too, and no more
		if pc.at != base+int32(p+1) {
			pc.r1 = 0
		} else {
			c.r1 = 1 + pc.r1
		}
		c.at = base + int32(p)
		if c.r1 >= N {
			r.heat(c, &pc, pc.r1 >= N, hp, p, N)
			if !dominated(reach, c) {
				r.eval(p, c)
			}
			reach = r.addReach(reach, c)
		}
	}
}

// nestable reports whether a fold of choice (flat strategy) holds in its
// body a position whose own best choice is a fold that fits there.
func nestable(choice []int32, n int) bool {
	for p := 0; p < n; {
		N, K := int(choice[2*p]), int(choice[2*p+1])
		if N == 0 {
			p++
			continue
		}
		for x := p + 1; x < p+N; x++ {
			// a fold that pays at x (the best choice for u[x:] is
			// one) and fits in the body
			if n, k := int(choice[2*x]), int(choice[2*x+1]); n > 0 && x+n*k <= p+N {
				return true
			}
		}
		p += N * K
	}
	return false
}

// emitFolds appends u to out with the folds of choice made loops, and
// reports whether anything folded.
func (r *roller) emitFolds(u []unit, choice []int32, out []unit) ([]unit, bool) {
	n := len(u)
	folded := false
	done := 0
	for p := 0; p < n; {
		N, K := int(choice[2*p]), int(choice[2*p+1])
		if N == 0 {
			p++
			continue
		}
		out = append(out, u[done:p]...)
		out = append(out, r.makeLoop(u, p, N, K))
		folded = true
		p += N * K
		done = p
	}
	return append(out, u[done:]...), folded
}

// foldCtx is the state of foldRun that eval and heat need.
type foldCtx struct {
	u                   []unit
	shp                 []int32
	cost, nlines, ntabs []int64
	ninstr              []int32
	best                []score
	penW                int64 // the tie-break weight of the strategy (see score)
	inner               bool  // the innermost strategy
	b                   score // the best rendering of u[p:] found so far
	cn, ck              int32 // its loop at p, if any
	found               bool  // innermost: a loop at p pays
	small               [gram]cand
}

// reach is a hot candidate at a position: its body length and how far its
// longest loop reaches.
type reach struct{ n, end, r1 int32 }

func (r *roller) addReach(rs []reach, c *cand) []reach {
	K := c.kmost
	rs = append(rs, reach{c.n, K * c.n, c.r1})
	r.reach = rs
	return rs
}

// dominated reports whether the loops of hot candidate c (body n) are beaten
// by those of a shorter body that divides n, at the same position, reaching
// as far: a body of m copies of that one is m times as long. (For speed:
// where a short body repeats, its multiples are candidates too.)
func dominated(rs []reach, c *cand) bool {
	K := c.kmost
	most := K * c.n
	for _, x := range rs {
		if c.n%x.n == 0 && x.end >= most {
			return true
		}
	}
	return false
}

// heat fills in r2 and w of candidate c at position p (hot: c.r1 >= N),
// from the candidate pc of p+1 when that one is hot too.
func (r *roller) heat(c, pc *cand, prevHot bool, hp []hole, p int, N int32) {
	u := r.fc.u
	q := p + int(N)
	hq := r.holesOf(&u[q])
	f := 0
	if q2 := q + int(N); q2 < len(u) && u[q2].shape == u[p].shape {
		f = affine(hp, hq, r.holesOf(&u[q2]))
	}
	c.r2, c.r2c, c.r2f = 0, 0, 0
	if prevHot { // slide the window
		c.w = pc.w + gain(hp, hq) - gain(hq, r.holesOf(&u[q+int(N)]))
		if f&affAll != 0 {
			c.r2 = 1 + pc.r2
		}
		if f&affConsts != 0 {
			c.r2c = 1 + pc.r2c
		}
		if f&affFixed != 0 {
			c.r2f = 1 + pc.r2f
		}
		c.kall, c.kmost = loops(c)
		return
	}
	// the first hot position of the stretch
	c.w = r.gainSum(u, p, q, int(N))
	if f != 0 {
		n := r.affineRun(u, p+1, p+int(c.r1), int(N), f)
		if f&affAll != 0 {
			c.r2 = 1 + n[0]
		}
		if f&affConsts != 0 {
			c.r2c = 1 + n[1]
		}
		if f&affFixed != 0 {
			c.r2f = 1 + n[2]
		}
	}
	c.kall, c.kmost = loops(c)
}

// loops returns how many iterations a loop at a hot candidate can have:
// all (numbers all moving by equal steps) and most (some as tables). heat
// keeps them in c.kall and c.kmost.
func loops(c *cand) (all, most int32) {
	K := 1 + c.r1/c.n
	all = min(K, 2+c.r2/c.n)
	most = min(K, 2+c.r2f/c.n, max(all, MaxTable))
	if most < 3 {
		most = all // a table of two is never shorter
	}
	return all, most
}

// eval weighs the loops of hot candidate c at p.
func (r *roller) eval(p int, c *cand) {
	fc := &r.fc
	if fc.inner && fc.found {
		return // innermost: only the nearest repeat that pays
	}
	u, cost, best := fc.u, fc.cost, fc.best
	N := c.n
	kAll, K := c.kall, c.kmost
	lower := cost[p+int(N)] - cost[p] + fc.ntabs[p+int(N)] - fc.ntabs[p]
	hb := int64(-1)
	ind, uniform := int64(-1), int8(-1)
	for k := K; k >= 2; k-- {
		if k <= K-3 { // the three longest loops, and the longest without tables
			if k > kAll {
				k = kAll + 1
				continue
			}
			if k < kAll {
				break
			}
		}
		end := p + int(N*k)
		span := cost[end] - cost[p]
		if 32+lower >= span || 32+lower+best[end].b > fc.b.b {
			continue // a header is at least 32 bytes
		}
		exact := lower + c.w
		if k > kAll { // some numbers become tables
			if fc.ninstr[p+int(N)]-fc.ninstr[p] < 2 {
				// a lone instruction with a table is a list of
				// constants (mov %r(40+i*1), {2, 31, 16, -1}[i]), no loop
				continue
			}
			g, ok := r.tableGain(p, int(N), int(k), int(c.r2)%int(N))
			if !ok {
				continue
			}
			exact = lower + g
		}
		if 32+exact >= span {
			continue
		}
		if hb < 0 {
			hb = headerLen(0, fc.nlines[p+int(N)]-fc.nlines[p], 1) - 1 // without digits(k)
		}
		hl := hb + int64(digits(int64(k)))
		if hl+exact >= span {
			continue // not shorter
		}
		if ind < 0 {
			ind = int64(r.commonIndentAt(u, p, int(N)))
		}
		hl += ind
		f := hl + exact
		if hl+lower+best[end].b > fc.b.b || f >= span {
			continue
		}
		t := score{f + best[end].b, best[end].pen}
		better := t.less(fc.b)
		if !better && !fc.inner {
			continue // valid or not, this loop changes nothing
		}
		if k == 2 {
			// Any two iterations are affine. Take two as a loop
			// only when, as in code nvcc unrolled, the registers
			// of each prefix that move, move by one step (each
			// iteration defines its registers in the same order);
			// the body holds two instructions or more (a pair of
			// lone instructions between comments, like two of the
			// three rotations of a SHA-256 sigma in inline asm, is
			// no loop); the body does not repeat within itself; and
			// where the shapes repeat a third time, before or after,
			// its immediates, offsets and labels go on by the same
			// steps (only registers may break the loop off). Two of
			// the six steps of a tree reduction, whose offsets halve
			// (256 128 | 64 32 | ...), are no loop that two points
			// make affine, nor are two groups of three; two
			// iterations of a dot product whose accumulator register
			// breaks the third one off are. Three or more iterations are
			// evidence enough: there values live out of the block
			// (numbered downwards) and temporaries (upwards) differ
			// legitimately.
			if uniform < 0 {
				uniform = 0
				if fc.ninstr[p+int(N)]-fc.ninstr[p] >= 2 && !r.periodic(N) &&
					constantsGoOnAfter(c) && r.uniformSteps(u, p, int(N)) && r.constantsGoOnBefore(p, int(N)) {
					uniform = 1
				}
			}
			if uniform == 0 {
				continue
			}
		}
		fc.found = true
		if better {
			fc.b, fc.cn, fc.ck = t, N, int32(k)
		}
	}
}

// constantsGoOnAfter and constantsGoOnBefore report whether, around two
// iterations of the body u[p:p+N] (candidate c), the units that repeat them
// a third time, after or before, have numbers other than registers that move
// by the same steps.
func constantsGoOnAfter(c *cand) bool {
	after := min(c.n, c.r1-c.n)
	return after <= 0 || c.r2c >= after
}

func (r *roller) constantsGoOnBefore(p, N int) bool {
	u, shp := r.fc.u, r.fc.shp
	for y := p - 1; y >= 0 && y >= p-N && shp[y] == shp[y+N]; y-- { // the triples y, y+N, y+2N
		if affine(r.holesOf(&u[y]), r.holesOf(&u[y+N]), r.holesOf(&u[y+2*N]))&affConsts == 0 {
			return false
		}
	}
	return true
}

// tableGain is how much longer the body u[p:p+N] of a loop of k iterations
// renders: its numbers that move by equal steps as VarExprs, the others as
// tables (makeLoop makes the same choice). ok is false unless every table
// passes geometricSteps.
func (r *roller) tableGain(p, N, k, first int) (g int64, ok bool) {
	u := r.fc.u
	for i := range N {
		// first the unit where the numbers stop moving by equal steps:
		// when its table fails, the others need no look
		x := p + (first+i)%N
		a, b := r.holesOf(&u[x]), r.holesOf(&u[x+N])
		for t := range a {
			h := &a[t]
			d := b[t].base - h.base
			if r.movesBy(u, x, N, k, t, d) {
				if d != 0 {
					g += int64(termLen(d)) + int64(fixOf(h.base, h.tlen, h.kind))
				}
				continue
			}
			if !tableable(h) {
				return 0, false // (loops does not let that happen)
			}
			var buf [MaxTable]int64
			vals := buf[:k]
			n := int64(2*k + 3)
			for j := range vals {
				vals[j] = r.holes[u[x+j*N].hlo+int32(t)].base
				n += int64(digits(vals[j]))
			}
			if !geometricSteps(vals) {
				return 0, false
			}
			g += n + int64(offsetPlus(h)) - int64(holeLen(h))
		}
	}
	return g, true
}

// geometricSteps reports whether values may form a table: they move in one
// direction by steps that are powers of two and grow or shrink by a
// constant ratio, like the strides of a tree reduction, a scan or a
// butterfly (256 128 64 ..., 1 3 7 15 ..., 16 8 4 2 1). Steps that stay equal
// are a loop or a nest that a table must not hide (a later pass nests it);
// other lists are constants (a filter's coefficients in the order the
// compiler scheduled their loads, round constants), not the steps of a loop.
func geometricSteps(vals []int64) bool {
	if len(vals) < 3 {
		return false
	}
	pow2 := func(d int64) bool {
		if d < 0 {
			d = -d
		}
		return d > 0 && d&(d-1) == 0
	}
	d0, d1 := vals[1]-vals[0], vals[2]-vals[1]
	if !pow2(d0) || !pow2(d1) || (d0 < 0) != (d1 < 0) || d0 == d1 {
		return false
	}
	grow := d1/d0 >= 2 || d1/d0 <= -2
	for j := 2; j+1 < len(vals); j++ {
		d2 := vals[j+1] - vals[j]
		if grow && d2 != d1*(d1/d0) || !grow && d1 != d2*(d0/d1) {
			return false
		}
		d0, d1 = d1, d2
	}
	return true
}

// movesBy reports whether number t of u[x], u[x+N], ... u[x+(k-1)N] moves
// by d each time.
func (r *roller) movesBy(u []unit, x, N, k, t int, d int64) bool {
	v := r.holes[u[x].hlo+int32(t)].base
	for j := 2; j < k; j++ {
		if r.holes[u[x+j*N].hlo+int32(t)].base != v+int64(j)*d {
			return false
		}
	}
	return true
}

// offsetPlus is 1 for an offset (written "+" before its VarExpr or table).
func offsetPlus(h *hole) int32 {
	if h.kind == kindOffset {
		return 1
	}
	return 0
}

// periodic reports whether the shapes of the body u[p:p+N] repeat with a
// shorter period that divides N: such a period is a hot candidate at p,
// listed in r.reach.
func (r *roller) periodic(N int32) bool {
	for _, x := range r.reach {
		if N%x.n == 0 && x.n < N && x.r1 >= N-x.n {
			return true
		}
	}
	return false
}

// chain sets next[p] to the next position q > p whose gram shapes equal those
// at p (-1: none; also for the last gram-1 positions).
func (r *roller) chain(shp []int32, next []int32) {
	n := len(shp)
	for p := range next {
		next[p] = -1
	}
	if n < 2*gram {
		return
	}
	m := n - gram + 1 // positions with a full k-gram
	if cap(r.khash) < m {
		r.khash = make([]uint64, m)
	}
	kh := r.khash[:m]
	const mul = 0x9E3779B97F4A7C15
	var top uint64 = 1 // mul^(gram-1)
	for range gram - 1 {
		top *= mul
	}
	var h uint64
	for q := 0; q < gram; q++ {
		h = h*mul + uint64(shp[q]) + 1
	}
	kh[0] = h
	for p := 1; p < m; p++ {
		h = (h-(uint64(shp[p-1])+1)*top)*mul + uint64(shp[p+gram-1]) + 1
		kh[p] = h
	}
	// the position after p with the same k-gram: a hash table of the
	// nearest position (+1) of each k-gram seen so far
	size := 64
	for size < 2*m {
		size *= 2
	}
	if cap(r.ktab) < size {
		r.ktab = make([]int32, size)
	}
	tab := r.ktab[:size]
	clear(tab)
	mask := size - 1
	for p := m - 1; p >= 0; p-- {
		h := kh[p]
		for i := int(h>>7) & mask; ; i = (i + 1) & mask {
			e := tab[i]
			if e == 0 {
				tab[i] = int32(p + 1)
				break
			}
			if x := e - 1; kh[x] == h && slices.Equal(shp[x:x+gram], shp[p:p+gram]) {
				next[p] = x
				tab[i] = int32(p + 1)
				break
			}
		}
	}
}

// gain is how much longer the numbers a of a unit render as VarExprs in a
// loop whose next iteration has the numbers b: for each number that moves by
// d, the term "+i*d", and what fixOf says.
func gain(a, b []hole) int64 {
	var g int64
	b = b[:len(a)]
	for t := range a {
		if d := b[t].base - a[t].base; d != 0 {
			g += int64(termLen(d)) + int64(fixOf(a[t].base, a[t].tlen, a[t].kind))
		}
	}
	return g
}

// gainSum is the gain of the units from..to-1 against those N further.
func (r *roller) gainSum(u []unit, from, to, N int) int64 {
	var g int64
	for q := from; q < to; q++ {
		g += gain(r.holesOf(&u[q]), r.holesOf(&u[q+N]))
	}
	return g
}

// affineRun counts, from from (at most to-from), the units that with those
// N and 2N further have one shape and pass each of the affine tests (n[0]
// for affAll, n[1] affConsts, n[2] affFixed); f are the tests still running.
func (r *roller) affineRun(u []unit, from, to, N int, f int) (n [3]int32) {
	for q := from; q < to && q+2*N < len(u) && f != 0; q++ {
		if u[q+2*N].shape != u[q].shape {
			break
		}
		f &= affine(r.holesOf(&u[q]), r.holesOf(&u[q+N]), r.holesOf(&u[q+2*N]))
		for i := range n {
			if f&(1<<i) != 0 {
				n[i]++
			}
		}
	}
	return n
}

// Flags of affine: all the numbers of three corresponding units move by
// equal steps; those other than registers; those that cannot be tables.
const (
	affAll    = 1
	affConsts = 2
	affFixed  = 4
)

// affine reports which numbers of three corresponding units move by equal
// steps.
func affine(a, b, c []hole) int {
	b, c = b[:len(a)], c[:len(a)]
	f := affAll | affConsts | affFixed
	for t := range a {
		if b[t].base-a[t].base != c[t].base-b[t].base {
			f &^= affAll
			if a[t].class == 0 {
				f &^= affConsts
			}
			if !tableable(&a[t]) {
				f &^= affFixed
			}
		}
	}
	return f
}

// uniformSteps reports whether, between the body u[p:p+N] and the next
// iteration, all the register numbers of one prefix that move, move by one
// step.
func (r *roller) uniformSteps(u []unit, p, N int) bool {
	var steps [8]struct {
		class uint8
		d     int64
	}
	ns := 0
	for q := p; q < p+N; q++ {
		a, b := r.holesOf(&u[q]), r.holesOf(&u[q+N])
		for t := range a {
			d := b[t].base - a[t].base
			c := a[t].class
			if d == 0 || c == 0 || c == 255 {
				continue
			}
			k := 0
			for k < ns && steps[k].class != c {
				k++
			}
			switch {
			case k < ns:
				if steps[k].d != d {
					return false
				}
			case ns < len(steps):
				steps[ns].class, steps[ns].d = c, d
				ns++
			}
		}
	}
	return true
}

// indentKey describes the indentation of a unit for commonIndentAt: -1 for
// blank lines, its length when it is all tabs, else -2.
func (r *roller) indentKey(u *unit) int32 {
	switch {
	case u.lines == u.blank:
		return -1
	case u.loop >= 0:
		if l := &r.loops[u.loop]; l.tabs {
			return l.indLen
		}
	default:
		if li := &r.lines[u.line]; li.tabs {
			return li.ind
		}
	}
	return -2
}

// commonIndentAt is the length of the loop indentation of the body
// u[p:p+N]: the longest common prefix of the indentation of its lines,
// blank lines left out. Fast for the usual indentations: none (labels) and
// one tab (statements).
func (r *roller) commonIndentAt(u []unit, p, N int) int {
	if r.ind0[p+N] > r.ind0[p] {
		return 0
	}
	if r.indx[p+N] == r.indx[p] {
		if r.ntabs[p+N] > r.ntabs[p] {
			return 1 // a line in the body is not blank
		}
		return 0
	}
	m := int32(-1)
	for _, k := range r.indl[p : p+N] {
		switch {
		case k == -2:
			n, _ := r.indentRef(u[p : p+N])
			return n
		case k >= 0 && (m < 0 || k < m):
			m = k
		}
	}
	return int(max(m, 0))
}

// indentRef returns the loop indentation of a body as a length and a line
// whose indentation starts with it (-1: the body is blank lines only).
func (r *roller) indentRef(body []unit) (int, int32) {
	var ref string
	line := int32(-1)
	for q := range body {
		b := &body[q]
		if b.lines == b.blank {
			continue
		}
		ind := r.indentOf(b)
		if line < 0 {
			ref, line = ind, b.line
			if b.loop >= 0 {
				line = r.loops[b.loop].indLine
			}
			continue
		}
		m := 0
		for m < len(ref) && m < len(ind) && ref[m] == ind[m] {
			m++
		}
		ref = ref[:m]
	}
	return len(ref), line
}

func (r *roller) makeLoop(u []unit, p, N, K int) unit {
	level := int32(1)
	var bodyLines, bodyCost, blank int64
	for q := p; q < p+N; q++ {
		level = max(level, u[q].level+1)
		bodyLines += int64(u[q].lines)
		blank += int64(u[q].blank)
		bodyCost += int64(u[q].cost) + int64(u[q].lines-u[q].blank)
	}
	indLen, indLine := r.indentRef(u[p : p+N])
	if indLine < 0 {
		indLen, indLine = 0, u[p].line
	}
	hlo := int32(len(r.holes))
	a0 := len(r.arena)
	sb := append(r.arena, 0)
	sb = strconv.AppendInt(sb, int64(level), 10)
	sb = append(sb, ',')
	sb = strconv.AppendInt(sb, int64(K), 10)
	sb = append(sb, ',')
	ind := r.src[r.lines[indLine].start : r.lines[indLine].start+int32(indLen)]
	sb = append(sb, ind...)
	for q := p; q < p+N; q++ {
		sb = append(sb, ';')
		sb = strconv.AppendInt(sb, int64(u[q].shape), 10)
		for t := int32(0); t < u[q].hn; t++ {
			h := r.holes[u[q].hlo+t]
			d := r.holes[u[q+N].hlo+t].base - h.base
			sb = append(sb, ',')
			if !r.movesBy(u, q, N, K, int(t), d) { // a table
				if !tableable(&h) {
					panic("rollptx: a number that cannot be a table does not move by equal steps")
				}
				sb = append(sb, 't')
				tlo := int32(len(r.tvals))
				r.tvals = append(r.tvals, int64(level), int64(K))
				n := int32(2*K + 3)
				for j := range K {
					v := r.holes[u[q+j*N].hlo+t].base
					r.tvals = append(r.tvals, v)
					n += digits(v)
					sb = append(sb, ' ')
					sb = strconv.AppendInt(sb, v, 10)
				}
				old := holeLen(&h)
				h.tlo, h.tn, h.tlen = tlo, -1, int16(n)
				bodyCost += int64(holeLen(&h) - old)
				r.holes = append(r.holes, h)
				continue
			}
			sb = strconv.AppendInt(sb, d, 10)
			if d != 0 {
				bodyCost += int64(exprLen(&h, int32(h.tlen)+termLen(d)) - holeLen(&h))
				tlo := int32(len(r.terms))
				for x := h.tlo; x < h.tlo+int32(h.tn); x++ {
					r.terms = append(r.terms, r.terms[x])
				}
				r.terms = append(r.terms, term{d, level})
				h.tlo, h.tn = tlo, h.tn+1
				h.tlen += int16(termLen(d))
			}
			r.holes = append(r.holes, h)
		}
	}
	r.arena = sb
	blo := int32(len(r.bodies))
	r.bodies = append(r.bodies, u[p:p+N]...)
	r.loops = append(r.loops, loopNode{blo: blo, bn: int32(N), k: int32(K), level: level, lines: int32(bodyLines),
		indLine: indLine, indLen: int32(indLen), tabs: strings.Count(ind, "\t") == len(ind)})
	return unit{
		shape: r.intern(a0),
		line:  -1,
		hlo:   hlo,
		hn:    int32(len(r.holes)) - hlo,
		loop:  int32(len(r.loops) - 1),
		cost:  int32(headerLen(indLen, bodyLines, int64(K)) + bodyCost),
		lines: int32(1 + bodyLines),
		blank: int32(blank),
		level: level,
	}
}

func varName(level int32) byte { return byte('i' + level - 1) }

// render appends unit u, with numbers hs, inside loops whose indentation
// lengths are ins (outermost first): a tab goes after each of them.
func (r *roller) render(dst []byte, u *unit, hs []hole, ins []int32) []byte {
	if u.loop < 0 {
		li := r.lines[u.line]
		if li.end == li.start {
			return append(dst, '\n') // a blank line stays blank
		}
		dst = appendIndent(dst, r.src[li.start:li.start+li.ind], ins)
		pos := li.start + li.ind
		for t := range hs {
			lh := &r.holes[int(u.hlo)+t] // a statement's own holes are the lexed ones
			s := lh.start
			e := s + lh.srcLen()
			dst = append(dst, r.src[pos:s]...)
			if h := &hs[t]; h.tlen == 0 {
				dst = append(dst, r.src[s:e]...)
			} else {
				dst = r.appendExpr(dst, h)
			}
			pos = e
		}
		dst = append(dst, r.src[pos:li.end]...)
		return append(dst, '\n')
	}
	l := r.loops[u.loop]
	dst = appendIndent(dst, r.indentOf(u), ins)
	dst = append(dst, "for.size."...)
	dst = strconv.AppendInt(dst, int64(l.lines), 10)
	dst = append(dst, ' ', varName(l.level))
	dst = append(dst, " in range(0, "...)
	dst = strconv.AppendInt(dst, int64(l.k), 10)
	dst = append(dst, ", 1):\n"...)
	ins = append(ins, l.indLen)
	off := int32(0)
	for i := l.blo; i < l.blo+l.bn; i++ {
		b := &r.bodies[i]
		dst = r.render(dst, b, hs[off:off+b.hn], ins)
		off += b.hn
	}
	return dst
}

// appendIndent appends the indentation ind with a tab inserted after each of
// its first ins[k] bytes.
func appendIndent(dst []byte, ind string, ins []int32) []byte {
	p := int32(0)
	for _, q := range ins {
		dst = append(dst, ind[p:q]...)
		dst = append(dst, '\t')
		p = q
	}
	return append(dst, ind[p:]...)
}

func (r *roller) appendExpr(dst []byte, h *hole) []byte {
	if h.kind == kindOffset {
		dst = append(dst, '+')
	}
	if h.tn < 0 { // {v0, v1, ...}[i]
		level, k := r.tvals[h.tlo], r.tvals[h.tlo+1]
		dst = append(dst, '{')
		for j, v := range r.tvals[h.tlo+2 : h.tlo+2+int32(k)] {
			if j > 0 {
				dst = append(dst, ", "...)
			}
			dst = strconv.AppendInt(dst, v, 10)
		}
		return append(dst, '}', '[', varName(int32(level)), ']')
	}
	dst = append(dst, '(')
	dst = strconv.AppendInt(dst, h.base, 10)
	for _, t := range r.terms[h.tlo : h.tlo+int32(h.tn)] {
		s := t.stride
		if s < 0 {
			dst = append(dst, '-')
			s = -s
		} else {
			dst = append(dst, '+')
		}
		dst = append(dst, varName(t.level), '*')
		dst = strconv.AppendInt(dst, s, 10)
	}
	return append(dst, ')')
}

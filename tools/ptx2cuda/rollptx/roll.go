package rollptx

import (
	"bytes"
	"hash/maphash"
	"math/bits"
	"strconv"
	"strings"
)

const (
	// MaxBody is the longest loop body Roll looks for, in statements (a
	// nested loop counts as one).
	MaxBody = 256
	// MaxDepth is the deepest loop nesting Roll makes.
	MaxDepth = 8
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
	st.OutStatements++
	if u.loop < 0 {
		return
	}
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

// Hole kinds: a number printed as is (register number, immediate) or an
// address offset (printed "+N", nothing when 0).
const (
	kindPlain  uint8 = 1
	kindOffset uint8 = 2
)

// term is one "+v*stride" of a VarExpr; level names the variable.
type term struct {
	stride int64
	level  int32
}

// hole is a number of a statement: its value in the first iteration and,
// inside loops, how it moves (terms r.terms[tlo:tlo+tn], inner loops first).
type hole struct {
	base  int64
	tlo   int32
	tn    int32
	tlen  int32 // length of the rendered terms; 0 when there are none
	blen  uint8 // digits(base)
	kind  uint8
	class uint8 // register number: its prefix (%r, %rd, %f, ...); 0 otherwise
}

// loopNode is a folded loop; its body is the first iteration,
// r.bodies[blo:blo+bn]. The numbers live in the loop's unit.
type loopNode struct {
	blo, bn int32
	k       int32
	level   int32
	lines   int32 // body lines
	indLine int32 // a line with the loop's indentation
}

// unit is an item of the text: a separator line, a statement or a loop. The
// roller's tables hold everything it refers to, so units hold no pointers.
type unit struct {
	shape int32 // -1: separator
	line  int32 // statement or separator: its line
	hsrc  int32 // statement: its first hole in r.hpos
	hlo   int32 // numbers: r.holes[hlo:hlo+hn]
	hn    int32
	loop  int32 // index in r.loops; -1: not a loop
	cost  int32 // rendered bytes, newlines included
	lines int32 // rendered lines
	level int32 // 0 statement, else the loop's variable level (1 = i)
}

func (r *roller) holesOf(u *unit) []hole { return r.holes[u.hlo : u.hlo+u.hn] }

type lineInfo struct {
	start, end int32 // without the "\n"
	ind        int32 // leading white space
	instr      bool  // an instruction line (for Stats)
}

type tabEnt struct {
	h   uint64
	id  int32
	gen uint32 // the entry is empty unless gen is the roller's
}

type cand struct{ n, r1, r2 int32 }

type roller struct {
	src   string
	lines []lineInfo
	instr int
	items []unit
	spare []unit
	out   []byte
	work  [4][]unit // the two strategies' passes

	hpos    []int32 // per lexed hole: start, end in src
	classes []string
	holes   []hole // the lexed holes, then those of loops
	terms   []term
	loops   []loopNode
	bodies  []unit

	// shape interning
	tab      []tabEnt
	tgen     uint32
	nshape   int
	arena    []byte
	shapeOff []int32

	// per-run dynamic programming
	next   []int32
	last   []int32
	stamp  []uint32
	gen    uint32
	best   []score
	choice []int32 // packed: N, K
	cost   []int64 // prefix sums
	nlines []int64
	prev   []cand
	cur    []cand
}

var (
	seed = maphash.MakeSeed()
	// free keeps idle rollers and their buffers. Unlike a sync.Pool it
	// survives garbage collections, which Roll's output makes frequent.
	free = make(chan *roller, 8)
)

func (r *roller) release() {
	big := len(r.src) > 4<<20
	r.src = ""
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
	r.hpos = r.hpos[:0]
	r.classes = r.classes[:0]
	r.holes = r.holes[:0]
	r.terms = r.terms[:0]
	r.loops = r.loops[:0]
	r.bodies = r.bodies[:0]
	r.arena = r.arena[:0]
	r.shapeOff = append(r.shapeOff[:0], 0)
	r.nshape = 0
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
	for i := range r.items {
		u := &r.items[i]
		if u.loop >= 0 {
			dst = r.render(dst, u, r.holesOf(u), 0)
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
		ind := 0
		for ind < len(line) && (line[ind] == '\t' || line[ind] == ' ') {
			ind++
		}
		body := line[ind:]
		li := lineInfo{start: int32(pos), end: int32(end), ind: int32(ind)}
		if isHeaderLike(body) {
			ok = false // keep counting statements for Stats
		}
		li.instr = len(body) > 1 && body[len(body)-1] == ';' && (isLower(body[0]) || body[0] == '@')
		if li.instr {
			r.instr++
		}
		u := unit{shape: -1, line: int32(len(r.lines)), loop: -1}
		if li.instr && nl && !isControl(body) {
			r.statement(&u, line, pos, ind)
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

// isControl reports whether the instruction transfers control (ends a basic
// block) or starts a call sequence.
func isControl(s string) bool {
	if s[0] == '@' {
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return true
		}
		s = strings.TrimLeft(s[i:], " \t")
	}
	end := 0
	for end < len(s) && isLetter(s[end]) {
		end++
	}
	switch s[:end] {
	case "bra", "brx", "ret", "exit", "trap", "call":
		return true
	}
	return false
}

// statement lexes a foldable instruction line into u: its numbers become
// holes and the rest its shape. The line stays a separator when it holds a
// byte a statement cannot (comment, parenthesis, control character).
func (r *roller) statement(u *unit, line string, pos, ind int) {
	a0 := len(r.arena)
	h0 := len(r.holes)
	shape := append(r.arena, line[:ind]...)
	n := len(line)
	i := ind
	fail := func() {
		r.arena = r.arena[:a0]
		r.holes = r.holes[:h0]
		r.hpos = r.hpos[:2*h0]
	}
	for i < n {
		c := line[i]
		switch {
		case c == '%':
			i, shape = r.register(line, i, pos, shape)
		case c == '[':
			shape = append(shape, '[')
			i++
			j := i
			if j < n && line[j] == '%' {
				j, shape = r.register(line, j, pos, shape)
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
				r.addHole(pos+j, pos+j, 0, 1, kindOffset)
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
						r.addHole(pos+j, pos+m, v, m-j-1, kindOffset)
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
			if isImmPrev(line[i-1]) && m < n && isImmNext(line[m]) {
				if v, ok := canonInt(line[i:m]); ok {
					r.addHole(pos+i, pos+m, v, m-i, kindPlain)
					shape = append(shape, kindPlain)
					i = m
					continue
				}
			}
			shape = append(shape, line[i:m]...)
			i = m
		case c < ' ' && c != '\t', c == '(', c == ')', c == '/':
			r.arena = shape
			fail()
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
	r.arena = shape
	u.shape = r.intern(a0)
	u.hsrc, u.hlo, u.hn = int32(h0), int32(h0), int32(len(r.holes)-h0)
	u.cost = int32(n + 1)
	u.lines = 1
}

// special marks the bytes statement looks at; the others are copied in runs.
var special = func() (t [256]bool) {
	for c := 0; c < ' '; c++ {
		t[c] = true
	}
	for _, c := range "%[-()/0123456789" {
		t[c] = true
	}
	// a digit right after an identifier byte is copied with it below, but
	// identifiers are short: simpler to stop at every digit.
	return t
}()

func isImmPrev(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == '{' || c == '[' }
func isImmNext(c byte) bool { return c == ',' || c == ';' || c == '}' || c == ']' }

// register lexes a "%name123" at line[i]; the number becomes a hole.
func (r *roller) register(line string, i, pos int, shape []byte) (int, []byte) {
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
		r.addHole(pos+j, pos+k, v, k-j, kindPlain)
		r.holes[len(r.holes)-1].class = r.regClass(line[i+1 : j])
		return k, shape
	}
	// not a numbered register: copy the name whole
	for k < n && isIdent(line[k]) {
		k++
	}
	return k, append(shape, line[i:k]...)
}

// regClass numbers register prefixes from 1; 255 stands for all past 254.
func (r *roller) regClass(prefix string) uint8 {
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

func (r *roller) addHole(s, e int, v int64, blen int, kind uint8) {
	r.hpos = append(r.hpos, int32(s), int32(e))
	r.holes = append(r.holes, hole{base: v, blen: uint8(blen), kind: kind})
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
	line := u.line
	if u.loop >= 0 {
		line = r.loops[u.loop].indLine
	}
	li := r.lines[line]
	return r.src[li.start : li.start+li.ind]
}

// rollRuns rolls every run of statements (straight-line code with one
// indentation) and reports whether anything folded.
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
		ind := r.indentOf(&items[i])
		j := i + 1
		for j < len(items) && items[j].shape >= 0 && r.indentOf(&items[j]) == ind {
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
		// unrolled nest for the next passes to nest.
		a, ca := r.passes(items[i:j], ind, false, 0)
		b, cb := a, ca
		if len(a) < j-i { // something folded
			b, cb = r.passes(items[i:j], ind, true, 2)
		}
		if cb < ca {
			a = b
		}
		folded = folded || len(a) < j-i
		out = append(out, a...)
		i = j
	}
	r.spare, r.items = items, out
	return folded
}

// passes folds run until a pass folds nothing, in r.work[w] and r.work[w+1],
// and returns the result and its length.
func (r *roller) passes(run []unit, ind string, innermost bool, w int) ([]unit, int64) {
	cur := run
	for pass := 0; pass < MaxDepth; pass++ {
		next, folded := r.foldRun(cur, ind, innermost, r.work[w][:0])
		r.work[w] = next
		if !folded {
			break
		}
		cur = next
		w ^= 1
	}
	var c int64
	for i := range cur {
		c += int64(cur[i].cost)
	}
	return cur, c
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

func headerLen(ind string, bodyLines, k int64) int64 {
	// for.size.<N> i in range(0, <K>, 1):\n
	return int64(len(ind)) + 30 + int64(digits(bodyLines)+digits(k))
}

func termLen(d int64) int32 {
	if d < 0 {
		d = -d
	}
	if d < 10 {
		return 4
	}
	return 3 + digits(d)
}

func holeLen(h *hole) int32 {
	if h.tlen == 0 {
		if h.kind == kindOffset {
			if h.base == 0 {
				return 0
			}
			return 1 + int32(h.blen)
		}
		return int32(h.blen)
	}
	return exprLen(h, h.tlen)
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

// foldRun chooses the folds of one run of units by dynamic programming
// (best[p] = the best rendering of u[p:]) and appends the result to out. A
// fold must be shorter than the statements it replaces. With innermost, only
// the nearest repeat that pays is considered at each position.
func (r *roller) foldRun(u []unit, ind string, innermost bool, out []unit) ([]unit, bool) {
	n := len(u)
	penW := int64(0) // the tie-break of score, used by the innermost strategy
	if innermost {
		penW = 1
	}
	if cap(r.next) < n {
		r.next = make([]int32, n)
		r.best = make([]score, n+1)
		r.choice = make([]int32, 2*n)
		r.cost = make([]int64, n+1)
		r.nlines = make([]int64, n+1)
	}
	if len(r.last) < r.nshape {
		r.last = make([]int32, r.nshape+r.nshape/2+16)
		r.stamp = make([]uint32, len(r.last))
		r.gen = 0
	}
	r.gen++
	if r.gen == 0 { // wrapped: old stamps could look current
		clear(r.stamp)
		r.gen = 1
	}
	next, best, choice := r.next[:n], r.best[:n+1], r.choice[:2*n]
	cost, nlines := r.cost[:n+1], r.nlines[:n+1]
	any := false
	for q := n - 1; q >= 0; q-- {
		s := u[q].shape
		if r.stamp[s] == r.gen {
			next[q] = r.last[s]
			any = true
		} else {
			next[q] = -1
		}
		r.stamp[s], r.last[s] = r.gen, int32(q)
	}
	if !any {
		return append(out, u...), false
	}
	cost[0], nlines[0] = 0, 0
	for q := 0; q < n; q++ {
		cost[q+1] = cost[q] + int64(u[q].cost)
		nlines[q+1] = nlines[q] + int64(u[q].lines)
	}
	best[n] = score{}
	prev, cur := r.prev[:0], r.cur[:0]
	folded := false
	for p := n - 1; p >= 0; p-- {
		b := score{int64(u[p].cost) + best[p+1].b, penW*int64(n-p) + best[p+1].pen}
		var cn, ck int32
		cur = cur[:0]
		j := 0
		sh := u[p].shape
		found := false
		for q := next[p]; q >= 0 && q-int32(p) <= MaxBody; q = next[q] {
			N := q - int32(p)
			for j < len(prev) && prev[j].n < N {
				j++
			}
			var pr1, pr2 int32
			if j < len(prev) && prev[j].n == N {
				pr1, pr2 = prev[j].r1, prev[j].r2
			}
			// r1: how many consecutive positions from p match the one N
			// further; r2: how many also move by the same step as the
			// next pair. The recurrences hold because every N <= MaxBody
			// with a match is in the list of p+1.
			r1, r2 := 1+pr1, int32(0)
			if q2 := q + N; q2 < int32(n) && u[q2].shape == sh && affine(r.holesOf(&u[p]), r.holesOf(&u[q]), r.holesOf(&u[q2])) {
				r2 = 1 + pr2
			}
			cur = append(cur, cand{N, r1, r2})
			if r1 < N || (innermost && found) {
				continue
			}
			K := 1 + r1/N
			if k2 := 2 + r2/N; k2 < K {
				K = k2
			}
			bl := nlines[p+int(N)] - nlines[p]
			lower := cost[p+int(N)] - cost[p] + bl
			exact, uniform := int64(-1), false
			for k := K; k >= 2 && k > K-3; k-- {
				end := p + int(N*k)
				hl := headerLen(ind, bl, int64(k))
				if hl+lower >= cost[end]-cost[p] || hl+lower+best[end].b > b.b {
					continue
				}
				if exact < 0 {
					d, uni := r.bodyDelta(u, p, int(N))
					exact, uniform = lower+d, uni
				}
				if k == 2 && !uniform {
					// Any two iterations are affine. Take two as a loop
					// only when, as in code nvcc unrolled, the registers
					// of each prefix that move, move by one step (each
					// iteration defines its registers in the same order).
					// Three or more iterations are evidence enough: there
					// values live out of the block (numbered downwards)
					// and temporaries (upwards) differ legitimately.
					continue
				}
				f := hl + exact
				if f >= cost[end]-cost[p] {
					continue // not shorter
				}
				found = true
				if t := (score{f + best[end].b, best[end].pen}); t.less(b) {
					b, cn, ck = t, N, k
				}
			}
		}
		best[p] = b
		choice[2*p], choice[2*p+1] = cn, ck
		prev, cur = cur, prev
	}
	r.prev, r.cur = prev, cur
	for p := 0; p < n; {
		N, K := int(choice[2*p]), int(choice[2*p+1])
		if N == 0 {
			out = append(out, u[p])
			p++
			continue
		}
		out = append(out, r.makeLoop(u, p, N, K, ind))
		folded = true
		p += N * K
	}
	return out, folded
}

// affine reports whether the numbers of three corresponding units move by
// equal steps.
func affine(a, b, c []hole) bool {
	for t := range a {
		if b[t].base-a[t].base != c[t].base-b[t].base {
			return false
		}
	}
	return true
}

// bodyDelta is how much longer the body u[p:p+N] renders with the numbers
// that move written as VarExprs; uniform reports whether all the register
// numbers of one prefix that move, move by one step.
func (r *roller) bodyDelta(u []unit, p, N int) (delta int64, uniform bool) {
	uniform = true
	var steps [8]struct {
		class uint8
		d     int64
	}
	ns := 0
	for q := p; q < p+N; q++ {
		a, b := r.holesOf(&u[q]), r.holesOf(&u[q+N])
		for t := range a {
			d := b[t].base - a[t].base
			if d == 0 {
				continue
			}
			h := &a[t]
			if c := h.class; c != 0 && c != 255 {
				k := 0
				for k < ns && steps[k].class != c {
					k++
				}
				switch {
				case k < ns:
					if steps[k].d != d {
						uniform = false
					}
				case ns < len(steps):
					steps[ns].class, steps[ns].d = c, d
					ns++
				}
			}
			delta += int64(exprLen(h, h.tlen+termLen(d)) - holeLen(h))
		}
	}
	return delta, uniform
}

func (r *roller) makeLoop(u []unit, p, N, K int, ind string) unit {
	level := int32(1)
	var bodyLines, bodyCost int64
	for q := p; q < p+N; q++ {
		level = max(level, u[q].level+1)
		bodyLines += int64(u[q].lines)
		bodyCost += int64(u[q].cost) + int64(u[q].lines)
	}
	hlo := int32(len(r.holes))
	a0 := len(r.arena)
	sb := append(r.arena, 0)
	sb = strconv.AppendInt(sb, int64(level), 10)
	sb = append(sb, ',')
	sb = strconv.AppendInt(sb, int64(K), 10)
	sb = append(sb, ',')
	sb = append(sb, ind...)
	for q := p; q < p+N; q++ {
		sb = append(sb, ';')
		sb = strconv.AppendInt(sb, int64(u[q].shape), 10)
		for t := int32(0); t < u[q].hn; t++ {
			h := r.holes[u[q].hlo+t]
			d := r.holes[u[q+N].hlo+t].base - h.base
			sb = append(sb, ',')
			sb = strconv.AppendInt(sb, d, 10)
			if d != 0 {
				bodyCost += int64(exprLen(&h, h.tlen+termLen(d)) - holeLen(&h))
				tlo := int32(len(r.terms))
				for x := h.tlo; x < h.tlo+h.tn; x++ {
					r.terms = append(r.terms, r.terms[x])
				}
				r.terms = append(r.terms, term{d, level})
				h.tlo, h.tn = tlo, h.tn+1
				h.tlen += termLen(d)
			}
			r.holes = append(r.holes, h)
		}
	}
	r.arena = sb
	blo := int32(len(r.bodies))
	r.bodies = append(r.bodies, u[p:p+N]...)
	indLine := u[p].line
	if u[p].loop >= 0 {
		indLine = r.loops[u[p].loop].indLine
	}
	r.loops = append(r.loops, loopNode{blo: blo, bn: int32(N), k: int32(K), level: level, lines: int32(bodyLines), indLine: indLine})
	return unit{
		shape: r.intern(a0),
		line:  -1,
		hlo:   hlo,
		hn:    int32(len(r.holes)) - hlo,
		loop:  int32(len(r.loops) - 1),
		cost:  int32(headerLen(ind, bodyLines, int64(K)) + bodyCost),
		lines: int32(1 + bodyLines),
		level: level,
	}
}

func varName(level int32) byte { return byte('i' + level - 1) }

// render appends unit u, with numbers hs, indented depth more tabs.
func (r *roller) render(dst []byte, u *unit, hs []hole, depth int) []byte {
	if u.loop < 0 {
		li := r.lines[u.line]
		dst = append(dst, r.src[li.start:li.start+li.ind]...)
		for range depth {
			dst = append(dst, '\t')
		}
		pos := li.start + li.ind
		for t := range hs {
			s, e := r.hpos[2*(int(u.hsrc)+t)], r.hpos[2*(int(u.hsrc)+t)+1]
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
	dst = append(dst, r.indentOf(u)...)
	for range depth {
		dst = append(dst, '\t')
	}
	dst = append(dst, "for.size."...)
	dst = strconv.AppendInt(dst, int64(l.lines), 10)
	dst = append(dst, ' ', varName(l.level))
	dst = append(dst, " in range(0, "...)
	dst = strconv.AppendInt(dst, int64(l.k), 10)
	dst = append(dst, ", 1):\n"...)
	off := int32(0)
	for i := l.blo; i < l.blo+l.bn; i++ {
		b := &r.bodies[i]
		dst = r.render(dst, b, hs[off:off+b.hn], depth+1)
		off += b.hn
	}
	return dst
}

func (r *roller) appendExpr(dst []byte, h *hole) []byte {
	if h.kind == kindOffset {
		dst = append(dst, '+')
	}
	dst = append(dst, '(')
	dst = strconv.AppendInt(dst, h.base, 10)
	for _, t := range r.terms[h.tlo : h.tlo+h.tn] {
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

// Package compare benchmarks kiln's near-duplicate detection (package
// runs/curate) against github.com/ekzhu/minhash-lsh on a deterministic
// synthetic corpus of C/CUDA-like code with planted near-duplicates whose
// exact Jaccard similarity is known. It is a module of its own so that the
// main module does not depend on the comparison library.
package compare

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kiln-dev/kiln/runs/curate"
)

// Kind says how a document was made.
type Kind uint8

const (
	Single Kind = iota // an unrelated document
	Base               // the original of a planted family
	Exact              // base with renamed identifiers, other comments and layout: same tokens (J = 1)
	High               // Exact's edits plus a few token edits: J in HighRange
	Near               // more token edits: J in NearRange (around the 0.8 threshold)
	Low                // many token edits: J in LowRange (must not cluster)
)

var kindNames = [...]string{"single", "base", "exact", "high", "near", "low"}

func (k Kind) String() string { return kindNames[k] }

// The intended Jaccard ranges of a variant's shingle set to its base's.
var (
	HighRange = [2]float64{0.90, 0.97}
	NearRange = [2]float64{0.77, 0.83}
	LowRange  = [2]float64{0.57, 0.63}
)

// Shingle is the shingle size the truth is computed with (curate's default).
const Shingle = 5

// Pair is two documents of one planted family and the exact Jaccard
// similarity of their shingle sets (curate.Normalise, curate.Shingles with
// k = Shingle).
type Pair struct {
	A, B int32 // document numbers, A < B
	J    float64
}

// Corpus is a generated corpus and its ground truth.
type Corpus struct {
	Seed   uint64
	Docs   []string
	Kind   []Kind
	Family []int32 // family number per document, -1 for an unrelated one
	Pairs  []Pair  // every pair of documents of one family, A < B
}

// Options shape a corpus. Zero values take the defaults.
type Options struct {
	// FamilyFrac is the probability that a generated unit is a family
	// (a base and 1-3 variants) rather than one unrelated document
	// (default 0.09: about 20% of documents belong to a family).
	FamilyFrac float64
	// Workers generate in parallel (default GOMAXPROCS); the corpus does
	// not depend on it.
	Workers int
}

// unit is a planned family (or a single document).
type unit struct {
	variants []Kind // empty: a single document
	first    int    // index of its first document before shuffling
}

// Generate makes a corpus of n documents, the same for the same n and seed.
func Generate(n int, seed uint64, opt Options) *Corpus {
	if opt.FamilyFrac == 0 {
		opt.FamilyFrac = 0.09
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	// Plan the units with their own stream so that generating them in
	// parallel does not change anything.
	units := planUnits(n, seed, opt.FamilyFrac)
	docs := make([]string, n)
	kinds := make([]Kind, n)
	family := make([]int32, n)
	type fampairs struct{ pairs []Pair }
	fp := make([]fampairs, len(units))
	fam := make([]int32, len(units))
	nf := int32(0)
	for i, u := range units {
		fam[i] = -1
		if len(u.variants) > 0 {
			fam[i] = nf
			nf++
		}
	}
	var wg sync.WaitGroup
	next := make(chan int, 256)
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ui := range next {
				u := units[ui]
				r := rand.New(rand.NewPCG(seed, uint64(ui)+1))
				texts, ks, sh := makeUnit(r, u.variants)
				for k, t := range texts {
					docs[u.first+k] = t
					kinds[u.first+k] = ks[k]
					family[u.first+k] = fam[ui]
				}
				for a := 0; a < len(sh); a++ {
					for b := a + 1; b < len(sh); b++ {
						fp[ui].pairs = append(fp[ui].pairs, Pair{A: int32(u.first + a), B: int32(u.first + b), J: Jaccard(sh[a], sh[b])})
					}
				}
			}
		}()
	}
	for ui := range units {
		next <- ui
	}
	close(next)
	wg.Wait()

	// Shuffle so that a family's documents are spread over the corpus.
	perm := rand.New(rand.NewPCG(seed, 0x73687566)).Perm(n) // "shuf": old index -> new
	c := &Corpus{Seed: seed, Docs: make([]string, n), Kind: make([]Kind, n), Family: make([]int32, n)}
	for old, nw := range perm {
		c.Docs[nw], c.Kind[nw], c.Family[nw] = docs[old], kinds[old], family[old]
	}
	for _, f := range fp {
		for _, p := range f.pairs {
			a, b := int32(perm[p.A]), int32(perm[p.B])
			if a > b {
				a, b = b, a
			}
			c.Pairs = append(c.Pairs, Pair{A: a, B: b, J: p.J})
		}
	}
	slices.SortFunc(c.Pairs, func(x, y Pair) int {
		if x.A != y.A {
			return int(x.A - y.A)
		}
		return int(x.B - y.B)
	})
	return c
}

// planUnits plans a corpus of n documents as units: a document, and with
// probability familyFrac up to three variants of it (exact, high, near or
// low similarity) that make a family.
func planUnits(n int, seed uint64, familyFrac float64) []unit {
	plan := rand.New(rand.NewPCG(seed, 0x706c616e)) // "plan"
	var units []unit
	for total := 0; total < n; {
		u := unit{first: total}
		if plan.Float64() < familyFrac {
			nv := 1
			switch x := plan.Float64(); {
			case x < 0.1:
				nv = 3
			case x < 0.4:
				nv = 2
			}
			for range nv {
				switch x := plan.Float64(); {
				case x < 0.20:
					u.variants = append(u.variants, Exact)
				case x < 0.50:
					u.variants = append(u.variants, High)
				case x < 0.75:
					u.variants = append(u.variants, Near)
				default:
					u.variants = append(u.variants, Low)
				}
			}
			if rest := n - total - 1; len(u.variants) > rest {
				u.variants = u.variants[:rest]
			}
		}
		units = append(units, u)
		total += 1 + len(u.variants)
	}
	return units
}

// ShingleSet is the sorted shingle set of a document, as the truth uses it.
func ShingleSet(text string) []uint64 {
	s := curate.Shingles(curate.Normalise(text), Shingle)
	slices.Sort(s)
	return s
}

// Jaccard is |a∩b| / |a∪b| for sorted sets without duplicates.
func Jaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// makeUnit returns the texts of a unit (base first), their kinds and their
// shingle sets.
func makeUnit(r *rand.Rand, variants []Kind) ([]string, []Kind, [][]uint64) {
	g := newGen(r)
	base := g.document()
	baseText := render(base, style{indent: "    "})
	if len(variants) == 0 {
		return []string{baseText}, []Kind{Single}, nil
	}
	baseSet := ShingleSet(baseText)
	texts := []string{baseText}
	kinds := []Kind{Base}
	sets := [][]uint64{baseSet}
	for _, k := range variants {
		t, set := g.variant(base, baseSet, k)
		texts, kinds, sets = append(texts, t), append(kinds, k), append(sets, set)
	}
	return texts, kinds, sets
}

// line is one line of a generated document.
type line struct {
	depth int
	kind  lineKind
	text  string // without indentation
}

type lineKind uint8

const (
	lStmt    lineKind = iota // a statement: editable
	lOpen                    // opens a block
	lClose                   // closes a block
	lComment                 // a comment line: not tokens
	lOther                   // directives, headers, blank
)

// gen makes documents from one random stream.
type gen struct {
	r     *rand.Rand
	names []string // this document's identifiers
}

// nameWords are identifier stems; none is a word curate.Normalise keeps.
var nameWords = func() []string {
	var out []string
	for _, w := range strings.Fields(`acc sum tmp buf src dst out inp idx tid lane warp row col stride offset len count
scale alpha beta val res mask key data ptr base lo hi mid step dim width height depth pitch norm eps gain bias weight
grad mom var mean total partial chunk tile block_id elem pos next prev head tail left right lhs rhs coef factor limit
thresh score prob logit exp_v max_v min_v shift carry digit word bits flag state seed hash slot bucket index level`) {
		if t := curate.Normalise(w); len(t) == 1 && t[0] == "ID" {
			out = append(out, w)
		}
	}
	return out
}()

var (
	funcNames   = strings.Fields(`fmaxf fminf __expf sqrtf rsqrtf __ldg atomicAdd atomicMax __shfl_down_sync __fmul_rn min max abs fabsf __logf tanhf`)
	types       = []string{"int", "float", "unsigned", "double", "size_t", "float4", "half", "long"}
	binOps      = []string{"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
	cmpOps      = []string{"<", ">", "<=", ">=", "==", "!="}
	assignOps   = []string{"=", "+=", "-=", "*=", "|=", "^=", "="}
	builtins    = []string{"threadIdx.x", "threadIdx.y", "blockIdx.x", "blockDim.x", "gridDim.x", "blockIdx.x * blockDim.x + threadIdx.x", "warpSize"}
	commentText = strings.Fields(`load store the tile into shared memory reduce partial sums across the warp then write back
guard against out of range indices accumulate in registers unrolled loop over elements fused multiply add scale by the
factor normalise each row handle the tail compute the offset of this thread swap buffers`)
	includes = []string{"#include <cuda_runtime.h>", "#include <stdint.h>", "#include <math.h>", "#include \"common.h\"", "#include <cuda_fp16.h>"}
)

func newGen(r *rand.Rand) *gen {
	g := &gen{r: r}
	k := 8 + r.IntN(8)
	for range k {
		w := nameWords[r.IntN(len(nameWords))]
		if r.IntN(3) == 0 {
			w = fmt.Sprintf("%s%d", w, r.IntN(10))
		}
		g.names = append(g.names, w)
	}
	return g
}

func (g *gen) pick(s []string) string { return s[g.r.IntN(len(s))] }
func (g *gen) name() string           { return g.pick(g.names) }

func (g *gen) literal() string {
	r := g.r
	switch x := r.IntN(10); {
	case x < 4:
		return fmt.Sprint(r.IntN(33))
	case x < 7:
		return fmt.Sprint(33 + r.IntN(8192))
	case x < 9:
		return fmt.Sprintf("%d.%df", r.IntN(100), r.IntN(1000))
	default:
		return fmt.Sprintf("0x%x", r.IntN(1<<16))
	}
}

func (g *gen) term() string {
	switch x := g.r.IntN(20); {
	case x < 8:
		return g.name()
	case x < 13:
		return g.literal()
	case x < 16:
		return fmt.Sprintf("%s[%s]", g.name(), g.simple())
	case x < 18:
		return g.pick(builtins)
	default:
		return g.name() + "." + g.pick([]string{"x", "y", "z", "w"})
	}
}

func (g *gen) simple() string {
	if g.r.IntN(2) == 0 {
		return g.name()
	}
	return fmt.Sprintf("%s %s %s", g.name(), g.pick(binOps[:4]), g.literal())
}

func (g *gen) expr(depth int) string {
	if depth >= 2 {
		return g.term()
	}
	switch x := g.r.IntN(10); {
	case x < 5:
		return g.term()
	case x < 9:
		e := fmt.Sprintf("%s %s %s", g.term(), g.pick(binOps), g.expr(depth+1))
		if g.r.IntN(3) == 0 {
			e = "(" + e + ")"
		}
		return e
	default:
		return fmt.Sprintf("%s(%s, %s)", g.pick(funcNames), g.expr(depth+1), g.term())
	}
}

// statement is a simple statement (no block).
func (g *gen) statement() string {
	switch x := g.r.IntN(20); {
	case x < 6:
		return fmt.Sprintf("%s %s = %s;", g.pick(types), g.name(), g.expr(0))
	case x < 11:
		return fmt.Sprintf("%s %s %s;", g.name(), g.pick(assignOps), g.expr(0))
	case x < 15:
		return fmt.Sprintf("%s[%s] %s %s;", g.name(), g.simple(), g.pick(assignOps), g.expr(0))
	case x < 17:
		return fmt.Sprintf("%s(%s, %s, %s);", g.pick(funcNames), g.name(), g.expr(1), g.literal())
	case x < 18:
		return "__syncthreads();"
	default:
		return fmt.Sprintf("%s = %s ? %s : %s;", g.name(), g.term(), g.expr(1), g.term())
	}
}

func (g *gen) opener() string {
	switch g.r.IntN(5) {
	case 0, 1:
		i := g.name()
		return fmt.Sprintf("for (int %s = %s; %s < %s; %s += %s) {", i, g.literal(), i, g.expr(1), i, g.literal())
	case 2, 3:
		return fmt.Sprintf("if (%s %s %s) {", g.expr(1), g.pick(cmpOps), g.expr(1))
	default:
		return fmt.Sprintf("while (%s %s %s) {", g.name(), g.pick(cmpOps), g.term())
	}
}

func (g *gen) comment() string {
	n := 3 + g.r.IntN(6)
	w := make([]string, n)
	for i := range w {
		w[i] = g.pick(commentText)
	}
	return "// " + strings.Join(w, " ")
}

// document generates 40-80 lines: a few directives, one or two functions.
func (g *gen) document() []line {
	r := g.r
	target := 40 + r.IntN(40) // lines; the last block may overshoot by one
	var ls []line
	add := func(d int, k lineKind, t string) { ls = append(ls, line{depth: d, kind: k, text: t}) }
	for range 1 + r.IntN(2) {
		add(0, lOther, g.pick(includes))
	}
	if r.IntN(2) == 0 {
		add(0, lOther, fmt.Sprintf("#define %s %s", strings.ToUpper(g.name()), g.literal()))
	}
	add(0, lOther, "")
	fns := 1 + r.IntN(2)
	for f := range fns {
		if r.IntN(2) == 0 {
			add(0, lComment, g.comment())
		}
		if f == fns-1 || r.IntN(2) == 0 {
			add(0, lOpen, fmt.Sprintf("__global__ void %s(%s *%s, const %s *%s, int %s) {", g.name(), g.pick(types), g.name(), g.pick(types), g.name(), g.name()))
		} else {
			add(0, lOpen, fmt.Sprintf("__device__ %s %s(%s %s, %s %s) {", g.pick(types), g.name(), g.pick(types), g.name(), g.pick(types), g.name()))
		}
		// Closing the open blocks takes depth lines: stop when they
		// bring the function to its share of the target.
		end := len(ls) + (target-len(ls))/(fns-f)
		depth := 1
		for len(ls)+depth < end {
			switch x := r.IntN(20); {
			case x < 3 && depth < 4:
				add(depth, lOpen, g.opener())
				depth++
			case x < 5 && depth > 1:
				depth--
				if r.IntN(4) == 0 {
					add(depth, lOpen, "} else {")
					depth++
				} else {
					add(depth, lClose, "}")
				}
			case x < 6:
				add(depth, lComment, g.comment())
			default:
				add(depth, lStmt, g.statement())
			}
		}
		for depth > 1 {
			depth--
			add(depth, lClose, "}")
		}
		add(0, lClose, "}")
		if f < fns-1 {
			add(0, lOther, "")
		}
	}
	return ls
}

// style is the surface of a rendering: none of it changes the tokens.
type style struct {
	indent   string
	rename   map[string]string
	comments *rand.Rand // nil: comments as they are; else rewritten, dropped, added
	blank    int        // 1 in blank lines get a blank line after them (0: none)
	trailing bool       // trailing /* */ comments on some statements
}

func render(ls []line, st style) string {
	var b strings.Builder
	for _, l := range ls {
		text := l.text
		if st.rename != nil {
			text = renameIdents(text, st.rename)
		}
		cr := st.comments
		if l.kind == lComment && cr != nil {
			switch cr.IntN(3) {
			case 0:
				continue // dropped
			case 1:
				text = "/* " + strings.Join(strings.Fields(text)[1:], " ") + " */"
			default:
				text = "// " + commentText[cr.IntN(len(commentText))] + " " + commentText[cr.IntN(len(commentText))]
			}
		}
		if cr != nil && l.kind != lComment && cr.IntN(12) == 0 {
			b.WriteString(strings.Repeat(st.indent, l.depth))
			b.WriteString("// " + commentText[cr.IntN(len(commentText))] + "\n")
		}
		if text != "" {
			b.WriteString(strings.Repeat(st.indent, l.depth))
		}
		b.WriteString(text)
		if st.trailing && cr != nil && l.kind == lStmt && cr.IntN(6) == 0 {
			b.WriteString("  /* " + commentText[cr.IntN(len(commentText))] + " */")
		}
		b.WriteByte('\n')
		if st.blank > 0 && cr != nil && cr.IntN(st.blank) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// renameIdents replaces the identifiers of s found in m.
func renameIdents(s string, m map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if isIdent(c) && (i == 0 || !isIdentOrDigit(s[i-1])) {
			j := i + 1
			for j < len(s) && isIdentOrDigit(s[j]) {
				j++
			}
			w := s[i:j]
			if to, ok := m[w]; ok && (i == 0 || s[i-1] != '.') {
				w = to
			}
			b.WriteString(w)
			i = j
			continue
		}
		// Skip over numbers (0x1f, 1.5f) whole.
		if c >= '0' && c <= '9' {
			j := i + 1
			for j < len(s) && (isIdentOrDigit(s[j]) || s[j] == '.') {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func isIdent(c byte) bool        { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isIdentOrDigit(c byte) bool { return isIdent(c) || (c >= '0' && c <= '9') }

// surface returns a random style of variant: other names, comments, layout.
func (g *gen) surface() style {
	r := g.r
	m := map[string]string{}
	for _, n := range g.names {
		m[n] = fmt.Sprintf("%s_%s", nameWords[r.IntN(len(nameWords))], nameWords[r.IntN(len(nameWords))])
	}
	return style{
		indent:   []string{"  ", "\t", "    ", "   "}[r.IntN(4)],
		rename:   m,
		comments: rand.New(rand.NewPCG(r.Uint64(), r.Uint64())),
		blank:    4 + r.IntN(8),
		trailing: r.IntN(2) == 0,
	}
}

// edit applies one token edit to a statement line of ls: replace, insert,
// delete, or change a literal.
func (g *gen) edit(ls []line) []line {
	r := g.r
	var idx []int
	for i, l := range ls {
		if l.kind == lStmt {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return ls
	}
	i := idx[r.IntN(len(idx))]
	switch r.IntN(4) {
	case 0: // replace
		ls[i].text = g.statement()
	case 1: // insert after
		ls = slices.Insert(ls, i+1, line{depth: ls[i].depth, kind: lStmt, text: g.statement()})
	case 2: // delete
		if len(idx) > 4 {
			ls = slices.Delete(ls, i, i+1)
		} else {
			ls[i].text = g.statement()
		}
	default: // change a literal, or append an operand when there is none
		t := ls[i].text
		if j := strings.IndexFunc(t, func(c rune) bool { return c >= '0' && c <= '9' }); j >= 0 && (j == 0 || !isIdentOrDigit(t[j-1])) {
			k := j + 1
			for k < len(t) && (isIdentOrDigit(t[k]) || t[k] == '.') {
				k++
			}
			ls[i].text = t[:j] + g.literal() + t[k:]
		} else if strings.HasSuffix(t, ";") {
			ls[i].text = strings.TrimSuffix(t, ";") + " " + g.pick(binOps) + " " + g.literal() + ";"
		} else {
			ls[i].text = g.statement()
		}
	}
	return ls
}

// variant derives a document of kind k from base. It returns the text and
// its shingle set; its Jaccard similarity to baseSet lies in k's range.
func (g *gen) variant(base []line, baseSet []uint64, k Kind) (string, []uint64) {
	var lo, hi float64
	switch k {
	case Exact:
		lo, hi = 1, 1
	case High:
		lo, hi = HighRange[0], HighRange[1]
	case Near:
		lo, hi = NearRange[0], NearRange[1]
	case Low:
		lo, hi = LowRange[0], LowRange[1]
	default:
		panic("compare: variant of kind " + k.String())
	}
	for attempt := 0; ; attempt++ {
		if attempt == 1000 {
			panic(fmt.Sprintf("compare: no %s variant in 1000 attempts", k))
		}
		ls := slices.Clone(base)
		j := 1.0
		for j > hi {
			steps := 1
			if j-hi > 0.12 {
				steps = 3
			}
			for range steps {
				ls = g.edit(ls)
			}
			j = Jaccard(ShingleSet(render(ls, style{indent: " "})), baseSet)
		}
		if j < lo {
			continue
		}
		text := render(ls, g.surface())
		set := ShingleSet(text)
		if got := Jaccard(set, baseSet); got != j {
			panic(fmt.Sprintf("compare: surface edits changed the tokens (J %v, want %v):\n%s", got, j, text))
		}
		return text, set
	}
}

// Package curate selects what a campaign's export keeps: near-duplicate
// removal with MinHash signatures and LSH banding over normalised code
// (PtxDec, seed 003, section III-C). This file is the core: normalisation,
// shingles, signatures and a streaming LSH index; the export wiring and
// the selection policies build on it.
package curate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
)

// Params configure near-duplicate detection.
type Params struct {
	// Shingle is the number of consecutive normalised tokens in a shingle
	// (default 5).
	Shingle int
	// Perms is the number of MinHash permutations (default 128); it must
	// equal Bands*Rows.
	Perms int
	// Bands and Rows split a signature for LSH (default 16 x 8): two
	// documents become candidates when one band matches, which happens
	// with probability 1-(1-J^Rows)^Bands at Jaccard similarity J (about
	// 0.5 at J = 0.71 for 16 x 8).
	Bands, Rows int
	// Threshold is the estimated Jaccard similarity at or above which a
	// candidate is a near-duplicate (default 0.8).
	Threshold float64
	// Seed fixes the permutations (default 1): signatures made with
	// different seeds do not compare.
	Seed uint64
}

// DefaultParams are the documented defaults.
func DefaultParams() Params {
	return Params{Shingle: 5, Perms: 128, Bands: 16, Rows: 8, Threshold: 0.8, Seed: 1}
}

// Validate checks p.
func (p Params) Validate() error {
	switch {
	case p.Shingle < 1 || p.Shingle > 64:
		return fmt.Errorf("curate: shingle %d: want 1-64", p.Shingle)
	case p.Perms < 1 || p.Perms > 4096:
		return fmt.Errorf("curate: perms %d: want 1-4096", p.Perms)
	case p.Bands < 1 || p.Rows < 1 || p.Bands*p.Rows != p.Perms:
		return fmt.Errorf("curate: bands %d x rows %d: want a product equal to perms %d", p.Bands, p.Rows, p.Perms)
	case p.Threshold <= 0 || p.Threshold > 1:
		return fmt.Errorf("curate: threshold %g: want (0, 1]", p.Threshold)
	}
	return nil
}

// mersenne61 is the prime 2^61-1: permutations are h(x) = (a*x + b) mod p.
const mersenne61 = (1 << 61) - 1

// Hasher makes MinHash signatures with fixed permutations.
type Hasher struct {
	p    Params
	a, b []uint64
}

// NewHasher returns a Hasher for p.
func NewHasher(p Params) (*Hasher, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x6b696c6e)) // "kiln"
	h := &Hasher{p: p, a: make([]uint64, p.Perms), b: make([]uint64, p.Perms)}
	for i := range h.a {
		h.a[i] = 1 + r.Uint64N(mersenne61-1)
		h.b[i] = r.Uint64N(mersenne61)
	}
	return h, nil
}

// Params are h's parameters.
func (h *Hasher) Params() Params { return h.p }

// Signature is a MinHash signature: one minimum per permutation.
type Signature []uint64

// ErrEmpty: a document with no tokens has no signature.
var ErrEmpty = errors.New("curate: empty document")

// Sign returns the signature of the shingles of tokens.
func (h *Hasher) Sign(tokens []string) (Signature, error) {
	sh := Shingles(tokens, h.p.Shingle)
	if len(sh) == 0 {
		return nil, ErrEmpty
	}
	for j, x := range sh {
		sh[j] = x % mersenne61
	}
	sig := make(Signature, h.p.Perms)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	// Permutations in the outer loop, four at a time, so that their
	// minima stay in registers over the shingles (runs/curate/DEDUP_BENCH.md:
	// 27% less time per document than shingle-outer, same signatures).
	i := 0
	for ; i+4 <= len(sig); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i], b[i+1], b[i+2], b[i+3]
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range sh {
			m0 = min(m0, mulAddMod61(a0, x, b0))
			m1 = min(m1, mulAddMod61(a1, x, b1))
			m2 = min(m2, mulAddMod61(a2, x, b2))
			m3 = min(m3, mulAddMod61(a3, x, b3))
		}
		sig[i], sig[i+1], sig[i+2], sig[i+3] = m0, m1, m2, m3
	}
	for ; i < len(sig); i++ {
		m := uint64(math.MaxUint64)
		for _, x := range sh {
			m = min(m, mulAddMod61(a[i], x, b[i]))
		}
		sig[i] = m
	}
	return sig, nil
}

// mulAddMod61 is (a*x + b) mod 2^61-1 for a, x, b below the prime, with
// one fold: a*x < 2^122, so hi < 2^58 and (lo & p) + (lo >> 61) +
// (hi << 3) + b < 3*2^61 + 8 < 2^63; one fold leaves at most 2^61 + 2,
// and one conditional subtraction makes it canonical.
func mulAddMod61(a, x, b uint64) uint64 {
	hi, lo := bits.Mul64(a, x)
	// a*x = hi*2^64 + lo; 2^64 = 8 (mod 2^61-1) since 2^61 = 1.
	v := (lo & mersenne61) + (lo >> 61) + (hi << 3) + b
	v = (v & mersenne61) + (v >> 61)
	if v >= mersenne61 {
		v -= mersenne61
	}
	return v
}

// Shingles hashes every run of k consecutive tokens (the whole sequence
// when shorter than k) to 64 bits, without duplicates.
func Shingles(tokens []string, k int) []uint64 {
	if len(tokens) == 0 {
		return nil
	}
	k = min(k, len(tokens))
	// Each token hashed once (FNV-1a), then a shingle is a polynomial
	// mix of its tokens' hashes, finalised with splitmix64's mixer.
	th := make([]uint64, len(tokens))
	for i, t := range tokens {
		h := uint64(fnvOffset)
		for j := 0; j < len(t); j++ {
			h = (h ^ uint64(t[j])) * fnvPrime
		}
		th[i] = h
	}
	seen := make(map[uint64]struct{}, len(tokens))
	out := make([]uint64, 0, len(tokens))
	for i := 0; i+k <= len(tokens); i++ {
		x := uint64(k)
		for _, v := range th[i : i+k] {
			x = x*0x9e3779b97f4a7c15 + v
		}
		x = mix64(x)
		if _, ok := seen[x]; !ok {
			seen[x] = struct{}{}
			out = append(out, x)
		}
	}
	return out
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mix64 is splitmix64's finaliser: every input bit affects every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Similarity estimates the Jaccard similarity of the documents of two
// signatures made by the same Hasher: the fraction of equal minima.
func Similarity(a, b Signature) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	eq := 0
	for i := range a {
		if a[i] == b[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(a))
}

// Index is a streaming LSH index: documents are added one at a time, and a
// query finds the near-duplicates among those already added. Not safe for
// concurrent use.
type Index struct {
	p       Params
	buckets []map[uint64][]int // per band: band hash -> document numbers
	sigs    []Signature
	ids     []string
}

// NewIndex returns an empty index for signatures made with p.
func NewIndex(p Params) (*Index, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ix := &Index{p: p, buckets: make([]map[uint64][]int, p.Bands)}
	for i := range ix.buckets {
		ix.buckets[i] = map[uint64][]int{}
	}
	return ix, nil
}

// Len is the number of documents added.
func (ix *Index) Len() int { return len(ix.ids) }

func (ix *Index) bandHash(sig Signature, band int) uint64 {
	f := fnv.New64a()
	var buf [8]byte
	for _, v := range sig[band*ix.p.Rows : (band+1)*ix.p.Rows] {
		binary.LittleEndian.PutUint64(buf[:], v)
		f.Write(buf[:])
	}
	return f.Sum64()
}

// Match is a near-duplicate found by Query.
type Match struct {
	ID         string
	Similarity float64 // estimated Jaccard similarity
}

// Query returns the documents already added whose estimated similarity to
// sig is at least the threshold, most similar first.
func (ix *Index) Query(sig Signature) []Match {
	if len(sig) != ix.p.Perms {
		return nil
	}
	seen := map[int]bool{}
	var out []Match
	for band := range ix.buckets {
		for _, n := range ix.buckets[band][ix.bandHash(sig, band)] {
			if seen[n] {
				continue
			}
			seen[n] = true
			if s := Similarity(sig, ix.sigs[n]); s >= ix.p.Threshold {
				out = append(out, Match{ID: ix.ids[n], Similarity: s})
			}
		}
	}
	for i := 1; i < len(out); i++ { // few matches: insertion sort, most similar first
		for j := i; j > 0 && out[j].Similarity > out[j-1].Similarity; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Add puts a document's signature into the index.
func (ix *Index) Add(id string, sig Signature) error {
	if len(sig) != ix.p.Perms {
		return fmt.Errorf("curate: signature of %d values, want %d", len(sig), ix.p.Perms)
	}
	n := len(ix.ids)
	ix.ids = append(ix.ids, id)
	ix.sigs = append(ix.sigs, sig)
	for band := range ix.buckets {
		k := ix.bandHash(sig, band)
		ix.buckets[band][k] = append(ix.buckets[band][k], n)
	}
	return nil
}

// keepWords are kept as they are by Normalise; other identifiers become
// "ID". They are the keywords of C, C++, CUDA and Python and the names of
// the CUDA built-ins, whose meaning a rename does not change; Python's
// short word operators (in, is, as, and, or, not) are left out, as C code
// uses them as names.
var keepWords = toSet(`auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while bool true false class template typename namespace using new delete this nullptr constexpr
__global__ __device__ __host__ __shared__ __constant__ __syncthreads __restrict__ threadIdx blockIdx blockDim
gridDim warpSize assert async await def del elif except finally from global import lambda nonlocal pass
raise try with yield None True False self`)

func toSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Normalise turns source code (C, C++, CUDA, Python) into tokens for
// near-duplicate detection: comments (// and /* */, and # lines that are
// not preprocessor directives) and whitespace go, identifiers other than
// keywords become "ID", numbers and punctuation stay. Renaming variables or
// rewording comments leaves the tokens unchanged. Assembly goes through
// NormaliseAsm.
func Normalise(code string) []string {
	var out []string
	s := code
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '/', c == '#' && lineStart(s, i) && !isDirective(s[i:]):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 4
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j])) {
				j++
			}
			w := s[i:j]
			if keepWords[w] {
				out = append(out, w)
			} else {
				out = append(out, "ID")
			}
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(s) && (isDigit(s[j]) || isIdentStart(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			out = append(out, s[i:i+1])
			i++
		}
	}
	return out
}

// lineStart reports whether s[i] is the first non-blank of its line.
func lineStart(s string, i int) bool {
	for j := i - 1; j >= 0 && s[j] != '\n'; j-- {
		if s[j] != ' ' && s[j] != '\t' {
			return false
		}
	}
	return true
}

// isDirective reports whether a line starting with # is a C preprocessor
// directive (kept: it is code), not a comment.
func isDirective(s string) bool {
	for _, d := range []string{"#include", "#define", "#if", "#ifdef", "#ifndef", "#else", "#elif", "#endif", "#pragma", "#undef"} {
		if strings.HasPrefix(s, d) {
			return true
		}
	}
	return false
}

// NormaliseAsm turns assembly (PTX, SASS, RDNA3, x86) into tokens in the
// manner of CASS: comments (//, #, ;) go, each line's mnemonic and
// directives stay, registers become "REG" (%r1, %rd4, R12, v3, s[0:1],
// %eax), labels and symbols become "ID", immediates stay. Register
// renaming and relabelling leave the tokens unchanged.
func NormaliseAsm(code string) []string {
	var out []string
	for _, line := range strings.Split(code, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		fields := strings.FieldsFunc(line, func(r rune) bool {
			return r == ' ' || r == '\t' || r == ',' || r == '[' || r == ']' || r == '(' || r == ')' || r == '{' || r == '}' || r == '+'
		})
		mnemonic := true
		for _, f := range fields {
			switch {
			case strings.HasPrefix(f, "@"): // a predicate guard: @%p1, @!P0
				out = append(out, "@REG")
			case mnemonic || strings.HasPrefix(f, "."):
				out = append(out, f) // mnemonic or directive
				mnemonic = false
			case isRegister(f):
				out = append(out, "REG")
			case isDigit(f[0]) || f[0] == '-' || strings.HasPrefix(f, "0x"):
				out = append(out, f)
			default:
				out = append(out, "ID")
			}
		}
	}
	return out
}

// isRegister reports whether an assembly operand names a register.
func isRegister(f string) bool {
	if strings.HasPrefix(f, "%") || strings.HasPrefix(f, "$") {
		return true
	}
	f = strings.TrimPrefix(strings.TrimPrefix(f, "-"), "!")
	if len(f) < 2 {
		return false
	}
	switch f[0] {
	case 'R', 'P', 'v', 's', 'r', 'p', 'U':
		rest := strings.TrimPrefix(f[1:], "R")
		return rest != "" && strings.Trim(rest, "0123456789:Z") == ""
	}
	return false
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

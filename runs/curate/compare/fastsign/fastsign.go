// Package fastsign is a copy of curate.Hasher.Sign with the changes this
// benchmark proposes, each switchable so that its effect can be measured.
// Every variant makes signatures bit-identical to curate's (the test
// checks it): the permutations are the same (a*x + b) mod 2^61-1 with the
// same a and b, drawn the way curate.NewHasher draws them.
package fastsign

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/kiln-dev/kiln/runs/curate"
)

const p61 = (1 << 61) - 1

// Variant selects the changes applied.
type Variant struct {
	// Fused: one modular reduction per permutation instead of three
	// (b added before folding), and no bounds checks in the inner loop.
	Fused bool
	// PermOuter: permutations in the outer loop, four at a time, the
	// shingles in the inner loop: the four minima stay in registers and
	// the signature is written once per permutation.
	PermOuter bool
	// NoDedup: sign every shingle hash without first removing repeats
	// through a map (a repeat cannot change a minimum).
	NoDedup bool
	// Width is how many permutations share a pass over the shingles
	// with PermOuter: 1, 2 or 4 (0 means 4).
	Width int
}

// Best is every change.
var Best = Variant{Fused: true, PermOuter: true, NoDedup: true}

// Hasher makes curate-compatible signatures.
type Hasher struct {
	p    curate.Params
	a, b []uint64
}

// New returns a Hasher whose signatures equal curate.NewHasher(p)'s.
func New(p curate.Params) (*Hasher, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x6b696c6e)) // as curate.NewHasher
	h := &Hasher{p: p, a: make([]uint64, p.Perms), b: make([]uint64, p.Perms)}
	for i := range h.a {
		h.a[i] = 1 + r.Uint64N(p61-1)
		h.b[i] = r.Uint64N(p61)
	}
	return h, nil
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// shingles hashes the shingles exactly as curate.Shingles does and reduces
// them mod 2^61-1; with dedup it drops repeats as curate.Shingles does.
func (h *Hasher) shingles(tokens []string, dedup bool) []uint64 {
	k := min(h.p.Shingle, len(tokens))
	// Allocated per call, as curate does: a Hasher stays safe for
	// concurrent use.
	th := make([]uint64, 0, len(tokens))
	for _, t := range tokens {
		x := uint64(fnvOffset)
		for j := 0; j < len(t); j++ {
			x = (x ^ uint64(t[j])) * fnvPrime
		}
		th = append(th, x)
	}
	var seen map[uint64]struct{}
	if dedup {
		seen = make(map[uint64]struct{}, len(tokens))
	}
	xs := make([]uint64, 0, len(tokens))
	for i := 0; i+k <= len(th); i++ {
		x := uint64(k)
		for _, v := range th[i : i+k] {
			x = x*0x9e3779b97f4a7c15 + v
		}
		x = mix64(x)
		if dedup {
			if _, ok := seen[x]; ok {
				continue
			}
			seen[x] = struct{}{}
		}
		xs = append(xs, x)
	}
	return xs
}

// Sign is curate.Hasher.Sign with every change.
func (h *Hasher) Sign(tokens []string) (curate.Signature, error) { return h.SignVariant(tokens, Best) }

// SignVariant signs with the changes v selects.
func (h *Hasher) SignVariant(tokens []string, v Variant) (curate.Signature, error) {
	if len(tokens) == 0 {
		return nil, curate.ErrEmpty
	}
	xs := h.shingles(tokens, !v.NoDedup)
	sig := make(curate.Signature, h.p.Perms)
	switch {
	case !v.Fused && !v.PermOuter:
		h.signOriginal(xs, sig)
	case v.Fused && !v.PermOuter:
		h.signFused(xs, sig)
	case v.Width == 1:
		h.signPermOuter1(xs, sig)
	case v.Width == 2:
		h.signPermOuter2(xs, sig)
	default:
		h.signPermOuter(xs, sig)
	}
	return sig, nil
}

// signOriginal is curate's loop as it is.
func (h *Hasher) signOriginal(xs []uint64, sig curate.Signature) {
	for i := range sig {
		sig[i] = math.MaxUint64
	}
	for _, x := range xs {
		x %= p61
		for i := range sig {
			if v := mulAddMod61(h.a[i], x, h.b[i]); v < sig[i] {
				sig[i] = v
			}
		}
	}
}

func mulAddMod61(a, x, b uint64) uint64 {
	hi, lo := bits.Mul64(a, x)
	v := (lo & p61) + (lo >> 61) + (hi << 3)
	v = (v & p61) + (v >> 61)
	v += b
	v = (v & p61) + (v >> 61)
	if v >= p61 {
		v -= p61
	}
	return v
}

// mulAddMod61Fused is (a*x + b) mod 2^61-1 for a, x, b below the prime
// with one fold: a*x < 2^122, so hi < 2^58 and
// (lo & p) + (lo >> 61) + (hi << 3) + b < 3*2^61 + 8 < 2^63; one fold
// leaves at most 2^61 + 2, and one conditional subtraction makes it
// canonical. Same value as mulAddMod61.
func mulAddMod61Fused(a, x, b uint64) uint64 {
	hi, lo := bits.Mul64(a, x)
	v := (lo & p61) + (lo >> 61) + (hi << 3) + b
	v = (v & p61) + (v >> 61)
	if v >= p61 {
		v -= p61
	}
	return v
}

func reduce(xs []uint64) {
	for j, x := range xs {
		x = (x & p61) + (x >> 61)
		if x >= p61 {
			x -= p61
		}
		xs[j] = x
	}
}

func (h *Hasher) signFused(xs []uint64, sig curate.Signature) {
	reduce(xs)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	for i := range sig {
		sig[i] = math.MaxUint64
	}
	for _, x := range xs {
		for i := range sig {
			if v := mulAddMod61Fused(a[i], x, b[i]); v < sig[i] {
				sig[i] = v
			}
		}
	}
}

func (h *Hasher) signPermOuter(xs []uint64, sig curate.Signature) {
	reduce(xs)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	i := 0
	for ; i+4 <= len(sig); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i], b[i+1], b[i+2], b[i+3]
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range xs {
			m0 = min(m0, mulAddMod61Fused(a0, x, b0))
			m1 = min(m1, mulAddMod61Fused(a1, x, b1))
			m2 = min(m2, mulAddMod61Fused(a2, x, b2))
			m3 = min(m3, mulAddMod61Fused(a3, x, b3))
		}
		sig[i], sig[i+1], sig[i+2], sig[i+3] = m0, m1, m2, m3
	}
	for ; i < len(sig); i++ {
		m := uint64(math.MaxUint64)
		for _, x := range xs {
			m = min(m, mulAddMod61Fused(a[i], x, b[i]))
		}
		sig[i] = m
	}
}

func (h *Hasher) signPermOuter1(xs []uint64, sig curate.Signature) {
	reduce(xs)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	for i := range sig {
		ai, bi := a[i], b[i]
		m := uint64(math.MaxUint64)
		for _, x := range xs {
			m = min(m, mulAddMod61Fused(ai, x, bi))
		}
		sig[i] = m
	}
}

func (h *Hasher) signPermOuter2(xs []uint64, sig curate.Signature) {
	reduce(xs)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	i := 0
	for ; i+2 <= len(sig); i += 2 {
		a0, a1 := a[i], a[i+1]
		b0, b1 := b[i], b[i+1]
		m0, m1 := uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range xs {
			m0 = min(m0, mulAddMod61Fused(a0, x, b0))
			m1 = min(m1, mulAddMod61Fused(a1, x, b1))
		}
		sig[i], sig[i+1] = m0, m1
	}
	for ; i < len(sig); i++ {
		m := uint64(math.MaxUint64)
		for _, x := range xs {
			m = min(m, mulAddMod61Fused(a[i], x, b[i]))
		}
		sig[i] = m
	}
}

// Wrap64 is a Hasher with another permutation family, (a*x + b) mod 2^64
// with a odd, over the 64-bit shingle hashes (already mixed by splitmix64's
// finaliser): a multiply and an add per shingle and permutation instead of
// a 128-bit product and a reduction mod 2^61-1. Its signatures do NOT
// compare with curate's: adopting it changes every stored signature.
type Wrap64 struct {
	p    curate.Params
	a, b []uint64
}

// NewWrap64 returns a Wrap64 for p.
func NewWrap64(p curate.Params) (*Wrap64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(p.Seed, 0x77726170)) // "wrap"
	h := &Wrap64{p: p, a: make([]uint64, p.Perms), b: make([]uint64, p.Perms)}
	for i := range h.a {
		h.a[i] = r.Uint64() | 1
		h.b[i] = r.Uint64()
	}
	return h, nil
}

// Sign signs tokens' shingles (repeats kept: they cannot change a minimum).
func (h *Wrap64) Sign(tokens []string) (curate.Signature, error) {
	if len(tokens) == 0 {
		return nil, curate.ErrEmpty
	}
	xs := (&Hasher{p: h.p}).shingles(tokens, false)
	sig := make(curate.Signature, h.p.Perms)
	a, b := h.a[:len(sig)], h.b[:len(sig)]
	i := 0
	for ; i+4 <= len(sig); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i], b[i+1], b[i+2], b[i+3]
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range xs {
			m0 = min(m0, a0*x+b0)
			m1 = min(m1, a1*x+b1)
			m2 = min(m2, a2*x+b2)
			m3 = min(m3, a3*x+b3)
		}
		sig[i], sig[i+1], sig[i+2], sig[i+3] = m0, m1, m2, m3
	}
	for ; i < len(sig); i++ {
		m := uint64(math.MaxUint64)
		for _, x := range xs {
			m = min(m, a[i]*x+b[i])
		}
		sig[i] = m
	}
	return sig, nil
}

package fastsign

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/curate/compare"
)

var variants = []struct {
	name string
	v    Variant
}{
	{"original", Variant{}},
	{"fused", Variant{Fused: true}},
	{"fused+permouter", Variant{Fused: true, PermOuter: true}},
	{"fused+permouter1", Variant{Fused: true, PermOuter: true, Width: 1}},
	{"fused+permouter2", Variant{Fused: true, PermOuter: true, Width: 2}},
	{"nodedup", Variant{NoDedup: true}},
	{"all-width1", Variant{Fused: true, PermOuter: true, NoDedup: true, Width: 1}},
	{"all-width2", Variant{Fused: true, PermOuter: true, NoDedup: true, Width: 2}},
	{"all", Best},
}

// Every variant makes exactly curate's signatures.
func TestSameSignatures(t *testing.T) {
	p := curate.DefaultParams()
	ref, err := curate.NewHasher(p)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	c := compare.Generate(600, 3, compare.Options{})
	docs := append(slices.Clone(c.Docs), "x", "a b", "int x = 1 ;") // shorter than a shingle too
	for _, d := range docs {
		toks := curate.Normalise(d)
		want, err := ref.Sign(toks)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variants {
			got, err := h.SignVariant(toks, v.v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: signature differs from curate's for %q", v.name, d[:min(len(d), 60)])
			}
		}
	}
	if _, err := h.Sign(nil); err != curate.ErrEmpty {
		t.Errorf("empty: %v", err)
	}
}

func TestMulAddMod61Fused(t *testing.T) {
	edge := []uint64{0, 1, 2, 7, 8, p61 - 2, p61 - 1, 1 << 60, (1 << 60) + 1, 0x1234_5678_9abc_def0 % p61}
	for _, a := range edge[1:] {
		for _, x := range edge {
			for _, b := range edge {
				if got, want := mulAddMod61Fused(a, x, b), mulAddMod61(a, x, b); got != want {
					t.Fatalf("%d*%d+%d: %d, want %d", a, x, b, got, want)
				}
			}
		}
	}
}

// BenchmarkSign: ns/op is one document of the synthetic corpus.
func BenchmarkSign(b *testing.B) {
	p := curate.DefaultParams()
	c := compare.Generate(2000, 5, compare.Options{})
	toks := make([][]string, len(c.Docs))
	for i, d := range c.Docs {
		toks[i] = curate.Normalise(d)
	}
	ref, _ := curate.NewHasher(p)
	b.Run("curate", func(b *testing.B) {
		for i := range b.N {
			if _, err := ref.Sign(toks[i%len(toks)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("curate.Shingles-only", func(b *testing.B) {
		for i := range b.N {
			_ = curate.Shingles(toks[i%len(toks)], p.Shingle)
		}
	})
	h, _ := New(p)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			for i := range b.N {
				if _, err := h.SignVariant(toks[i%len(toks)], v.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	w, _ := NewWrap64(p)
	b.Run("wrap64", func(b *testing.B) {
		for i := range b.N {
			if _, err := w.Sign(toks[i%len(toks)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	_ = fmt.Sprint
}

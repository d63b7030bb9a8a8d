package rollptx

import "testing"

type foldCase struct {
	r                      *roller
	runs                   [][]unit
	nh, nt, nl, nb, na, ns int
}

func BenchmarkZZFirstPass(b *testing.B) {
	files := loadCorpus(b)
	var cases []foldCase
	var total int64
	for _, f := range files {
		r := new(roller)
		r.src = f.ptx
		r.tab = make([]tabEnt, 1<<16)
		r.tgen = 1
		r.shapeOff = append(r.shapeOff[:0], 0)
		if !r.lex() {
			continue
		}
		total += int64(len(f.ptx))
		c := foldCase{r: r}
		items := r.items
		for i := 0; i < len(items); {
			if items[i].shape < 0 {
				i++
				continue
			}
			j := i + 1
			for j < len(items) && items[j].shape >= 0 {
				j++
			}
			if j-i >= 2 {
				c.runs = append(c.runs, append([]unit(nil), items[i:j]...))
			}
			i = j
		}
		c.nh, c.nt, c.nl, c.nb, c.na, c.ns = len(r.holes), len(r.terms), len(r.loops), len(r.bodies), len(r.arena), r.nshape
		cases = append(cases, c)
	}
	b.SetBytes(total)
	b.ResetTimer()
	for b.Loop() {
		for i := range cases {
			c := &cases[i]
			r := c.r
			for _, run := range c.runs {
				r.holes, r.terms, r.loops, r.bodies, r.arena = r.holes[:c.nh], r.terms[:c.nt], r.loops[:c.nl], r.bodies[:c.nb], r.arena[:c.na]

				r.shapeOff = r.shapeOff[:c.ns+1]
				r.nshape = c.ns
				r.tgen++
				_ = 0
				r.work[0], _ = r.foldRun(run, flat, r.work[0][:0])
			}
		}
	}
}

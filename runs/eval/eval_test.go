package eval

import (
	"bytes"
	"encoding/xml"
	"math"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/tools"
)

// samplesOf makes n samples of one task, the first c passing.
func samplesOf(model, lane, task, cat string, n, c int) []Sample {
	var out []Sample
	for i := range n {
		s := Sample{Model: model, Lane: lane, Task: task, Categories: []string{cat}, Pass: i < c,
			Stages: []tools.Stage{{Name: "compile", OK: true}, {Name: "run", OK: i < c}}}
		if i >= c {
			s.Class = "wrong_output"
		}
		out = append(out, s)
	}
	return out
}

func TestBuildPassAtK(t *testing.T) {
	t.Parallel()
	var ss []Sample
	// Model a: task x 2/4 pass, task y 0/4 (category c1); task z 4/4 (c2).
	ss = append(ss, samplesOf("a", "lane", "x", "c1", 4, 2)...)
	ss = append(ss, samplesOf("a", "lane", "y", "c1", 4, 0)...)
	ss = append(ss, samplesOf("a", "lane", "z", "c2", 4, 4)...)
	// Model b: one pending answer and three failures on x.
	bs := samplesOf("b", "lane", "x", "c1", 4, 0)
	bs[0].Pending, bs[0].Class = true, ""
	bs[0].Stages[1] = tools.Stage{Name: "run", Skipped: true}
	ss = append(ss, bs...)
	rep, err := Build(ss, Options{K: []int{1, 2, 5}})
	if err != nil {
		t.Fatal(err)
	}
	row := func(model, cat string) Row {
		for _, r := range rep.Rows {
			if r.Model == model && r.Category == cat {
				return r
			}
		}
		t.Fatalf("no row %s/%s", model, cat)
		return Row{}
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	// x: pass@1 = 0.5, pass@2 = 1 - C(2,2)/C(4,2) = 5/6; y: 0.
	c1 := row("a", "c1")
	if c1.Tasks != 2 || c1.Samples != 8 || c1.Passed != 2 || c1.Failed != 6 {
		t.Errorf("a/c1 counts: %+v", c1)
	}
	if !near(c1.PassAtK[1], 0.25) || !near(c1.PassAtK[2], 5.0/12) {
		t.Errorf("a/c1 pass@k = %v, want 0.25 and 5/12", c1.PassAtK)
	}
	if _, ok := c1.PassAtK[5]; ok {
		t.Errorf("pass@5 reported with 4 samples per task: %v", c1.PassAtK)
	}
	all := row("a", All)
	if all.Tasks != 3 || !near(all.PassAtK[1], (0.5+0+1)/3) {
		t.Errorf("a/(all): %+v", all)
	}
	b := row("b", All)
	if b.Pending != 1 || b.Passed != 0 || b.PassAtK[1] != 0 {
		t.Errorf("b: pending must not count as pass: %+v", b)
	}
	if rep.Rows[0].Category != All {
		t.Errorf("first row %q, want the (all) row", rep.Rows[0].Category)
	}
	var runB StageRate
	for _, s := range rep.Stages {
		if s.Model == "b" && s.Stage == "run" {
			runB = s
		}
	}
	if runB.Samples != 4 || runB.Passed != 0 || runB.Skipped != 1 {
		t.Errorf("b run stage: %+v", runB)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| pass@1 |", "| c1 | a | 2 | 8 | 2 | 0 | 0 | 6 | 0.250 | 0.417 | - |", "1 answers are pending", "| b | run | 0/4 (0.0%) | 1/4 (25.0%) |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var svg bytes.Buffer
	if err := rep.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&svg)
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
}

func TestBuildMeasures(t *testing.T) {
	t.Parallel()
	ss := []Sample{
		{Model: "m", Lane: "l", Task: "a", Pass: true, Measurements: map[string]float64{"latency_ratio": 2}},
		{Model: "m", Lane: "l", Task: "b", Pass: true, Measurements: map[string]float64{"latency_ratio": 0.5}},
		{Model: "m", Lane: "l", Task: "c", Measurements: map[string]float64{"other": 1}},
	}
	rep, err := Build(ss, Options{Measures: []string{"latency_ratio"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Measures) != 1 {
		t.Fatalf("measures: %+v", rep.Measures)
	}
	m := rep.Measures[0]
	if m.N != 2 || m.Mean != 1.25 || math.Abs(m.GeoMean-1) > 1e-12 {
		t.Errorf("latency_ratio: %+v (want n 2, mean 1.25, geomean 1)", m)
	}
	if _, err := Build(nil, Options{}); err == nil {
		t.Error("empty report accepted")
	}
	if _, err := Build(ss, Options{K: []int{0}}); err == nil {
		t.Error("k = 0 accepted")
	}
}

func TestTaskIdentity(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{"r0/a#2": "r0/a", "r0/a": "r0/a", "#1": "#1"} {
		if got := TaskIdentity(key); got != want {
			t.Errorf("TaskIdentity(%q) = %q, want %q", key, got, want)
		}
	}
}

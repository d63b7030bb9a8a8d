package refinement

import (
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// A lane without rules of its own gets the generic table, whatever lanes
// are registered. The lanes' own rows (real GNU as / ld / gcc, nvcc,
// ptxas and CUDA runtime messages) are in tools/c2x86 and tools/cudasynth
// (refine_test.go).
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lane, class, stage, diag string
		want                           string
		evidence                       string // substring of the evidence
	}{
		// Unknown lane: the generic table.
		{"unknown lane segv", "sass2rdna", ClassCrash, "run", "killed by signal SIGSEGV", "crash.segv", ""},
		{"unknown lane asm", "sass2rdna", ClassAssembleError, "assemble", "error: invalid instruction", "asm.other", ""},
	}
	tax := toyLanes.Taxonomy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := tax.Classify(tt.lane, runs.Verdict{Class: tt.class, Stage: tt.stage, Diagnostic: tt.diag}, "")
			if l.Name != tt.want {
				t.Fatalf("label %q (evidence %q), want %q", l.Name, l.Evidence, tt.want)
			}
			if l.Class != tt.class || l.Stage != tt.stage || l.Suspicion != "" || l.Key() != tt.want {
				t.Errorf("label %+v", l)
			}
			if !strings.Contains(l.Evidence, tt.evidence) {
				t.Errorf("evidence %q lacks %q", l.Evidence, tt.evidence)
			}
		})
	}
}

func TestNewTaxonomyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tables []LaneTable
		want   string
	}{
		{"no label", []LaneTable{{Lane: "x", Rules: []Rule{{Pattern: "a"}}}}, "no label"},
		{"bad regexp", []LaneTable{{Lane: "x", Rules: []Rule{{Label: "l", Pattern: "("}}}}, "missing closing )"},
		{"duplicate lane", []LaneTable{{Lane: "x"}, {Lane: "x"}}, "given twice"},
		{"pattern and match", []LaneTable{{Lane: "x", Rules: []Rule{{Label: "l", Pattern: "a", Match: matchNumeric}}}}, "both a pattern and a match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewTaxonomy(tt.tables...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCustomTaxonomy(t *testing.T) {
	t.Parallel()
	tax, err := NewTaxonomy(LaneTable{Lane: "toy", Rules: []Rule{
		{Label: "toy.first", Pattern: `alpha`},
		{Label: "toy.second", Pattern: `beta`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Line order decides between rules of one group.
	l := tax.Classify("toy", runs.Verdict{Class: "x", Diagnostic: "beta here\nalpha there"}, "")
	if l.Name != "toy.second" {
		t.Fatalf("got %q, want toy.second (first matching line)", l.Name)
	}
	// The generic table still applies after the lane's.
	l = tax.Classify("toy", runs.Verdict{Class: ClassCrash, Diagnostic: "killed by signal SIGFPE"}, "")
	if l.Name != "crash.fpe" {
		t.Fatalf("got %q, want crash.fpe", l.Name)
	}
	if got := tax.Lanes(); len(got) != 1 || got[0] != "toy" {
		t.Fatalf("lanes %v", got)
	}
}

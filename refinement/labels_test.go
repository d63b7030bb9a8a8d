package refinement

import (
	"slices"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// TestStoredLabelsWin: ClassifyResult, FeaturesOf and the statistics read
// stored labels; results without them are computed.
func TestStoredLabelsWin(t *testing.T) {
	t.Parallel()
	r := synthResult(0, 1, srcSwitch, false, ClassWrongOutput, diagNumeric, "switch_many")
	computed := toyLanes.Taxonomy.ClassifyResult(r)
	if computed.Name != "wrong.numeric" {
		t.Fatalf("computed label %+v", computed)
	}
	// Labels as an older table would have stored them.
	r.Verdict.Labels = &runs.VerdictLabels{Class: ClassWrongOutput, DiagnosticKind: "wrong.value", Evidence: "line 1",
		Features: []string{"goto"}, Categories: []string{"switch_many"}, Domain: "general compute"}
	if l := toyLanes.Taxonomy.ClassifyResult(r); l.Name != "wrong.value" || l.Evidence != "line 1" || l.Class != ClassWrongOutput {
		t.Errorf("stored label not used: %+v", l)
	}
	if f := toyLanes.Features.FeaturesOf(r); !slices.Equal(f, []string{"goto"}) {
		t.Errorf("stored features not used: %v", f)
	}
	// Labeler computes afresh.
	if l := toyLanes.Labeler().Labels(r, ""); l.DiagnosticKind != "wrong.numeric" || slices.Contains(l.Features, "goto") {
		t.Errorf("Labeler used stored labels: %+v", l)
	}
	old := synthResult(0, 2, srcLoop, false, ClassWrongOutput, diagNumeric, "loop")
	stats := StatsBy([]runs.Result{r, old}, ByFeature(toyLanes.Features), GroupOptions{Taxonomy: toyLanes.Taxonomy})
	byName := map[string]CategoryStats{}
	for _, s := range stats {
		byName[s.Category] = s
	}
	if byName["goto"].Total != 1 || byName["goto"].Labels["wrong.value"] != 1 || byName["loop"].Total != 1 ||
		byName["loop"].Labels["wrong.numeric"] != 1 || byName["switch_many"].Total != 0 {
		t.Errorf("stats by feature: %+v", stats)
	}
	// Examples of a feature category use the stored features too.
	if ex := ExamplesFor([]runs.Result{r, old}, "goto", ExampleOptions{Lanes: toyLanes}); len(ex) != 1 || ex[0].Label != "wrong.value" {
		t.Errorf("examples for goto: %+v", ex)
	}
}

func TestReportDomains(t *testing.T) {
	t.Parallel()
	var rs []runs.Result
	add := func(round int, pass bool, domain string, stored bool) {
		r := synthResult(round, len(rs), srcLoop, pass, "", "", "loop")
		if !pass {
			r.Verdict.Class, r.Verdict.Diagnostic = ClassWrongOutput, diagNumeric
		}
		r.Task.Meta["domain"] = domain
		if stored {
			l := toyLanes.Labeler().Labels(r, domain)
			r.Verdict.Labels = &l
		}
		rs = append(rs, r)
	}
	add(0, false, "simulation", true)
	add(0, false, "simulation", false) // stored before labels: the fallback
	add(0, true, "graph", true)
	add(1, true, "simulation", true)
	add(1, false, "", true)
	rep := BuildReport(ReportInput{Lane: toyLane, Results: rs, Lanes: toyLanes,
		DomainOf: func(r runs.Result) string { return r.Task.Meta["domain"] }})
	if len(rep.Rounds) != 2 {
		t.Fatalf("%d rounds", len(rep.Rounds))
	}
	d0 := rep.Rounds[0].Domains
	if len(d0) != 2 || d0[0].Category != "graph" || d0[0].After.Pass != 1 || d0[1].Category != "simulation" || d0[1].After.Total != 2 {
		t.Errorf("round 0 domains %+v", d0)
	}
	d1 := rep.Rounds[1].Domains
	if len(d1) != 1 || d1[0].Category != "simulation" || d1[0].Before == nil || d1[0].Before.Total != 2 || *d1[0].Lift != 1 {
		t.Errorf("round 1 domains %+v", d1)
	}
	if rep := BuildReport(ReportInput{Lane: toyLane, Results: rs[1:2], Lanes: toyLanes}); rep.Rounds[0].Domains != nil {
		t.Errorf("domains without any domain: %+v", rep.Rounds[0].Domains)
	}
}

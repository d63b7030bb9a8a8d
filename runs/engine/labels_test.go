package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// domainLane is fakeLane recording a domain artifact for passing answers.
type domainLane struct{ fakeLane }

func (domainLane) Verify(ctx context.Context, it tools.Item, answer string) (tools.Verdict, error) {
	v, err := fakeLane{}.Verify(ctx, it, answer)
	if v.Pass {
		v.Artifacts = map[string][]byte{DomainArtifact: []byte("simulation\n")}
	}
	return v, err
}

// TestVerdictLabelsStored: every verdict the engine stores carries its
// labels, the same the refinement tables compute from the stored result,
// with the lane's domain artifact or else the plan's domain hook.
func TestVerdictLabelsStored(t *testing.T) {
	t.Parallel()
	if DomainArtifact != cudasynth.ArtifactDomain {
		t.Fatalf("DomainArtifact %q, cuda-synth writes %q", DomainArtifact, cudasynth.ArtifactDomain)
	}
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	var tasks []runs.Task
	for i := 0; i < 3; i++ {
		h := task(0, "r0/h#"+string(rune('0'+i)), "hard", true)
		h.Files["function.c"] = "int f(int x) { for (int i = 0; i < x; i++) x ^= i; return x; }"
		tasks = append(tasks, h, task(0, "r0/e#"+string(rune('0'+i)), "easy", false))
	}
	p := &Plan{Lane: domainLane{}, Model: solver, ToolMode: agent.ToolsNone, MaxToolCalls: -1, Concurrency: 2,
		Tasks:  func() ([]runs.Task, error) { return tasks, nil },
		Labels: Labels{Labeler: testLanes().Labeler(), Domain: func(t runs.Task, answer string) string { return "hook:" + t.Categories[0] + ":" + answer }}}
	if _, err := (&Engine{Store: st}).Run(ctx, c.ID, p, nil); err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 6 {
		t.Fatalf("results %d %v", len(res), err)
	}
	for _, r := range res {
		l := r.Verdict.Labels
		if l == nil {
			t.Fatalf("%s: no labels stored", r.Task.Key)
		}
		plain := r
		plain.Verdict.Labels = nil
		want := testLanes().Labeler().Labels(plain, l.Domain)
		if l.DiagnosticKind != want.DiagnosticKind || l.Class != r.Verdict.Class || !slices.Equal(l.Features, want.Features) ||
			!slices.Equal(l.Categories, r.Task.Categories) {
			t.Errorf("%s: labels %+v, computed %+v", r.Task.Key, *l, want)
		}
		switch r.Task.Categories[0] {
		case "hard":
			if l.Domain != "hook:hard:wrong" || l.DiagnosticKind == refinement.LabelPass || !slices.Contains(l.Features, "loop") {
				t.Errorf("%s: %+v", r.Task.Key, *l)
			}
		default:
			if l.Domain != "simulation" || l.DiagnosticKind != refinement.LabelPass {
				t.Errorf("%s: %+v", r.Task.Key, *l)
			}
		}
	}

	// A rescore's revisions carry labels too (the domain read back from
	// the stored artifact).
	if _, err := Rescore(ctx, st, c.ID, domainLane{}, RescoreOptions{Concurrency: 2, Labels: Labels{Labeler: testLanes().Labeler()}}, nil, "", nil); err != nil {
		t.Fatal(err)
	}
	res, err = st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		l := r.Verdict.Labels
		if r.Verdict.Revision != 1 || l == nil || l.Class != r.Verdict.Class || (r.Verdict.Pass && l.Domain != "simulation") ||
			(!r.Verdict.Pass && (l.Domain != "" || !slices.Contains(l.Features, "loop"))) {
			t.Errorf("%s: rescore revision %d labels %+v", r.Task.Key, r.Verdict.Revision, l)
		}
	}
}

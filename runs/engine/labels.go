package engine

import (
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// DomainArtifact is the verdict artifact in which a lane records the
// program's domain.
const DomainArtifact = tools.ArtifactDomain

// Labels computes the labels stored with a verdict (runs.VerdictLabels):
// failure class and fine label, construct features, task categories and
// domain. The engine computes them when it stores the verdict, in the same
// transaction (runs.Store.Finish), so they are what the tables said when
// the verdict was written. The zero value uses the generic tables only.
type Labels struct {
	// Labeler holds the taxonomy and feature tables.
	Labeler refinement.Labeler
	// Domain gives the domain of a task and answer when the lane wrote no
	// domain artifact (an answer without a program, a lane without a
	// classifier); nil leaves the domain empty then.
	Domain func(t runs.Task, answer string) string
}

// Of returns the labels of v, the verdict of attempt a on task t;
// artifacts are the lane's artifacts (the domain artifact is read from
// them).
func (l Labels) Of(t runs.Task, a runs.Attempt, v runs.Verdict, artifacts map[string][]byte) *runs.VerdictLabels {
	domain := strings.TrimSpace(string(artifacts[DomainArtifact]))
	if domain == "" && l.Domain != nil {
		domain = l.Domain(t, a.Answer)
	}
	out := l.Labeler.Labels(runs.Result{Task: t, Attempt: a, Verdict: v}, domain)
	return &out
}

// OfStored is Of for a verdict whose artifacts are already in blobs (a
// rescore): the domain artifact is read back from there.
func (l Labels) OfStored(blobs *runs.Blobs, t runs.Task, a runs.Attempt, v runs.Verdict) *runs.VerdictLabels {
	var arts map[string][]byte
	if h, ok := v.Artifacts[DomainArtifact]; ok {
		if b, err := blobs.Get(h); err == nil {
			arts = map[string][]byte{DomainArtifact: b}
		}
	}
	return l.Of(t, a, v, arts)
}

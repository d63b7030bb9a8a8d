// This file holds verdict labels: the failure label, construct features,
// categories and domain computed once, when a verdict is stored
// (runs.VerdictLabels), and read back by the statistics, the example
// picker and the report. Verdicts stored before labels existed have none;
// for them everything is computed from the result as before.

package refinement

import (
	"slices"

	"github.com/kiln-dev/kiln/runs"
)

// Labeler computes the labels stored with a verdict. The zero value uses
// the generic tables (no lane's own); Lanes.Labeler gives the lanes'. It
// is safe for concurrent use.
type Labeler struct {
	// Taxonomy and Featurizer default to the generic tables.
	Taxonomy   *Taxonomy
	Featurizer *Featurizer
}

// Labels computes r's labels from r itself (stored labels are ignored):
// the fine failure label of the verdict (with the answer for the
// suspicion hook), the construct features of the task's source (for a
// prompt-only lane, of the answer; see Featurizer.FeaturesOf), the task's
// categories, and domain (the caller's: the lane's classifier, "" when
// none).
func (l Labeler) Labels(r runs.Result, domain string) runs.VerdictLabels {
	tax, feat := l.Taxonomy, l.Featurizer
	if tax == nil {
		tax = Generic().Taxonomy
	}
	if feat == nil {
		feat = Generic().Features
	}
	lab := tax.classify(r.Task, r.Verdict, r.Attempt.Answer)
	out := runs.VerdictLabels{
		Class:          r.Verdict.Class,
		DiagnosticKind: lab.Name,
		Evidence:       lab.Evidence,
		Suspicion:      lab.Suspicion,
		Features:       feat.featuresOf(r),
		Categories:     slices.Clone(r.Task.Categories),
		Domain:         domain,
	}
	if out.Features == nil {
		out.Features = []string{}
	}
	if out.Categories == nil {
		out.Categories = []string{}
	}
	return out
}

// StoredLabel returns the fine label stored with v, and false when v has
// no stored labels.
func StoredLabel(v runs.Verdict) (Label, bool) {
	if v.Labels == nil || v.Labels.DiagnosticKind == "" {
		return Label{}, false
	}
	return Label{Name: v.Labels.DiagnosticKind, Class: v.Class, Stage: v.Stage,
		Evidence: v.Labels.Evidence, Suspicion: v.Labels.Suspicion}, true
}

// ByDomain groups by the domain stored in the verdict's labels; results
// without one go to NoGroup. fallback, when set, gives the domain of a
// result without stored labels (a verdict stored before labels were).
func ByDomain(fallback func(runs.Result) string) KeyFunc {
	return func(r runs.Result) []string {
		d := ""
		if r.Verdict.Labels != nil {
			d = r.Verdict.Labels.Domain
		} else if fallback != nil {
			d = fallback(r)
		}
		if d == "" {
			return nil
		}
		return []string{d}
	}
}

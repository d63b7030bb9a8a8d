package engine

import (
	"context"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// CampaignReport is what kiln report shows (its JSON).
type CampaignReport struct {
	Campaign string                     `json:"campaign"`
	Name     string                     `json:"name"`
	Lane     string                     `json:"lane"`
	State    runs.CampaignState         `json:"state"`
	Note     string                     `json:"note,omitempty"`
	Parent   string                     `json:"parent,omitempty"`
	Round    int                        `json:"round"`
	Stats    []refinement.CategoryStats `json:"categories"`
	// Speed are the kernel-speed figures (exec, fast_p, geomean speedup,
	// pass@k) per category, for lanes that measure them.
	Speed []refinement.SpeedStats `json:"speed,omitempty"`
	// Refinement is the per-round report (every round, whatever --round).
	Refinement refinement.Report `json:"refinement"`
	Decisions  []RoundRecord     `json:"decisions,omitempty"`
	// SynthesisCost sums the synthesiser calls of every round.
	SynthesisCost SynthCost `json:"synthesis_cost"`
	// ModelFaults counts the solver's failed model calls by class over
	// every run of the campaign, retried ones included.
	ModelFaults map[string]int `json:"model_faults"`
	// FaultedAttempts counts the selected results whose attempt a failed
	// model call ended, and KeptClass those of them that keep the class
	// of the reply judged before the failure (a repair turn failed); the
	// others are model_error.
	FaultedAttempts FaultedAttempts `json:"faulted_attempts"`
	// TaskFaults lists the selected results whose task's own reference
	// failed: not the answer's fault, neither a pass nor a fail, in task
	// key order.
	TaskFaults []TaskFault `json:"task_faults"`
}

// FaultedAttempts count attempts that a failed model call ended.
type FaultedAttempts struct {
	Total     int `json:"total"`
	KeptClass int `json:"kept_class"`
}

// TaskFault is one result whose task is at fault.
type TaskFault struct {
	TaskKey    string   `json:"task_key"`
	Round      int      `json:"round"`
	Categories []string `json:"categories"`
	Stage      string   `json:"stage"`
	// Reason is the first line of the verdict's diagnostic.
	Reason string `json:"reason"`
}

// taskFaultsAndModelFaults lists the task faults of results and counts
// the attempts a model fault ended.
func taskFaultsAndModelFaults(results []runs.Result) ([]TaskFault, FaultedAttempts) {
	faults := []TaskFault{}
	var fa FaultedAttempts
	for _, r := range results {
		if r.Attempt.Error != "" {
			fa.Total++
			if r.Verdict.Class != string(tools.ClassModelError) {
				fa.KeptClass++
			}
		}
		if !r.Verdict.TaskFault() {
			continue
		}
		reason, _, _ := strings.Cut(r.Verdict.Diagnostic, "\n")
		faults = append(faults, TaskFault{TaskKey: r.Task.Key, Round: r.Task.Round, Categories: r.Task.Categories,
			Stage: r.Verdict.Stage, Reason: strings.TrimSpace(reason)})
	}
	sort.SliceStable(faults, func(i, j int) bool { return faults[i].TaskKey < faults[j].TaskKey })
	return faults, fa
}

// SynthCost sums synthesiser calls.
type SynthCost struct {
	Calls            int   `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	LatencyMS        int64 `json:"latency_ms"`
}

func (s *SynthCost) add(r SynthRecord) {
	if r.ReplyBlob == "" && r.Error == "" {
		return
	}
	s.Calls++
	s.PromptTokens += int64(r.PromptTokens)
	s.CompletionTokens += int64(r.CompletionTokens)
	s.ReasoningTokens += int64(r.ReasoningTokens)
	s.LatencyMS += r.LatencyMS
}

// BuildCampaignReport reads everything kiln report shows of camp: the
// per-category figures of round (every round when < 0), the model faults,
// the decisions of every round and the per-round refinement report, with
// the lanes' tables (rules).
func BuildCampaignReport(ctx context.Context, st *runs.Store, camp runs.Campaign, round int, rules *refinement.Lanes) (CampaignReport, error) {
	rep := CampaignReport{Campaign: camp.ID, Name: camp.Name, Lane: camp.Lane, State: camp.State, Note: camp.Note,
		Parent: camp.Parent, Round: round}
	all, err := st.Results(ctx, camp.ID, -1)
	if err != nil {
		return rep, err
	}
	sel := all
	if round >= 0 {
		sel = nil
		for _, r := range all {
			if r.Task.Round == round {
				sel = append(sel, r)
			}
		}
	}
	rep.Stats = refinement.Stats(sel)
	rep.Speed = refinement.SpeedStatsBy(sel, refinement.ByCategory)
	rep.TaskFaults, rep.FaultedAttempts = taskFaultsAndModelFaults(sel)
	if rep.ModelFaults, err = st.Faults(ctx, camp.ID); err != nil {
		return rep, err
	}
	recs, err := st.Rounds(ctx, camp.ID)
	if err != nil {
		return rep, err
	}
	chosen := map[int][]refinement.Choice{}
	for _, rr := range recs {
		d, err := DecodeRoundRecord(rr.Record)
		if err != nil {
			return rep, err
		}
		if !rr.Final {
			continue // a transition in progress: not decided yet
		}
		rep.Decisions = append(rep.Decisions, d)
		if d.NextRound > 0 {
			chosen[d.Round] = d.Choices
		}
		for _, s := range d.Synth {
			rep.SynthesisCost.add(s)
		}
	}
	rep.Refinement = refinement.BuildReport(refinement.ReportInput{Lane: camp.Lane, Results: all, Chosen: chosen,
		DomainOf: storedDomain(st.Blobs()), Lanes: rules})
	return rep, nil
}

// storedDomain reads the domain a lane recorded as an artifact, for
// verdicts stored before verdict labels were ("" when there is none).
func storedDomain(blobs *runs.Blobs) func(runs.Result) string {
	return func(r runs.Result) string {
		h, ok := r.Verdict.Artifacts[DomainArtifact]
		if !ok {
			return ""
		}
		b, err := blobs.Get(h)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
}

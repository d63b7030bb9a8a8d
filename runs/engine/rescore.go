package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// RescoreSummary says what a rescore changed.
type RescoreSummary struct {
	Total int `json:"total"`
	// Before and After count the rescored verdicts by outcome
	// (runs.Verdict.Outcome), before and after: pass is complete passes
	// only.
	Before OutcomeCounts `json:"before"`
	After  OutcomeCounts `json:"after"`
	// Changed counts verdicts whose outcome or class changed.
	Changed int `json:"changed"`
	// FromPending says what became of the verdicts that were pending.
	FromPending PendingFate `json:"from_pending"`
}

// OutcomeCounts count verdicts by outcome.
type OutcomeCounts struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Pending    int `json:"pending"`
	TaskFaults int `json:"task_faults"`
}

func (c *OutcomeCounts) add(o runs.Outcome) {
	switch o {
	case runs.OutcomePass:
		c.Pass++
	case runs.OutcomeFail:
		c.Fail++
	case runs.OutcomePending:
		c.Pending++
	case runs.OutcomeTaskFault:
		c.TaskFaults++
	}
}

// PendingFate says what pending verdicts became: a pass, a fail, a task
// fault, or still pending.
type PendingFate struct {
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	TaskFaults int `json:"task_faults"`
	Still      int `json:"still_pending"`
}

// RescoreOptions choose what a rescore does.
type RescoreOptions struct {
	// Concurrency bounds verifications in parallel (default 1).
	Concurrency int
	// PendingOnly completes the verdicts with pending stages (a GPU run
	// skipped on a CPU host) through the lane's tools.Completer, from the
	// artifacts stored with them, and leaves every other verdict alone: a
	// GPU host without the compilers can do it.
	PendingOnly bool
	// Labels computes the labels stored with each new revision (the
	// lanes' tables; the zero value uses the generic ones).
	Labels Labels
}

// Rescore judges every stored answer of campaign id again with lane's current
// verifier, without calling any model, and stores each result as the next
// verdict revision. Attempts without an answer are judged no_answer again.
// With PendingOnly, only verdicts with pending stages are touched, and they
// are completed (tools.Completer), their other stages not redone.
func Rescore(ctx context.Context, st *runs.Store, id string, lane tools.Lane, opt RescoreOptions,
	toolchain map[string]string, policy string, log *slog.Logger) (RescoreSummary, error) {
	c, err := st.Campaign(ctx, id)
	if err != nil {
		return RescoreSummary{}, fmt.Errorf("rescore: %w", err)
	}
	results, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		return RescoreSummary{}, fmt.Errorf("rescore: %w", err)
	}
	concurrency := max(opt.Concurrency, 1)
	completer, _ := lane.(tools.Completer)
	if opt.PendingOnly && completer == nil {
		return RescoreSummary{}, fmt.Errorf("rescore: lane %s has no stages that can be left pending", lane.Name())
	}
	var (
		mu  sync.Mutex
		sum RescoreSummary
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, r := range results {
		prev, pending, err := storedPending(r.Verdict, opt.PendingOnly)
		if err != nil {
			return sum, fmt.Errorf("rescore task %s: %w", r.Task.Key, err)
		}
		if opt.PendingOnly && !pending {
			continue
		}
		sum.Total++
		g.Go(func() error {
			if pending {
				// Artifacts (executables) are loaded here, one verdict per
				// worker at a time, not all up front.
				if err := loadArtifacts(st.Blobs(), r.Verdict, &prev); err != nil {
					return fmt.Errorf("rescore task %s: %w", r.Task.Key, err)
				}
				item := tools.Item{Lane: r.Task.Lane, Files: r.Task.Files, Meta: r.Task.Meta}
				tv, err := completer.Complete(gctx, item, prev)
				if err != nil {
					return fmt.Errorf("complete task %s: %w", r.Task.Key, err)
				}
				// The record keeps the toolchains that built it; the host
				// that ran the pending stages is added under "completed_by.".
				tc := maps.Clone(r.Verdict.Toolchain)
				if tc == nil {
					tc = map[string]string{}
				}
				for k, v := range toolchain {
					tc["completed_by."+k] = v
				}
				return record(gctx, st, opt.Labels, r, ToVerdict(st.Blobs(), tv, tc, policy, log), &mu, &sum)
			}
			// An attempt a model failure ended keeps the class of its last
			// judged reply: its answer is judged again, or, when the reply
			// held none, it stays no_answer; only an attempt judged a model
			// error (no reply judged) stays one.
			tv := tools.Verdict{Class: tools.ClassNoAnswer, Stage: "extract",
				Stages: []tools.Stage{{Name: "extract", Detail: "no answer was stored"}}}
			switch {
			case r.Attempt.Answer != "":
				item := tools.Item{Lane: r.Task.Lane, Files: r.Task.Files, Meta: r.Task.Meta}
				var verr error
				tv, verr = lane.Verify(gctx, item, r.Attempt.Answer)
				if verr != nil {
					return fmt.Errorf("rescore task %s: %w", r.Task.Key, verr)
				}
			case r.Attempt.Error != "" && r.Verdict.Class == string(tools.ClassModelError):
				tv = tools.Verdict{Class: tools.ClassModelError, Stage: "model", Diagnostic: r.Attempt.Error}
			}
			return record(gctx, st, opt.Labels, r, ToVerdict(st.Blobs(), tv, toolchain, policy, log), &mu, &sum)
		})
	}
	err = g.Wait()
	return sum, err
}

// record stores v as the next revision of r's verdict and counts it.
func record(ctx context.Context, st *runs.Store, labels Labels, r runs.Result, v runs.Verdict, mu *sync.Mutex, sum *RescoreSummary) error {
	v.Labels = labels.OfStored(st.Blobs(), r.Task, r.Attempt, v)
	if _, err := st.AddRescore(ctx, r.Attempt.ID, v); err != nil {
		return fmt.Errorf("rescore task %s: %w", r.Task.Key, err)
	}
	before, after := r.Verdict.Outcome(), v.Outcome()
	mu.Lock()
	defer mu.Unlock()
	sum.Before.add(before)
	sum.After.add(after)
	if before != after || v.Class != r.Verdict.Class {
		sum.Changed++
	}
	if before == runs.OutcomePending {
		switch after {
		case runs.OutcomePass:
			sum.FromPending.Pass++
		case runs.OutcomeFail:
			sum.FromPending.Fail++
		case runs.OutcomeTaskFault:
			sum.FromPending.TaskFaults++
		case runs.OutcomePending:
			sum.FromPending.Still++
		}
	}
	return nil
}

// storedPending reads a stored verdict back as a lane verdict (without its
// artifacts) when it has pending stages and want is set; pending is false
// otherwise.
func storedPending(v runs.Verdict, want bool) (tools.Verdict, bool, error) {
	if !want || len(v.Stages) == 0 {
		return tools.Verdict{}, false, nil
	}
	tv := tools.Verdict{Pass: v.Pass, Class: tools.FailureClass(v.Class), Stage: v.Stage,
		Diagnostic: v.Diagnostic, Measurements: v.Measurements}
	if err := json.Unmarshal(v.Stages, &tv.Stages); err != nil {
		return tools.Verdict{}, false, fmt.Errorf("verdict %s: stages: %w", v.ID, err)
	}
	return tv, len(tools.PendingStages(tv)) > 0, nil
}

// loadArtifacts reads v's artifacts from the blob store into tv.
func loadArtifacts(blobs *runs.Blobs, v runs.Verdict, tv *tools.Verdict) error {
	tv.Artifacts = map[string][]byte{}
	for name, h := range v.Artifacts {
		b, err := blobs.Get(h)
		if err != nil {
			return fmt.Errorf("verdict %s: artifact %s: %w", v.ID, name, err)
		}
		tv.Artifacts[name] = b
	}
	return nil
}

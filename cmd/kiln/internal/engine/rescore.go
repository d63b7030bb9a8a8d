package engine

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// RescoreSummary says what a rescore changed.
type RescoreSummary struct {
	Total      int `json:"total"`
	PassBefore int `json:"pass_before"`
	PassAfter  int `json:"pass_after"`
	Changed    int `json:"changed"` // verdicts whose pass or class changed
}

// Rescore judges every stored answer of campaign id again with lane's current
// verifier, without calling any model, and stores each result as the next
// verdict revision. Attempts without an answer are judged no_answer again.
func Rescore(ctx context.Context, st *runs.Store, id string, lane tools.Lane, concurrency int,
	toolchain map[string]string, policy string, log *slog.Logger) (RescoreSummary, error) {
	c, err := st.Campaign(ctx, id)
	if err != nil {
		return RescoreSummary{}, fmt.Errorf("rescore: %w", err)
	}
	results, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		return RescoreSummary{}, fmt.Errorf("rescore: %w", err)
	}
	if concurrency < 1 {
		concurrency = 1
	}
	var (
		mu  sync.Mutex
		sum = RescoreSummary{Total: len(results)}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for _, r := range results {
		g.Go(func() error {
			tv := tools.Verdict{Class: tools.ClassNoAnswer, Stage: "extract",
				Stages: []tools.Stage{{Name: "extract", Detail: "no answer was stored"}}}
			if r.Attempt.Error != "" && r.Attempt.Answer == "" {
				tv = tools.Verdict{Class: tools.ClassModelError, Stage: "model", Diagnostic: r.Attempt.Error}
			} else if r.Attempt.Answer != "" {
				item := tools.Item{Lane: r.Task.Lane, Files: r.Task.Files, Meta: r.Task.Meta}
				var verr error
				tv, verr = lane.Verify(gctx, item, r.Attempt.Answer)
				if verr != nil {
					return fmt.Errorf("rescore task %s: %w", r.Task.Key, verr)
				}
			}
			v := ToVerdict(st.Blobs(), tv, toolchain, policy, log)
			if _, err := st.AddRescore(gctx, r.Attempt.ID, v); err != nil {
				return fmt.Errorf("rescore task %s: %w", r.Task.Key, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if r.Verdict.Pass {
				sum.PassBefore++
			}
			if v.Pass {
				sum.PassAfter++
			}
			if v.Pass != r.Verdict.Pass || v.Class != r.Verdict.Class {
				sum.Changed++
			}
			return nil
		})
	}
	err = g.Wait()
	return sum, err
}

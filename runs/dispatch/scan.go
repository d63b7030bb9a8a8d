package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/runs/web"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

func (d *Dispatcher) scanLoop(ctx context.Context) {
	defer close(d.done)
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		if n, err := d.scan(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("dispatch: scan pending verdicts", "err", err)
		} else if n > 0 {
			d.log.Info("dispatch: pending verdicts sent to workers", "jobs", n)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// scan publishes a complete job for each pending verdict not yet sent, and
// a retry for each whose last try failed and whose backoff has passed; it
// returns how many jobs it published.
func (d *Dispatcher) scan(ctx context.Context) (int, error) {
	camps, err := d.st.ListCampaigns(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var (
		errs    []error
		retries []web.Retry
	)
	now := time.Now()
	defer func() {
		if ctx.Err() == nil {
			d.viewMu.Lock()
			d.retries, d.scanned = retries, now
			d.viewMu.Unlock()
		}
	}()
	for _, camp := range camps {
		k, err := d.kit(camp.Lane)
		if err != nil || k.Capability == "" {
			continue // a lane this build lacks, or one that leaves nothing pending
		}
		lim, ok := d.limits[camp.ID]
		if !ok {
			if lim, err = d.deps.Limits(camp); err != nil {
				errs = append(errs, err)
				continue
			}
			d.limits[camp.ID] = lim
		}
		cjs, err := engine.PendingCompletions(ctx, d.st, camp.ID, lim, d.q.Artifacts(), func(verdictID string) bool {
			return d.published[engine.CompleteJobPrefix+verdictID]
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("campaign %s: %w", camp.ID, err))
			continue
		}
		for _, cj := range cjs {
			if err := d.publish(ctx, k, cj, 1); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
		}
		rn, err := d.scanRetries(ctx, camp, k, lim, now, &retries)
		n += rn
		if err != nil {
			errs = append(errs, fmt.Errorf("campaign %s: retries: %w", camp.ID, err))
		}
	}
	return n, errors.Join(errs...)
}

// retryPolicy is how a verdict whose complete job failed is sent again.
type retryPolicy struct {
	// Retries is how many tries follow the first (0: none).
	Retries int
	// After is the backoff before the first retry, doubled for each
	// further one.
	After time.Duration
}

// retryPlan is what comes next for a pending verdict whose job failed.
type retryPlan struct {
	// State: web.RetryWaiting (Try goes at Due), web.RetryExhausted (no
	// try left), "due" (Try goes now), "" (nothing: no try failed, or
	// one finished).
	State string
	// Try is the next try's number (from 2); Failed how many tries failed.
	Try, Failed int
	Due         time.Time
	// Last is the latest try's result.
	Last runs.JobResult
}

const retryDue = "due"

// planRetry works out the next try of a pending verdict from the stored
// results of its tries (job ids engine.CompleteJobID(verdictID, n)) and
// the time: try n+1 goes After*2^(n-1) after try n's failure was stored,
// while n <= p.Retries. It depends on the stored rows alone, so that a
// daemon restart neither resets the count nor repeats a try.
func planRetry(verdictID string, results []runs.JobResult, p retryPolicy, now time.Time) retryPlan {
	var plan retryPlan
	last := 0
	for _, r := range results {
		vid, try, ok := engine.CompleteJobTry(r.JobID)
		if !ok || vid != verdictID {
			continue
		}
		if r.Status == runs.JobDone {
			return retryPlan{Last: r} // a try finished: nothing to retry
		}
		plan.Failed++
		if try > last {
			last, plan.Last = try, r
		}
	}
	if last == 0 {
		return retryPlan{}
	}
	plan.Try = last + 1
	if last > p.Retries {
		plan.State = web.RetryExhausted
		return plan
	}
	backoff := p.After
	for i := 1; i < last && backoff < 30*24*time.Hour; i++ {
		backoff *= 2
	}
	plan.Due = plan.Last.CreatedAt.Add(backoff)
	if now.Before(plan.Due) {
		plan.State = web.RetryWaiting
	} else {
		plan.State = retryDue
	}
	return plan
}

// scanRetries publishes the next try of each of the campaign's pending
// verdicts whose last try failed once its backoff has passed, under a new
// job id, and adds what it saw to view. It returns how many it published.
func (d *Dispatcher) scanRetries(ctx context.Context, camp runs.Campaign, k *kit.Kit, lim sandboxes.Limits, now time.Time,
	view *[]web.Retry) (int, error) {
	rs, err := d.st.TriedPendingResults(ctx, camp.ID, engine.CompleteJobPrefix)
	if err != nil {
		return 0, err
	}
	policy := retryPolicy{Retries: d.cfg.Retries, After: d.cfg.RetryAfter}
	n := 0
	var errs []error
	for _, r := range rs {
		jrs, err := d.st.JobResultsWithPrefix(ctx, engine.CompleteJobPrefix+r.Verdict.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plan := planRetry(r.Verdict.ID, jrs, policy, now)
		if plan.State == "" {
			continue
		}
		row := web.Retry{Campaign: camp.ID, TaskKey: r.Task.Key, AttemptID: r.Attempt.ID, VerdictID: r.Verdict.ID,
			Capability: k.Capability, Tries: plan.Failed, State: plan.State, LastJob: plan.Last.JobID,
			LastStatus: plan.Last.Status, LastWorker: plan.Last.Worker, LastReason: plan.Last.Reason, LastAt: plan.Last.CreatedAt}
		switch plan.State {
		case web.RetryExhausted:
			if !d.exhausted[r.Verdict.ID] {
				d.exhausted[r.Verdict.ID] = true
				d.log.Warn("dispatch: pending verdict not completed: every try failed; finish it by hand with "+
					"`kiln rescore --pending "+camp.ID+"` on a host with "+k.Capability+" (same --data), "+
					"or raise --dispatch-retries and restart",
					"campaign", camp.ID, "task", r.Task.Key, "verdict", r.Verdict.ID, "tries", plan.Failed,
					"last_job", plan.Last.JobID, "reason", plan.Last.Reason)
			}
		case web.RetryWaiting:
			row.NextJob, row.NextAt = engine.CompleteJobID(r.Verdict.ID, plan.Try), plan.Due
		case retryDue:
			id := engine.CompleteJobID(r.Verdict.ID, plan.Try)
			row.State, row.NextJob, row.NextAt = web.RetrySent, id, plan.Due
			if d.published[id] {
				break // sent in this daemon's life: its result is not back yet
			}
			cj, ok, err := engine.CompletionOf(ctx, d.st, camp.ID, r, lim, d.q.Artifacts())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if !ok {
				continue
			}
			if err := d.publish(ctx, k, cj, plan.Try); err != nil {
				errs = append(errs, err)
				continue
			}
			n++
			d.log.Info("dispatch: failed job sent again", "job", id, "try", plan.Try, "of", policy.Retries+1,
				"task", r.Task.Key, "last_job", plan.Last.JobID, "last_status", plan.Last.Status, "reason", plan.Last.Reason)
		}
		*view = append(*view, row)
	}
	return n, errors.Join(errs...)
}

// publish publishes try (from 1) of the job completing cj's verdict.
func (d *Dispatcher) publish(ctx context.Context, k *kit.Kit, cj engine.CompleteJob, try int) error {
	b, err := json.Marshal(cj)
	if err != nil {
		return fmt.Errorf("complete job %s: %w", cj.VerdictID, err)
	}
	id := engine.CompleteJobID(cj.VerdictID, try)
	capability := jobCapability(k, cj.Item)
	if _, err := d.q.Publish(ctx, jobs.Job{ID: id, Kind: CompleteJobKind, Capability: capability, Payload: b}); err != nil {
		return err
	}
	d.published[id] = true
	d.log.Debug("dispatch: published", "job", id, "lane", k.Name, "capability", capability, "task", cj.TaskKey)
	return nil
}

// jobCapability is the capability a pending item's completion needs: the
// lane's, or the item's own where the kit says (kit.Kit.ItemCapability).
func jobCapability(k *kit.Kit, item tools.Item) string {
	if k.ItemCapability != nil {
		if c := k.ItemCapability(item); c != "" {
			return c
		}
	}
	return k.Capability
}

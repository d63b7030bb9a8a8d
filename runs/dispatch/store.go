package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// CompleteJobKind completes a pending verdict (engine.CompleteJob) with the
// lane's Completer: what `kiln rescore --pending` does, for one attempt.
const CompleteJobKind = "complete"

// ResultRecord is the stored record of a job's result.
func ResultRecord(r jobs.Result) runs.JobResult {
	jr := runs.JobResult{JobID: r.JobID, Kind: r.Kind, Status: runs.JobDone, Worker: r.Worker,
		Reason: r.Error, Deliveries: r.Deliveries, Result: r.Payload}
	switch {
	case r.Dead:
		jr.Status = runs.JobDead
	case !r.OK:
		jr.Status = runs.JobFailed
	}
	return jr
}

// store is the collector's StoreFunc: a finished complete job becomes the
// attempt's next verdict revision (with its job result, in one
// transaction); any other result (a failed or dead job, another kind) is
// recorded as a job result with its reason. Idempotent by job id.
func (d *Dispatcher) store(ctx context.Context, r jobs.Result) error {
	rec := ResultRecord(r)
	if r.Kind != CompleteJobKind || !r.OK {
		if _, err := d.st.RecordJob(ctx, rec); err != nil {
			return err
		}
		if !r.OK {
			d.log.Warn("dispatch: job failed", "job", r.JobID, "kind", r.Kind, "worker", r.Worker, "dead", r.Dead,
				"deliveries", r.Deliveries, "reason", r.Error)
		}
		return nil
	}
	var out engine.CompleteOutput
	if err := json.Unmarshal(r.Payload, &out); err != nil || out.AttemptID == "" || out.VerdictID == "" {
		// Retrying cannot cure it: record why and move on.
		rec.Status, rec.Reason = runs.JobFailed, fmt.Sprintf("malformed complete output from worker %s: %v", r.Worker, err)
		_, err := d.st.RecordJob(ctx, rec)
		return err
	}
	if _, err := d.st.JobResultOf(ctx, r.JobID); err == nil {
		return nil // a duplicate: the job has its result
	} else if !errors.Is(err, runs.ErrNotFound) {
		return err
	}
	// The verdict the job completed must still be its attempt's latest
	// revision: a late result of an older try, after another try (or
	// kiln rescore --pending) completed it, is recorded and makes no
	// second revision.
	vs, err := d.st.Verdicts(ctx, out.AttemptID)
	if err != nil {
		return err
	}
	idx := slices.IndexFunc(vs, func(v runs.Verdict) bool { return v.ID == out.VerdictID })
	if idx < 0 {
		// Its attempt or its campaign was deleted: storing it again later
		// cannot succeed.
		return jobs.Permanent(fmt.Errorf("store job %s: attempt %s has no verdict %s (deleted?)", r.JobID, out.AttemptID, out.VerdictID))
	}
	if latest := vs[len(vs)-1]; latest.ID != out.VerdictID {
		rec.Reason = fmt.Sprintf("superseded: verdict %s was already followed by revision %d (%s); this result made no revision",
			out.VerdictID, latest.Revision, latest.ID)
		if _, err := d.st.RecordJob(ctx, rec); err != nil {
			return err
		}
		d.log.Info("dispatch: late result of a completed verdict recorded without a revision", "job", r.JobID,
			"worker", r.Worker, "verdict", out.VerdictID, "latest", latest.ID)
		return nil
	}
	rec.Result = nil // the revision holds it
	policy := out.Policy
	if policy == "" {
		policy = "worker " + r.Worker + " (isolation not reported)"
	}
	stored, err := engine.StoreCompletion(ctx, d.st, d.labels, out, rec, d.q.Artifacts(), policy, d.log)
	if errors.Is(err, runs.ErrNotFound) {
		return jobs.Permanent(fmt.Errorf("store job %s: %w", r.JobID, err))
	}
	if err != nil {
		return err
	}
	if stored {
		d.log.Info("dispatch: pending verdict completed", "job", r.JobID, "worker", r.Worker, "pass", out.Verdict.Pass,
			"class", out.Verdict.Class)
	}
	return nil
}

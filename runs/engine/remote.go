package engine

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// CompleteJobPrefix starts the id of the job that completes a pending
// verdict: the prefix and the pending verdict's id, so that sending the
// same pending verdict twice is one job (runs/jobs drops the second
// publish, the store the second result). A later try after a failed one
// is a new job: the same id with "-try<n>" appended (CompleteJobID).
const CompleteJobPrefix = "complete-"

// CompleteJobID is the id of try n (from 1) of the job completing a
// pending verdict: complete-<verdict id>, then complete-<verdict id>-try2,
// -try3, ...
func CompleteJobID(verdictID string, try int) string {
	if try <= 1 {
		return CompleteJobPrefix + verdictID
	}
	return fmt.Sprintf("%s%s-try%d", CompleteJobPrefix, verdictID, try)
}

// CompleteJobTry parses a job id made by CompleteJobID: the verdict id and
// the try; ok is false for any other id.
func CompleteJobTry(jobID string) (verdictID string, try int, ok bool) {
	rest, ok := strings.CutPrefix(jobID, CompleteJobPrefix)
	if !ok || rest == "" {
		return "", 0, false
	}
	if i := strings.LastIndex(rest, "-try"); i > 0 {
		if n, err := strconv.Atoi(rest[i+len("-try"):]); err == nil && n >= 2 && strconv.Itoa(n) == rest[i+len("-try"):] {
			return rest[:i], n, true
		}
	}
	return rest, 1, true
}

// CompleteJob is the payload of a job that completes one pending verdict on
// a worker host (what `kiln rescore --pending` does for one attempt). It
// carries the task's item, the verdict without its artifacts, and the
// artifacts' SHA-256 names in the artifact store: no spec, no model
// endpoint, no key.
type CompleteJob struct {
	Campaign  string            `json:"campaign"`
	TaskKey   string            `json:"task_key"`
	AttemptID string            `json:"attempt_id"`
	VerdictID string            `json:"verdict_id"`
	Lane      string            `json:"lane"`
	Limits    sandboxes.Limits  `json:"limits"`
	Item      tools.Item        `json:"item"`
	Prev      tools.Verdict     `json:"prev"`
	Artifacts map[string]string `json:"artifacts"`
}

// CompleteOutput is a worker's output for a CompleteJob.
type CompleteOutput struct {
	AttemptID string            `json:"attempt_id"`
	VerdictID string            `json:"verdict_id"` // the pending verdict completed
	Verdict   tools.Verdict     `json:"verdict"`
	Artifacts map[string]string `json:"artifacts"` // name -> SHA-256 in the artifact store
	// Toolchain describes the worker host (recorded as completed_by.*).
	Toolchain map[string]string `json:"toolchain"`
	// Policy is the worker's sandbox isolation summary, recorded with the
	// new revision (the stages it ran ran there).
	Policy string `json:"policy,omitempty"`
}

// ArtifactStore moves artifacts between the daemon and a worker by SHA-256
// (runs/jobs.Artifacts).
type ArtifactStore interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, hash string) ([]byte, error)
}

// PendingCompletions returns a job for each of the campaign's pending
// verdicts not yet sent to a worker, with their artifacts put in art.
// Verdicts for which skip (when not nil) is true are left out before their
// artifacts are read (those this daemon has already published).
func PendingCompletions(ctx context.Context, st *runs.Store, campaignID string, limits sandboxes.Limits, art ArtifactStore,
	skip func(verdictID string) bool) ([]CompleteJob, error) {
	rs, err := st.PendingResults(ctx, campaignID, CompleteJobPrefix)
	if err != nil {
		return nil, err
	}
	out := make([]CompleteJob, 0, len(rs))
	for _, r := range rs {
		if skip != nil && skip(r.Verdict.ID) {
			continue
		}
		j, ok, err := CompletionOf(ctx, st, campaignID, r, limits, art)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, j)
		}
	}
	return out, nil
}

// CompletionOf returns the job that completes r's pending verdict, with
// its artifacts put in art; false when the verdict has no pending stage.
// (PendingCompletions calls it for the verdicts not yet sent; a retry of
// a failed job, for one of runs.Store.TriedPendingResults.)
func CompletionOf(ctx context.Context, st *runs.Store, campaignID string, r runs.Result, limits sandboxes.Limits,
	art ArtifactStore) (CompleteJob, bool, error) {
	prev, pending, err := storedPending(r.Verdict, true)
	if err != nil || !pending {
		return CompleteJob{}, false, err
	}
	for name, h := range r.Verdict.Artifacts {
		b, err := st.Blobs().Get(h)
		if err != nil {
			return CompleteJob{}, false, fmt.Errorf("pending task %s: artifact %s: %w", r.Task.Key, name, err)
		}
		if _, err := art.Put(ctx, b); err != nil {
			return CompleteJob{}, false, fmt.Errorf("pending task %s: %w", r.Task.Key, err)
		}
	}
	return CompleteJob{Campaign: campaignID, TaskKey: r.Task.Key, AttemptID: r.Attempt.ID,
		VerdictID: r.Verdict.ID, Lane: r.Task.Lane, Limits: limits,
		Item: tools.Item{Lane: r.Task.Lane, Files: r.Task.Files, Meta: r.Task.Meta},
		Prev: prev, Artifacts: maps.Clone(r.Verdict.Artifacts)}, true, nil
}

// RunCompletion runs a CompleteJob with the lane's Completer (on the worker).
func RunCompletion(ctx context.Context, lane tools.Lane, j CompleteJob, art ArtifactStore, toolchain map[string]string) (CompleteOutput, error) {
	completer, ok := lane.(tools.Completer)
	if !ok {
		return CompleteOutput{}, fmt.Errorf("complete: lane %s has no stages that can be left pending", lane.Name())
	}
	prev := j.Prev
	prev.Artifacts = map[string][]byte{}
	for name, h := range j.Artifacts {
		b, err := art.Get(ctx, h)
		if err != nil {
			return CompleteOutput{}, fmt.Errorf("complete task %s: artifact %s: %w", j.TaskKey, name, err)
		}
		prev.Artifacts[name] = b
	}
	tv, err := completer.Complete(ctx, j.Item, prev)
	if err != nil {
		return CompleteOutput{}, fmt.Errorf("complete task %s: %w", j.TaskKey, err)
	}
	out := CompleteOutput{AttemptID: j.AttemptID, VerdictID: j.VerdictID, Verdict: tv,
		Artifacts: map[string]string{}, Toolchain: toolchain}
	for name, b := range tv.Artifacts {
		h, err := art.Put(ctx, b)
		if err != nil {
			return CompleteOutput{}, fmt.Errorf("complete task %s: %w", j.TaskKey, err)
		}
		out.Artifacts[name] = h
	}
	out.Verdict.Artifacts = nil
	return out, nil
}

// StoreCompletion stores a worker's CompleteOutput as the next verdict
// revision of its attempt, with rec (the job's result) in the same
// transaction: false when the job already has a result (a duplicate),
// and nothing is written.
func StoreCompletion(ctx context.Context, st *runs.Store, labels Labels, out CompleteOutput, rec runs.JobResult,
	art ArtifactStore, policy string, log *slog.Logger) (bool, error) {
	if _, err := st.JobResultOf(ctx, rec.JobID); err == nil {
		return false, nil // known duplicate: skip fetching artifacts
	}
	vs, err := st.Verdicts(ctx, out.AttemptID)
	if err != nil {
		return false, err
	}
	var prev *runs.Verdict
	for i := range vs {
		if vs[i].ID == out.VerdictID {
			prev = &vs[i]
		}
	}
	if prev == nil {
		return false, fmt.Errorf("store completion: attempt %s has no verdict %s", out.AttemptID, out.VerdictID)
	}
	task, err := st.Task(ctx, prev.TaskID)
	if err != nil {
		return false, err
	}
	attempts, err := st.Attempts(ctx, task.ID)
	if err != nil {
		return false, err
	}
	var attempt runs.Attempt
	for _, a := range attempts {
		if a.ID == out.AttemptID {
			attempt = a
		}
	}
	tv := out.Verdict
	tv.Artifacts = map[string][]byte{}
	for name, h := range out.Artifacts {
		if st.Blobs().Has(h) {
			b, err := st.Blobs().Get(h)
			if err != nil {
				return false, err
			}
			tv.Artifacts[name] = b
			continue
		}
		b, err := art.Get(ctx, h)
		if err != nil {
			return false, fmt.Errorf("store completion: %w", err)
		}
		tv.Artifacts[name] = b
	}
	tc := maps.Clone(prev.Toolchain)
	if tc == nil {
		tc = map[string]string{}
	}
	for k, v := range out.Toolchain {
		tc["completed_by."+k] = v
	}
	v := ToVerdict(st.Blobs(), tv, tc, policy, log)
	v.Labels = labels.OfStored(st.Blobs(), task, attempt, v)
	_, stored, err := st.AddJobRescore(ctx, rec, out.AttemptID, v)
	return stored, err
}

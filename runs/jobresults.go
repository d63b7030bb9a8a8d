package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Job result statuses.
const (
	JobDone   = "done"   // the worker finished the job
	JobFailed = "failed" // the worker reported a failure (Reason)
	JobDead   = "dead"   // dead-lettered: never finished after its deliveries
)

// JobResult is the stored outcome of a job run by a worker host
// (runs/jobs). A job id has at most one: the first result stored wins and
// every later one (a redelivery, a worker that died after publishing) is
// dropped.
type JobResult struct {
	JobID      string    `json:"job_id"`
	Kind       string    `json:"kind"`
	Status     string    `json:"status"`
	Worker     string    `json:"worker"`
	Reason     string    `json:"reason,omitempty"`
	Deliveries int       `json:"deliveries"`
	VerdictID  string    `json:"verdict_id,omitempty"`
	Result     []byte    `json:"result,omitempty"` // the worker's output, JSON
	CreatedAt  time.Time `json:"created_at"`
}

func (r JobResult) check() error {
	switch {
	case r.JobID == "":
		return errors.New("job result: empty job id")
	case r.Status != JobDone && r.Status != JobFailed && r.Status != JobDead:
		return fmt.Errorf("job result %s: bad status %q", r.JobID, r.Status)
	}
	return nil
}

// insertJobResult inserts r inside tx unless its job id is there; it
// reports whether it did.
func (s *Store) insertJobResult(ctx context.Context, tx *sql.Tx, r JobResult) (bool, error) {
	res, err := rawJSON("job result", r.Result)
	if err != nil {
		return false, err
	}
	var verdict any
	if r.VerdictID != "" {
		verdict = r.VerdictID
	}
	x, err := tx.ExecContext(ctx, `INSERT INTO job_results
		(job_id, kind, status, worker, reason, deliveries, verdict_id, result, created_at)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (job_id) DO NOTHING`,
		r.JobID, r.Kind, r.Status, r.Worker, r.Reason, r.Deliveries, verdict, res, fmtTime(s.now()))
	if err != nil {
		return false, err
	}
	n, err := x.RowsAffected()
	return n == 1, err
}

// RecordJob stores a job's result (a job that makes no verdict, or one
// that failed). It reports false, and changes nothing, when the job id
// already has a result.
func (s *Store) RecordJob(ctx context.Context, r JobResult) (bool, error) {
	if err := r.check(); err != nil {
		return false, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("record job %s: %w", r.JobID, err)
	}
	defer tx.Rollback()
	ok, err := s.insertJobResult(ctx, tx, r)
	if err != nil {
		return false, fmt.Errorf("record job %s: %w", r.JobID, err)
	}
	if !ok {
		return false, nil
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("record job %s: %w", r.JobID, err)
	}
	return true, nil
}

// AddJobRescore stores v as the next verdict revision of an attempt (as
// AddRescore) together with the job's result, in one transaction: when
// the job id already has a result, nothing is written and it returns
// false, so a job never makes a second revision. r.VerdictID is set to
// the new revision.
func (s *Store) AddJobRescore(ctx context.Context, r JobResult, attemptID string, v Verdict) (Verdict, bool, error) {
	if err := r.check(); err != nil {
		return Verdict{}, false, err
	}
	vc, err := encodeVerdict(v)
	if err != nil {
		return Verdict{}, false, fmt.Errorf("job %s: rescore attempt %s: %w", r.JobID, attemptID, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Verdict{}, false, fmt.Errorf("job %s: %w", r.JobID, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM job_results WHERE job_id = ?`, r.JobID).Scan(&one)
	if err == nil {
		return Verdict{}, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Verdict{}, false, fmt.Errorf("job %s: %w", r.JobID, err)
	}
	if v, err = s.addRescoreTx(ctx, tx, attemptID, v, vc); err != nil {
		return Verdict{}, false, fmt.Errorf("job %s: %w", r.JobID, err)
	}
	r.VerdictID = v.ID
	if _, err := s.insertJobResult(ctx, tx, r); err != nil {
		return Verdict{}, false, fmt.Errorf("job %s: %w", r.JobID, err)
	}
	if err := tx.Commit(); err != nil {
		return Verdict{}, false, fmt.Errorf("job %s: %w", r.JobID, err)
	}
	return rescoreStored(v), true, nil
}

const jobResultCols = `job_id, kind, status, worker, reason, deliveries, verdict_id, result, created_at`

func scanJobResult(sc scanner) (JobResult, error) {
	var (
		r               JobResult
		verdict, result sql.NullString
		created         sql.NullString
	)
	if err := sc.Scan(&r.JobID, &r.Kind, &r.Status, &r.Worker, &r.Reason, &r.Deliveries, &verdict, &result, &created); err != nil {
		return JobResult{}, err
	}
	r.VerdictID = verdict.String
	r.Result = rawBytes(result)
	var err error
	r.CreatedAt, err = parseTime(created)
	return r, err
}

// JobResultOf returns a job's stored result; ErrNotFound if it has none.
func (s *Store) JobResultOf(ctx context.Context, jobID string) (JobResult, error) {
	r, err := scanJobResult(s.r.QueryRowContext(ctx, `SELECT `+jobResultCols+` FROM job_results WHERE job_id = ?`, jobID))
	if err != nil {
		return JobResult{}, fmt.Errorf("job %s: %w", jobID, notFound(err))
	}
	return r, nil
}

// JobResults returns the stored job results of one kind ("" for all), in
// the order they were stored.
func (s *Store) JobResults(ctx context.Context, kind string) ([]JobResult, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+jobResultCols+` FROM job_results
		WHERE ? = '' OR kind = ? ORDER BY created_at, job_id`, kind, kind)
	if err != nil {
		return nil, fmt.Errorf("job results: %w", err)
	}
	defer rows.Close()
	var out []JobResult
	for rows.Next() {
		r, err := scanJobResult(rows)
		if err != nil {
			return nil, fmt.Errorf("job results: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PendingResults returns the campaign's judged results whose latest
// verdict is pending (stages left for another host) and not yet handed to
// a job: neither the subject of a stored job result (job id
// jobPrefix+verdict id) nor itself stored by a job (a completion that left
// stages pending again is not sent round again). In claim order.
func (s *Store) PendingResults(ctx context.Context, campaignID, jobPrefix string) ([]Result, error) {
	return s.pendingResults(ctx, campaignID, jobPrefix, "NOT EXISTS")
}

// TriedPendingResults returns the campaign's judged results whose latest
// verdict is still pending although a job was sent for it and has a
// stored result (job id jobPrefix+verdict id: its first try failed or was
// dead-lettered), not itself stored by a job: the candidates for another
// try. In claim order.
func (s *Store) TriedPendingResults(ctx context.Context, campaignID, jobPrefix string) ([]Result, error) {
	return s.pendingResults(ctx, campaignID, jobPrefix, "EXISTS")
}

func (s *Store) pendingResults(ctx context.Context, campaignID, jobPrefix, sent string) ([]Result, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+taskCols+`, `+attemptCols+`, `+verdictColsSQL+`
	FROM tasks t
	JOIN attempts a ON a.id = t.judged_attempt_id
	JOIN verdicts v ON v.attempt_id = a.id
		AND v.revision = (SELECT MAX(revision) FROM verdicts WHERE attempt_id = a.id)
	WHERE t.campaign_id = ? AND t.state = 'done' AND t.outcome = 'pending'
		AND `+sent+` (SELECT 1 FROM job_results j WHERE j.job_id = ? || v.id)
		AND NOT EXISTS (SELECT 1 FROM job_results j WHERE j.verdict_id = v.id)
	ORDER BY t.seq`, campaignID, jobPrefix)
	if err != nil {
		return nil, fmt.Errorf("pending results: %w", err)
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			return nil, fmt.Errorf("pending results: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// JobResultsWithPrefix returns the stored results of the jobs whose id
// starts with prefix (a verdict's tries: complete-<verdict id>,
// complete-<verdict id>-try2, ...), in the order they were stored.
func (s *Store) JobResultsWithPrefix(ctx context.Context, prefix string) ([]JobResult, error) {
	if prefix == "" {
		return s.JobResults(ctx, "")
	}
	// A range on the primary key: every id from prefix up to prefix with
	// its last byte incremented.
	end := []byte(prefix)
	end[len(end)-1]++
	rows, err := s.r.QueryContext(ctx, `SELECT `+jobResultCols+` FROM job_results
		WHERE job_id >= ? AND job_id < ? AND substr(job_id, 1, ?) = ? ORDER BY created_at, job_id`,
		prefix, string(end), len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("job results %s*: %w", prefix, err)
	}
	defer rows.Close()
	var out []JobResult
	for rows.Next() {
		r, err := scanJobResult(rows)
		if err != nil {
			return nil, fmt.Errorf("job results %s*: %w", prefix, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// JobResultCounts counts the stored job results by status (JobDone,
// JobFailed, JobDead).
func (s *Store) JobResultCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT status, COUNT(*) FROM job_results GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("job result counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			status string
			n      int
		)
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("job result counts: %w", err)
		}
		out[status] = n
	}
	return out, rows.Err()
}

// LatestJobFailures returns the n latest failed or dead job results,
// newest first.
func (s *Store) LatestJobFailures(ctx context.Context, n int) ([]JobResult, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+jobResultCols+` FROM job_results
		WHERE status <> 'done' ORDER BY created_at DESC, job_id DESC LIMIT ?`, n)
	if err != nil {
		return nil, fmt.Errorf("job failures: %w", err)
	}
	defer rows.Close()
	var out []JobResult
	for rows.Next() {
		r, err := scanJobResult(rows)
		if err != nil {
			return nil, fmt.Errorf("job failures: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const (
	taskColsBare = `id, campaign_id, round, key, lane, files, meta, categories, prompt, state, leases, created_at`
	taskCols     = `t.id, t.campaign_id, t.round, t.key, t.lane, t.files, t.meta, t.categories, t.prompt, t.state, t.leases, t.created_at`
)

func scanTask(sc scanner, extra ...any) (Task, error) {
	var (
		t                        Task
		files, meta, cats, state string
		created                  sql.NullString
	)
	dest := append([]any{&t.ID, &t.CampaignID, &t.Round, &t.Key, &t.Lane, &files, &meta, &cats, &t.Prompt,
		&state, &t.Leases, &created}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return Task{}, err
	}
	t.State = TaskState(state)
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return Task{}, err
	}
	if err := unmarshalText(files, &t.Files); err != nil {
		return Task{}, fmt.Errorf("task %s files: %w", t.ID, err)
	}
	if err := unmarshalText(meta, &t.Meta); err != nil {
		return Task{}, fmt.Errorf("task %s meta: %w", t.ID, err)
	}
	if err := unmarshalText(cats, &t.Categories); err != nil {
		return Task{}, fmt.Errorf("task %s categories: %w", t.ID, err)
	}
	return t, nil
}

// AddTasks inserts tasks into a campaign in one transaction, in the given
// order (which is the order Claim hands them out). Tasks whose Key already
// exists in the campaign (or earlier in the same batch) are skipped, so
// AddTasks is idempotent. IDs, state (queued), lease count (0) and creation
// time are assigned by the store; an empty Lane takes the campaign's lane.
// It returns how many tasks were added.
func (s *Store) AddTasks(ctx context.Context, campaignID string, tasks []Task) (int, error) {
	for i, t := range tasks {
		if t.Key == "" {
			return 0, fmt.Errorf("add tasks: task %d has an empty key", i)
		}
		if t.Round < 0 {
			return 0, fmt.Errorf("add tasks: task %q has negative round %d", t.Key, t.Round)
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("add tasks: %w", err)
	}
	defer tx.Rollback()
	added, err := s.addTasks(ctx, tx, campaignID, tasks)
	if err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("add tasks: %w", err)
	}
	s.log.Debug("tasks added", "run", campaignID, "added", added, "offered", len(tasks))
	return added, nil
}

// addTasks inserts tasks inside tx (see AddTasks; keys and rounds are
// checked by the caller).
func (s *Store) addTasks(ctx context.Context, tx *sql.Tx, campaignID string, tasks []Task) (int, error) {
	var lane string
	if err := tx.QueryRowContext(ctx, `SELECT lane FROM campaigns WHERE id = ?`, campaignID).Scan(&lane); err != nil {
		return 0, fmt.Errorf("add tasks: campaign %s: %w", campaignID, notFound(err))
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO tasks
		(id, campaign_id, round, key, lane, files, meta, categories, prompt, state, leases, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,'queued',0,?)
		ON CONFLICT (campaign_id, key) DO NOTHING`)
	if err != nil {
		return 0, fmt.Errorf("add tasks: %w", err)
	}
	defer stmt.Close()
	now := fmtTime(s.now())
	added := 0
	for _, t := range tasks {
		if t.Lane == "" {
			t.Lane = lane
		}
		files, err := jsonText(nonNilMap(t.Files))
		if err != nil {
			return 0, fmt.Errorf("add tasks: %q files: %w", t.Key, err)
		}
		meta, err := jsonText(nonNilMap(t.Meta))
		if err != nil {
			return 0, fmt.Errorf("add tasks: %q meta: %w", t.Key, err)
		}
		cats := t.Categories
		if cats == nil {
			cats = []string{}
		}
		catText, err := jsonText(cats)
		if err != nil {
			return 0, fmt.Errorf("add tasks: %q categories: %w", t.Key, err)
		}
		res, err := stmt.ExecContext(ctx, newID(), campaignID, t.Round, t.Key, t.Lane, files, meta, catText, t.Prompt, now)
		if err != nil {
			return 0, fmt.Errorf("add tasks: %q: %w", t.Key, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("add tasks: %w", err)
		}
		added += int(n)
	}
	return added, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Task returns one task by id.
func (s *Store) Task(ctx context.Context, id string) (Task, error) {
	t, err := scanTask(s.r.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks t WHERE t.id = ?`, id))
	if err != nil {
		return Task{}, fmt.Errorf("task %s: %w", id, notFound(err))
	}
	return t, nil
}

// Tasks returns a campaign's tasks of one round (round < 0: all rounds) in
// claim order.
func (s *Store) Tasks(ctx context.Context, campaignID string, round int) ([]Task, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks t
		WHERE t.campaign_id = ? AND (? < 0 OR t.round = ?) ORDER BY t.seq`, campaignID, round, round)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	return out, nil
}

// Claim leases the oldest claimable task of the campaign to worker for ttl.
// A task is claimable when it is queued, or leased with an expired lease
// (its worker is presumed dead; its lease becomes not current). The task's
// lease count is incremented and becomes the lease's attempt Number. ErrNoTask
// means nothing is claimable now.
func (s *Store) Claim(ctx context.Context, campaignID, worker string, ttl time.Duration) (*Lease, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("claim: ttl must be positive")
	}
	now := s.now()
	expires := now.Add(ttl)
	// One statement, so it is atomic on its own. The candidate is the
	// smaller seq of the oldest queued task and the oldest expired lease;
	// each side is one index range scan on tasks_claim.
	row := s.w.QueryRowContext(ctx, `UPDATE tasks
		SET state = 'leased', leases = leases + 1, lease_worker = ?, lease_expires = ?
		WHERE seq = (
			SELECT seq FROM (
				SELECT seq FROM (SELECT seq FROM tasks
					WHERE campaign_id = ? AND state = 'queued' ORDER BY seq LIMIT 1)
				UNION ALL
				SELECT seq FROM (SELECT seq FROM tasks
					WHERE campaign_id = ? AND state = 'leased' AND lease_expires < ? ORDER BY seq LIMIT 1)
			) ORDER BY seq LIMIT 1)
		RETURNING `+taskColsBare,
		worker, fmtTime(expires), campaignID, campaignID, fmtTime(now))
	t, err := scanTask(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNoTask
	}
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	if t.Leases > 1 {
		s.log.Info("task re-leased", "run", campaignID, "task", t.ID, "attempt", t.Leases, "worker", worker)
	}
	return &Lease{Task: t, Number: t.Leases, Worker: worker, Expires: expires}, nil
}

// Renew extends a current lease to now+ttl. ErrLeaseLost if the lease is not
// current. A lease that has expired but was not yet claimed by another worker
// is still current and can be renewed.
func (s *Store) Renew(ctx context.Context, l *Lease, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("renew: ttl must be positive")
	}
	expires := s.now().Add(ttl)
	res, err := s.w.ExecContext(ctx, `UPDATE tasks SET lease_expires = ?
		WHERE id = ? AND state = 'leased' AND leases = ?`, fmtTime(expires), l.Task.ID, l.Number)
	if err := leaseGate(res, err); err != nil {
		return fmt.Errorf("renew task %s: %w", l.Task.ID, err)
	}
	l.Expires = expires
	return nil
}

// leaseGate turns a conditional UPDATE's outcome into ErrLeaseLost when it
// matched nothing.
func leaseGate(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrLeaseLost
	}
	return nil
}

// Release puts a leased task back to queued without a judgement (for a
// clean shutdown). The lease count is kept, so the next claim gets the next
// attempt number. ErrLeaseLost if the lease is not current.
func (s *Store) Release(ctx context.Context, l *Lease) error {
	res, err := s.w.ExecContext(ctx, `UPDATE tasks SET state = 'queued', lease_worker = NULL, lease_expires = NULL
		WHERE id = ? AND state = 'leased' AND leases = ?`, l.Task.ID, l.Number)
	if err := leaseGate(res, err); err != nil {
		return fmt.Errorf("release task %s: %w", l.Task.ID, err)
	}
	return nil
}

// ReclaimAll puts every leased task of the campaign back to queued (for
// start-up, when the leases belong to a crashed predecessor). An empty
// campaignID reclaims across all campaigns. It returns how many were
// reclaimed.
func (s *Store) ReclaimAll(ctx context.Context, campaignID string) (int, error) {
	res, err := s.w.ExecContext(ctx, `UPDATE tasks SET state = 'queued', lease_worker = NULL, lease_expires = NULL
		WHERE state = 'leased' AND (? = '' OR campaign_id = ?)`, campaignID, campaignID)
	if err != nil {
		return 0, fmt.Errorf("reclaim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("reclaim: %w", err)
	}
	if n > 0 {
		s.log.Info("leases reclaimed", "run", campaignID, "count", n)
	}
	return int(n), nil
}

const attemptCols = `a.id, a.task_id, a.number, a.endpoint, a.model, a.answer, a.transcript,
	a.prompt_tokens, a.completion_tokens, a.reasoning_tokens, a.prompt_source, a.completion_source, a.reasoning_source,
	a.latency_ms, a.ttft_ms, a.calls, a.turns, a.tool_calls, a.repair_turns, a.error, a.started_at, a.finished_at`

func scanAttempt(sc scanner) (Attempt, error) {
	var (
		a                 Attempt
		transcript        sql.NullString
		started, finished sql.NullString
	)
	u := &a.Usage
	if err := sc.Scan(&a.ID, &a.TaskID, &a.Number, &a.Endpoint, &a.Model, &a.Answer, &transcript,
		&u.PromptTokens, &u.CompletionTokens, &u.ReasoningTokens, &u.PromptSource, &u.CompletionSource, &u.ReasoningSource,
		&u.LatencyMS, &u.TTFTMS, &u.Calls, &a.Turns, &a.ToolCalls, &a.RepairTurns, &a.Error, &started, &finished); err != nil {
		return Attempt{}, err
	}
	a.Transcript = rawBytes(transcript)
	var err error
	if a.StartedAt, err = parseTime(started); err != nil {
		return Attempt{}, err
	}
	if a.FinishedAt, err = parseTime(finished); err != nil {
		return Attempt{}, err
	}
	return a, nil
}

// upsertAttempt writes a (for lease l) inside tx and returns it with its id
// and normalised fields. The row is keyed by (task, number): saving again
// updates it in place and keeps its id.
func (s *Store) upsertAttempt(ctx context.Context, tx *sql.Tx, l *Lease, a Attempt) (Attempt, error) {
	a.TaskID = l.Task.ID
	a.Number = l.Number
	transcript, err := rawJSON("transcript", a.Transcript)
	if err != nil {
		return Attempt{}, err
	}
	id := a.ID
	if id == "" {
		id = newID()
	}
	u := a.Usage
	err = tx.QueryRowContext(ctx, `INSERT INTO attempts
		(id, task_id, number, endpoint, model, answer, transcript,
		 prompt_tokens, completion_tokens, reasoning_tokens, prompt_source, completion_source, reasoning_source,
		 latency_ms, ttft_ms, calls, turns, tool_calls, repair_turns, error, started_at, finished_at, saved_at)
		VALUES (?,?,?,?,?,?,?, ?,?,?,?,?,?, ?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (task_id, number) DO UPDATE SET
		 endpoint = excluded.endpoint, model = excluded.model, answer = excluded.answer, transcript = excluded.transcript,
		 prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
		 reasoning_tokens = excluded.reasoning_tokens, prompt_source = excluded.prompt_source,
		 completion_source = excluded.completion_source, reasoning_source = excluded.reasoning_source,
		 latency_ms = excluded.latency_ms, ttft_ms = excluded.ttft_ms, calls = excluded.calls,
		 turns = excluded.turns, tool_calls = excluded.tool_calls, repair_turns = excluded.repair_turns,
		 error = excluded.error, started_at = excluded.started_at, finished_at = excluded.finished_at,
		 saved_at = excluded.saved_at
		RETURNING id`,
		id, a.TaskID, a.Number, a.Endpoint, a.Model, a.Answer, transcript,
		u.PromptTokens, u.CompletionTokens, u.ReasoningTokens, u.PromptSource, u.CompletionSource, u.ReasoningSource,
		u.LatencyMS, u.TTFTMS, u.Calls, a.Turns, a.ToolCalls, a.RepairTurns, a.Error,
		nullTime(a.StartedAt), nullTime(a.FinishedAt), fmtTime(s.now())).Scan(&a.ID)
	if err != nil {
		return Attempt{}, err
	}
	if err := refreshTokens(ctx, tx, a.TaskID); err != nil {
		return Attempt{}, err
	}
	if !a.StartedAt.IsZero() {
		a.StartedAt = a.StartedAt.UTC()
	}
	if !a.FinishedAt.IsZero() {
		a.FinishedAt = a.FinishedAt.UTC()
	}
	if len(a.Transcript) == 0 {
		a.Transcript = nil
	}
	return a, nil
}

// leaseCurrent checks, inside a write transaction, that l is current.
func leaseCurrent(ctx context.Context, tx *sql.Tx, l *Lease) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ? AND state = 'leased' AND leases = ?`,
		l.Task.ID, l.Number).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrLeaseLost
	}
	return err
}

// SaveAnswer durably records an attempt's answer before it is verified, so
// that a crash during verification loses no model output. The row is keyed by
// (task, lease number); TaskID and Number are taken from the lease and the id
// is assigned on first save. ErrLeaseLost if the lease is not current.
func (s *Store) SaveAnswer(ctx context.Context, l *Lease, a Attempt) (Attempt, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Attempt{}, fmt.Errorf("save answer: %w", err)
	}
	defer tx.Rollback()
	if err := leaseCurrent(ctx, tx, l); err != nil {
		return Attempt{}, fmt.Errorf("save answer task %s: %w", l.Task.ID, err)
	}
	a, err = s.upsertAttempt(ctx, tx, l, a)
	if err != nil {
		return Attempt{}, fmt.Errorf("save answer task %s: %w", l.Task.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return Attempt{}, fmt.Errorf("save answer task %s: %w", l.Task.ID, err)
	}
	return a, nil
}

// Finish judges a leased task in one transaction: it upserts the attempt,
// marks the task done with this attempt as its judged attempt, and inserts
// the verdict as revision 0. ErrLeaseLost (and nothing written) if the lease
// is not current or the task is already done, so a task is never judged
// twice.
func (s *Store) Finish(ctx context.Context, l *Lease, a Attempt, v Verdict) error {
	if err := s.finish(ctx, l, a, v); err != nil {
		return fmt.Errorf("finish task %s: %w", l.Task.ID, err)
	}
	return nil
}

func (s *Store) finish(ctx context.Context, l *Lease, a Attempt, v Verdict) error {
	vc, err := encodeVerdict(v)
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := leaseCurrent(ctx, tx, l); err != nil {
		return err
	}
	a, err = s.upsertAttempt(ctx, tx, l, a)
	if err != nil {
		return err
	}
	now := fmtTime(s.now())
	res, err := tx.ExecContext(ctx, `UPDATE tasks
		SET state = 'done', lease_worker = NULL, lease_expires = NULL, judged_attempt_id = ?, done_at = ?
		WHERE id = ? AND state = 'leased' AND leases = ?`, a.ID, now, l.Task.ID, l.Number)
	if err := leaseGate(res, err); err != nil {
		return err
	}
	if err := insertVerdict(ctx, tx, newID(), a.ID, l.Task.ID, 0, now, vc); err != nil {
		return err
	}
	if err := refreshOutcome(ctx, tx, l.Task.ID); err != nil {
		return err
	}
	return tx.Commit()
}

// verdictCols are the encoded, caller-supplied parts of a verdict.
type verdictCols struct {
	pass                               bool
	class, stage, diagnostic, policy   string
	stages, labels                     any
	measurements, artifacts, toolchain string
}

func encodeVerdict(v Verdict) (verdictCols, error) {
	c := verdictCols{pass: v.Pass, class: v.Class, stage: v.Stage, diagnostic: v.Diagnostic, policy: v.Policy}
	var err error
	if c.stages, err = rawJSON("verdict stages", v.Stages); err != nil {
		return c, err
	}
	m := v.Measurements
	if m == nil {
		m = map[string]float64{}
	}
	if c.measurements, err = jsonText(m); err != nil {
		return c, fmt.Errorf("verdict measurements: %w", err)
	}
	for name, h := range v.Artifacts {
		if !validHash(h) {
			return c, fmt.Errorf("verdict artifact %q: %w: %q", name, ErrBadHash, h)
		}
	}
	if c.artifacts, err = jsonText(nonNilMap(v.Artifacts)); err != nil {
		return c, err
	}
	if c.toolchain, err = jsonText(nonNilMap(v.Toolchain)); err != nil {
		return c, err
	}
	if v.Labels != nil {
		l := *v.Labels
		l.Features, l.Categories = orEmpty(l.Features), orEmpty(l.Categories)
		if c.labels, err = jsonText(l); err != nil {
			return c, fmt.Errorf("verdict labels: %w", err)
		}
	}
	return c, nil
}

func insertVerdict(ctx context.Context, tx *sql.Tx, id, attemptID, taskID string, rev int, now string, c verdictCols) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO verdicts
		(id, attempt_id, task_id, revision, pass, class, stage, stages, diagnostic, measurements, artifacts, toolchain, policy, labels, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		id, attemptID, taskID, rev, c.pass, c.class, c.stage, c.stages, c.diagnostic,
		c.measurements, c.artifacts, c.toolchain, c.policy, c.labels, now)
	return err
}

const verdictColsSQL = `v.id, v.attempt_id, v.task_id, v.revision, v.pass, v.class, v.stage, v.stages, v.diagnostic,
	v.measurements, v.artifacts, v.toolchain, v.policy, v.labels, v.created_at`

func scanVerdict(sc scanner) (Verdict, error) {
	var (
		v                       Verdict
		stages, labels, created sql.NullString
		meas, arts, tools       string
	)
	if err := sc.Scan(&v.ID, &v.AttemptID, &v.TaskID, &v.Revision, &v.Pass, &v.Class, &v.Stage, &stages, &v.Diagnostic,
		&meas, &arts, &tools, &v.Policy, &labels, &created); err != nil {
		return Verdict{}, err
	}
	return finishVerdict(v, stages, meas, arts, tools, labels, created)
}

func finishVerdict(v Verdict, stages sql.NullString, meas, arts, tools string, labels, created sql.NullString) (Verdict, error) {
	v.Stages = rawBytes(stages)
	if labels.Valid && labels.String != "" {
		v.Labels = &VerdictLabels{}
		if err := json.Unmarshal([]byte(labels.String), v.Labels); err != nil {
			return Verdict{}, fmt.Errorf("verdict %s labels: %w", v.ID, err)
		}
	}
	if err := unmarshalText(meas, &v.Measurements); err != nil {
		return Verdict{}, fmt.Errorf("verdict %s measurements: %w", v.ID, err)
	}
	if err := unmarshalText(arts, &v.Artifacts); err != nil {
		return Verdict{}, fmt.Errorf("verdict %s artifacts: %w", v.ID, err)
	}
	if err := unmarshalText(tools, &v.Toolchain); err != nil {
		return Verdict{}, fmt.Errorf("verdict %s toolchain: %w", v.ID, err)
	}
	var err error
	if v.CreatedAt, err = parseTime(created); err != nil {
		return Verdict{}, err
	}
	return v, nil
}

// AddRescore stores v as the next verdict revision of an already judged
// attempt and returns it as stored. ErrNotFound if the attempt has no
// original verdict.
func (s *Store) AddRescore(ctx context.Context, attemptID string, v Verdict) (Verdict, error) {
	vc, err := encodeVerdict(v)
	if err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, err)
	}
	defer tx.Rollback()
	if v, err = s.addRescoreTx(ctx, tx, attemptID, v, vc); err != nil {
		return Verdict{}, err
	}
	if err := tx.Commit(); err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, err)
	}
	return rescoreStored(v), nil
}

// addRescoreTx inserts v (encoded as vc) as the next revision of the
// attempt's verdict inside tx and returns it with its id, revision and
// time (AddRescore; AddJobRescore in the same transaction as the job's
// result).
func (s *Store) addRescoreTx(ctx context.Context, tx *sql.Tx, attemptID string, v Verdict, vc verdictCols) (Verdict, error) {
	var (
		taskID string
		maxRev sql.NullInt64
	)
	err := tx.QueryRowContext(ctx, `SELECT task_id, MAX(revision) FROM verdicts WHERE attempt_id = ? GROUP BY task_id`,
		attemptID).Scan(&taskID, &maxRev)
	if err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, notFound(err))
	}
	now := s.now()
	v.ID, v.AttemptID, v.TaskID, v.Revision, v.CreatedAt = newID(), attemptID, taskID, int(maxRev.Int64)+1, now
	if err := insertVerdict(ctx, tx, v.ID, attemptID, taskID, v.Revision, fmtTime(now), vc); err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, err)
	}
	if err := refreshOutcome(ctx, tx, taskID); err != nil {
		return Verdict{}, fmt.Errorf("rescore attempt %s: %w", attemptID, err)
	}
	return v, nil
}

// rescoreStored normalises a stored rescore as reading it back gives it.
func rescoreStored(v Verdict) Verdict {
	if len(v.Stages) == 0 {
		v.Stages = nil
	}
	if v.Labels != nil {
		l := *v.Labels
		l.Features, l.Categories = orEmpty(l.Features), orEmpty(l.Categories)
		v.Labels = &l
	}
	return v
}

// Attempts returns every saved attempt of a task, by attempt number.
func (s *Store) Attempts(ctx context.Context, taskID string) ([]Attempt, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+attemptCols+` FROM attempts a WHERE a.task_id = ? ORDER BY a.number`, taskID)
	if err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, fmt.Errorf("attempts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("attempts: %w", err)
	}
	return out, nil
}

// Verdicts returns every verdict revision of an attempt, oldest first.
func (s *Store) Verdicts(ctx context.Context, attemptID string) ([]Verdict, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+verdictColsSQL+` FROM verdicts v WHERE v.attempt_id = ? ORDER BY v.revision`, attemptID)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	defer rows.Close()
	var out []Verdict
	for rows.Next() {
		v, err := scanVerdict(rows)
		if err != nil {
			return nil, fmt.Errorf("verdicts: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	return out, nil
}

// Counts summarises a campaign's tasks of one round (round < 0: all rounds).
// It is one statement, so the numbers are from one snapshot.
func (s *Store) Counts(ctx context.Context, campaignID string, round int) (Counts, error) {
	var c Counts
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*),
			COALESCE(SUM(state = 'queued'), 0), COALESCE(SUM(state = 'leased'), 0), COALESCE(SUM(state = 'done'), 0),
			COALESCE(SUM(outcome = 'pass'), 0), COALESCE(SUM(outcome = 'fail' AND class <> ?3), 0),
			COALESCE(SUM(outcome = 'pending'), 0), COALESCE(SUM(outcome = 'fail' AND class = ?3), 0),
			COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(reasoning_tokens), 0)
		FROM tasks INDEXED BY tasks_outcomes WHERE campaign_id = ?1 AND (?2 < 0 OR round = ?2)`,
		campaignID, round, ClassReferenceError).Scan(&c.Tasks, &c.Queued, &c.Leased, &c.Done, &c.Pass, &c.Fail, &c.Pending,
		&c.TaskFaults, &c.PromptTokens, &c.CompletionTokens, &c.ReasoningTokens)
	if err != nil {
		return Counts{}, fmt.Errorf("counts: %w", err)
	}
	return c, nil
}

// resultsQuery selects done tasks with their judged attempt and its latest
// verdict revision, in claim order.
const resultsQuery = `SELECT ` + taskCols + `, ` + attemptCols + `, ` + verdictColsSQL + `
	FROM tasks t
	JOIN attempts a ON a.id = t.judged_attempt_id
	JOIN verdicts v ON v.attempt_id = a.id
		AND v.revision = (SELECT MAX(revision) FROM verdicts WHERE attempt_id = a.id)
	WHERE t.campaign_id = ? AND t.state = 'done' AND (? < 0 OR t.round = ?)
	ORDER BY t.seq`

func scanResult(rows *sql.Rows) (Result, error) {
	var (
		r                         Result
		files, meta, cats, tstate string
		tcreated                  sql.NullString
		transcript                sql.NullString
		started, finished         sql.NullString
		stages, labels, vcreated  sql.NullString
		meas, arts, tools         string
	)
	t, a, v := &r.Task, &r.Attempt, &r.Verdict
	u := &a.Usage
	err := rows.Scan(&t.ID, &t.CampaignID, &t.Round, &t.Key, &t.Lane, &files, &meta, &cats, &t.Prompt, &tstate, &t.Leases, &tcreated,
		&a.ID, &a.TaskID, &a.Number, &a.Endpoint, &a.Model, &a.Answer, &transcript,
		&u.PromptTokens, &u.CompletionTokens, &u.ReasoningTokens, &u.PromptSource, &u.CompletionSource, &u.ReasoningSource,
		&u.LatencyMS, &u.TTFTMS, &u.Calls, &a.Turns, &a.ToolCalls, &a.RepairTurns, &a.Error, &started, &finished,
		&v.ID, &v.AttemptID, &v.TaskID, &v.Revision, &v.Pass, &v.Class, &v.Stage, &stages, &v.Diagnostic,
		&meas, &arts, &tools, &v.Policy, &labels, &vcreated)
	if err != nil {
		return Result{}, err
	}
	t.State = TaskState(tstate)
	if t.CreatedAt, err = parseTime(tcreated); err != nil {
		return Result{}, err
	}
	if err := unmarshalText(files, &t.Files); err != nil {
		return Result{}, err
	}
	if err := unmarshalText(meta, &t.Meta); err != nil {
		return Result{}, err
	}
	if err := unmarshalText(cats, &t.Categories); err != nil {
		return Result{}, err
	}
	a.Transcript = rawBytes(transcript)
	if a.StartedAt, err = parseTime(started); err != nil {
		return Result{}, err
	}
	if a.FinishedAt, err = parseTime(finished); err != nil {
		return Result{}, err
	}
	if r.Verdict, err = finishVerdict(*v, stages, meas, arts, tools, labels, vcreated); err != nil {
		return Result{}, err
	}
	return r, nil
}

// Results returns the campaign's done tasks of one round (round < 0: all
// rounds), each with its judged attempt and that attempt's latest verdict
// revision, in claim order.
func (s *Store) Results(ctx context.Context, campaignID string, round int) ([]Result, error) {
	var out []Result
	err := s.eachResult(ctx, campaignID, round, func(r Result) error {
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return out, nil
}

// EachResult calls fn with each judged result of the campaign (its latest
// verdict revision), in claim order, round < 0 meaning every round,
// streaming: results are read as fn takes them. An error from fn stops
// the walk and is returned.
func (s *Store) EachResult(ctx context.Context, campaignID string, round int, fn func(Result) error) error {
	return s.eachResult(ctx, campaignID, round, fn)
}

func (s *Store) eachResult(ctx context.Context, campaignID string, round int, fn func(Result) error) error {
	rows, err := s.r.QueryContext(ctx, resultsQuery, campaignID, round, round)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

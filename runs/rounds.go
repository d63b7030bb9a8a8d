package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrRoundClosed: the round's record is already final (the next round was
// started, or the campaign stopped after it); it cannot change.
var ErrRoundClosed = errors.New("runs: round already closed")

// RoundRecord is what a refinement campaign decided after one of its
// rounds. Record is the caller's JSON (runs does not read it). A draft
// (Final false) is work in progress toward the next round, rewritten as it
// grows; a final record is written once, by CloseRound, together with the
// next round's tasks.
type RoundRecord struct {
	CampaignID string
	// Round is the round whose results the record is about.
	Round     int
	Final     bool
	Record    []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SaveRoundDraft creates or replaces the draft record of a campaign's
// round. ErrRoundClosed if the round's record is final; ErrNotFound if the
// campaign does not exist.
func (s *Store) SaveRoundDraft(ctx context.Context, campaignID string, round int, record []byte) error {
	if round < 0 {
		return fmt.Errorf("save round draft: negative round %d", round)
	}
	rec, err := roundJSON(record)
	if err != nil {
		return fmt.Errorf("save round draft: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save round draft: %w", err)
	}
	defer tx.Rollback()
	if err := roundOpen(ctx, tx, campaignID, round); err != nil {
		return fmt.Errorf("save round draft %s/%d: %w", campaignID, round, err)
	}
	now := fmtTime(s.now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO rounds (campaign_id, round, final, record, created_at, updated_at)
		VALUES (?,?,0,?,?,?)
		ON CONFLICT (campaign_id, round) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at`,
		campaignID, round, rec, now, now); err != nil {
		return fmt.Errorf("save round draft: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save round draft: %w", err)
	}
	return nil
}

// roundJSON checks a round record: non-empty valid JSON.
func roundJSON(record []byte) (any, error) {
	rec, err := rawJSON("round record", record)
	if err == nil && rec == nil {
		err = errors.New("round record is empty")
	}
	return rec, err
}

// roundOpen checks inside tx that the campaign exists and the round's
// record is not final.
func roundOpen(ctx context.Context, tx *sql.Tx, campaignID string, round int) error {
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM campaigns WHERE id = ?`, campaignID).Scan(&one); err != nil {
		return notFound(err)
	}
	var final bool
	err := tx.QueryRowContext(ctx, `SELECT final FROM rounds WHERE campaign_id = ? AND round = ?`, campaignID, round).Scan(&final)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case final:
		return ErrRoundClosed
	}
	return nil
}

// CloseRound makes a round's record final and, in the same transaction,
// queues next (every task must belong to round+1) and, when next is not
// empty, moves the campaign to round+1. The campaign must be at round. So
// either the whole transition is stored or none of it: a process killed
// before the commit finds the round open (its draft intact) and may decide
// again; one killed after finds the next round queued. It returns how many
// tasks were added. ErrRoundClosed if the record is already final.
func (s *Store) CloseRound(ctx context.Context, campaignID string, round int, record []byte, next []Task) (int, error) {
	if round < 0 {
		return 0, fmt.Errorf("close round: negative round %d", round)
	}
	rec, err := roundJSON(record)
	if err != nil {
		return 0, fmt.Errorf("close round: %w", err)
	}
	for i, t := range next {
		if t.Key == "" {
			return 0, fmt.Errorf("close round: task %d has an empty key", i)
		}
		if t.Round != round+1 {
			return 0, fmt.Errorf("close round %d: task %q is of round %d, want %d", round, t.Key, t.Round, round+1)
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("close round: %w", err)
	}
	defer tx.Rollback()
	if err := roundOpen(ctx, tx, campaignID, round); err != nil {
		return 0, fmt.Errorf("close round %s/%d: %w", campaignID, round, err)
	}
	var cur int
	if err := tx.QueryRowContext(ctx, `SELECT round FROM campaigns WHERE id = ?`, campaignID).Scan(&cur); err != nil {
		return 0, fmt.Errorf("close round: %w", err)
	}
	if cur != round {
		return 0, fmt.Errorf("close round %d: campaign %s is at round %d", round, campaignID, cur)
	}
	now := fmtTime(s.now())
	if _, err := tx.ExecContext(ctx, `INSERT INTO rounds (campaign_id, round, final, record, created_at, updated_at)
		VALUES (?,?,1,?,?,?)
		ON CONFLICT (campaign_id, round) DO UPDATE SET final = 1, record = excluded.record, updated_at = excluded.updated_at`,
		campaignID, round, rec, now, now); err != nil {
		return 0, fmt.Errorf("close round: %w", err)
	}
	added := 0
	if len(next) > 0 {
		if added, err = s.addTasks(ctx, tx, campaignID, next); err != nil {
			return 0, fmt.Errorf("close round: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET round = ?, updated_at = ? WHERE id = ?`,
			round+1, now, campaignID); err != nil {
			return 0, fmt.Errorf("close round: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("close round: %w", err)
	}
	s.log.Info("round closed", "run", campaignID, "round", round, "next_tasks", added)
	return added, nil
}

const roundCols = `campaign_id, round, final, record, created_at, updated_at`

func scanRound(sc scanner) (RoundRecord, error) {
	var (
		r                RoundRecord
		rec              string
		created, updated sql.NullString
	)
	if err := sc.Scan(&r.CampaignID, &r.Round, &r.Final, &rec, &created, &updated); err != nil {
		return RoundRecord{}, err
	}
	r.Record = []byte(rec)
	var err error
	if r.CreatedAt, err = parseTime(created); err != nil {
		return RoundRecord{}, err
	}
	if r.UpdatedAt, err = parseTime(updated); err != nil {
		return RoundRecord{}, err
	}
	return r, nil
}

// Round returns the record of one round of a campaign; ErrNotFound when
// there is none.
func (s *Store) Round(ctx context.Context, campaignID string, round int) (RoundRecord, error) {
	r, err := scanRound(s.r.QueryRowContext(ctx, `SELECT `+roundCols+` FROM rounds WHERE campaign_id = ? AND round = ?`,
		campaignID, round))
	if err != nil {
		return RoundRecord{}, fmt.Errorf("round %s/%d: %w", campaignID, round, notFound(err))
	}
	return r, nil
}

// Rounds returns a campaign's round records in round order.
func (s *Store) Rounds(ctx context.Context, campaignID string) ([]RoundRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+roundCols+` FROM rounds WHERE campaign_id = ? ORDER BY round`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	defer rows.Close()
	var out []RoundRecord
	for rows.Next() {
		r, err := scanRound(rows)
		if err != nil {
			return nil, fmt.Errorf("rounds: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	return out, nil
}

// ForkCampaign creates a new campaign from src in one transaction and
// returns it. The new campaign takes Name, Spec, SpecDir and Note from c
// (Name required); its lane and current round are src's, its Parent is
// src's id, its state queued. Every task of src is copied with its key,
// round, files, meta, categories and prompt, in claim order: a done task
// with its judged attempt and that attempt's latest verdict revision (as
// the copy's original verdict), any other task as queued. Round records of
// the rounds before src's current one are copied; the current round's
// record is not (it is about how src ended, not about the fork). Blobs are
// shared, so artifact hashes stay valid.
func (s *Store) ForkCampaign(ctx context.Context, srcRef string, c Campaign) (Campaign, error) {
	if c.Name == "" {
		return Campaign{}, fmt.Errorf("fork campaign: name is required")
	}
	src, err := s.Campaign(ctx, srcRef)
	if err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: %w", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: %w", err)
	}
	defer tx.Rollback()
	now := s.now()
	c.ID, c.Lane, c.Parent, c.State, c.Round = newID(), src.Lane, src.ID, CampaignQueued, src.Round
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Spec == nil {
		c.Spec = []byte{}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO campaigns (`+campaignCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		c.ID, c.Name, c.Lane, c.Spec, c.SpecDir, c.Parent, string(c.State), c.Round, c.Note, fmtTime(now), fmtTime(now)); err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: %w", err)
	}
	tasks, err := forkSourceTasks(ctx, tx, src.ID)
	if err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: %w", err)
	}
	stamp := fmtTime(now)
	for _, st := range tasks {
		id, err := insertForkedTask(ctx, tx, c.ID, stamp, st.t)
		if err != nil {
			return Campaign{}, err
		}
		if st.t.State != TaskDone || !st.judged.Valid {
			continue
		}
		if err := copyJudgedAttempt(ctx, tx, id, st); err != nil {
			return Campaign{}, err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rounds (campaign_id, round, final, record, created_at, updated_at)
		SELECT ?, round, final, record, created_at, updated_at FROM rounds WHERE campaign_id = ? AND round < ?`,
		c.ID, src.ID, src.Round); err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: rounds: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Campaign{}, fmt.Errorf("fork campaign: %w", err)
	}
	s.log.Info("campaign forked", "run", c.ID, "from", src.ID, "tasks", len(tasks))
	return c, nil
}

// forkSrcTask is a task of the campaign being forked, with its judged
// attempt's id and when it was done (both NULL unless it is done).
type forkSrcTask struct {
	t      Task
	judged sql.NullString
	doneAt sql.NullString
}

// forkSourceTasks reads inside tx the tasks of campaign srcID, in claim
// order.
func forkSourceTasks(ctx context.Context, tx *sql.Tx, srcID string) ([]forkSrcTask, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+taskCols+`, t.judged_attempt_id, t.done_at FROM tasks t
		WHERE t.campaign_id = ? ORDER BY t.seq`, srcID)
	if err != nil {
		return nil, err
	}
	var tasks []forkSrcTask
	for rows.Next() {
		var st forkSrcTask
		if st.t, err = scanTask(rows, &st.judged, &st.doneAt); err != nil {
			rows.Close()
			return nil, err
		}
		tasks = append(tasks, st)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return tasks, nil
}

// insertForkedTask inserts inside tx a queued copy of t (key, round, lane,
// files, meta, categories and prompt) into campaign campaignID, created at
// stamp, and returns the copy's id.
func insertForkedTask(ctx context.Context, tx *sql.Tx, campaignID, stamp string, t Task) (string, error) {
	files, err := jsonText(nonNilMap(t.Files))
	if err != nil {
		return "", fmt.Errorf("fork campaign: %w", err)
	}
	meta, err := jsonText(nonNilMap(t.Meta))
	if err != nil {
		return "", fmt.Errorf("fork campaign: %w", err)
	}
	cats := t.Categories
	if cats == nil {
		cats = []string{}
	}
	catText, err := jsonText(cats)
	if err != nil {
		return "", fmt.Errorf("fork campaign: %w", err)
	}
	id := newID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO tasks
			(id, campaign_id, round, key, lane, files, meta, categories, prompt, state, leases, created_at)
			VALUES (?,?,?,?,?,?,?,?,?,'queued',0,?)`,
		id, campaignID, t.Round, t.Key, t.Lane, files, meta, catText, t.Prompt, stamp); err != nil {
		return "", fmt.Errorf("fork campaign: task %q: %w", t.Key, err)
	}
	return id, nil
}

// copyJudgedAttempt copies inside tx the judged attempt of the done source
// task st, and that attempt's latest verdict revision as the copy's
// original verdict, to the forked task taskID, and marks taskID done.
func copyJudgedAttempt(ctx context.Context, tx *sql.Tx, taskID string, st forkSrcTask) error {
	t := st.t
	aid := newID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO attempts
			(id, task_id, number, endpoint, model, answer, transcript,
			 prompt_tokens, completion_tokens, reasoning_tokens, prompt_source, completion_source, reasoning_source,
			 latency_ms, ttft_ms, calls, turns, tool_calls, repair_turns, error, started_at, finished_at, saved_at)
			SELECT ?, ?, number, endpoint, model, answer, transcript,
			 prompt_tokens, completion_tokens, reasoning_tokens, prompt_source, completion_source, reasoning_source,
			 latency_ms, ttft_ms, calls, turns, tool_calls, repair_turns, error, started_at, finished_at, saved_at
			FROM attempts WHERE id = ?`, aid, taskID, st.judged.String); err != nil {
		return fmt.Errorf("fork campaign: attempt of %q: %w", t.Key, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO verdicts
			(id, attempt_id, task_id, revision, pass, class, stage, stages, diagnostic, measurements, artifacts, toolchain, policy, labels, created_at)
			SELECT ?, ?, ?, 0, pass, class, stage, stages, diagnostic, measurements, artifacts, toolchain, policy, labels, created_at
			FROM verdicts WHERE attempt_id = ? ORDER BY revision DESC LIMIT 1`, newID(), aid, taskID, st.judged.String); err != nil {
		return fmt.Errorf("fork campaign: verdict of %q: %w", t.Key, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tasks SET state = 'done', judged_attempt_id = ?, done_at = ?,
			leases = (SELECT number FROM attempts WHERE id = ?) WHERE id = ?`,
		aid, st.doneAt, aid, taskID); err != nil {
		return fmt.Errorf("fork campaign: task %q: %w", t.Key, err)
	}
	if err := refreshOutcome(ctx, tx, taskID); err != nil {
		return fmt.Errorf("fork campaign: %w", err)
	}
	if err := refreshTokens(ctx, tx, taskID); err != nil {
		return fmt.Errorf("fork campaign: %w", err)
	}
	return nil
}

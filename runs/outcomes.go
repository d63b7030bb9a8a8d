package runs

import (
	"context"
	"database/sql"
	"fmt"
)

// A task's outcome columns (schema version 4) summarise its judged
// attempt's latest verdict and its attempts' tokens. They are derived
// data: every write that changes what they summarise refreshes them in
// the same transaction, from the rows themselves (never by deltas).
// Migration 4 backfills stores written before it with the same statements:
// a change here changes what that migration computes for stores not yet
// migrated, so keep the columns' meaning.

// refreshOutcomeSQL sets a task's outcome, class and model from its judged
// attempt's latest verdict revision (followed by a WHERE clause).
const refreshOutcomeSQL = `UPDATE tasks SET (outcome, class, model) = (
	SELECT CASE WHEN v.pass = 0 THEN 'fail'
		WHEN v.stages IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(v.stages)
			WHERE json_extract(value, '$.skipped') = 1) THEN 'pending'
		ELSE 'pass' END,
		CASE WHEN v.pass = 0 THEN v.class ELSE '' END,
		a.model
	FROM attempts a JOIN verdicts v ON v.attempt_id = a.id
	WHERE a.id = tasks.judged_attempt_id
	ORDER BY v.revision DESC LIMIT 1)`

// refreshTokensSQL sums a task's attempts' tokens (followed by a WHERE
// clause, or none for every task).
const refreshTokensSQL = `UPDATE tasks SET (prompt_tokens, completion_tokens, reasoning_tokens) = (
	SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(reasoning_tokens), 0)
	FROM attempts WHERE task_id = tasks.id)`

// refreshOutcome recomputes task taskID's outcome columns inside tx.
func refreshOutcome(ctx context.Context, tx *sql.Tx, taskID string) error {
	if _, err := tx.ExecContext(ctx, refreshOutcomeSQL+` WHERE id = ? AND judged_attempt_id IS NOT NULL`, taskID); err != nil {
		return fmt.Errorf("task outcome: %w", err)
	}
	return nil
}

// refreshTokens recomputes task taskID's token sums inside tx.
func refreshTokens(ctx context.Context, tx *sql.Tx, taskID string) error {
	if _, err := tx.ExecContext(ctx, refreshTokensSQL+` WHERE id = ?`, taskID); err != nil {
		return fmt.Errorf("task tokens: %w", err)
	}
	return nil
}

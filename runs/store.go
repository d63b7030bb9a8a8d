package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the system of record: a SQLite database (dir/kiln.db) and a
// content-addressed blob store (dir/blobs). All writes go through one
// connection with BEGIN IMMEDIATE transactions; reads use a separate pool.
// A Store is safe for concurrent use.
type Store struct {
	dir   string
	w     *sql.DB // one connection, IMMEDIATE transactions
	r     *sql.DB // read pool, query_only
	blobs *Blobs
	log   *slog.Logger
	now   func() time.Time // UTC clock; replaced in tests
}

// dbFile is the database file name inside the store directory.
const dbFile = "kiln.db"

// timeLayout is fixed width so that stored timestamps compare as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Open opens (creating and migrating as needed) the store in dir.
func Open(ctx context.Context, dir string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if strings.ContainsAny(dir, "?#") {
		return nil, fmt.Errorf("open store: directory %q must not contain '?' or '#'", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	blobs, err := newBlobs(filepath.Join(dir, "blobs"), log)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	common := "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_dqs=0"
	w, err := sql.Open("sqlite", path+"?"+common+
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{dir: dir, w: w, blobs: blobs, log: log, now: func() time.Time { return time.Now().UTC() }}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	r, err := sql.Open("sqlite", path+"?"+common+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	s.r = r
	return s, nil
}

// Close closes the database handles. It does not touch the blob directory.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// Blobs returns the store's blob store.
func (s *Store) Blobs() *Blobs { return s.blobs }

// Dir returns the store directory.
func (s *Store) Dir() string { return s.dir }

// Check runs SQLite's integrity and foreign key checks and returns an error
// describing any problem found.
func (s *Store) Check(ctx context.Context) error {
	var res string
	if err := s.r.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res); err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("check store: integrity: %s", res)
	}
	rows, err := s.r.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return fmt.Errorf("check store: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		return fmt.Errorf("check store: foreign key violations present")
	}
	return rows.Err()
}

// migrations are applied in order; schema_version holds how many ran.
// Never edit an applied migration: append a new one.
func migrations() []string {
	return []string{
		schemaV1, // 1: the first schema (schema.go)
		// 2: verdict labels (VerdictLabels as JSON), NULL for verdicts
		// written before.
		`ALTER TABLE verdicts ADD COLUMN labels TEXT;`,
		// 3: failed model calls per campaign and fault class (retried
		// ones included), counted as they happen.
		`CREATE TABLE model_faults (
	campaign_id TEXT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
	class       TEXT NOT NULL,
	n           INTEGER NOT NULL CHECK (n > 0),
	PRIMARY KEY (campaign_id, class)
) STRICT;`,
		// 4: each task's outcome (its judged attempt's latest verdict:
		// pass, fail or pending; NULL until judged), failure class and
		// model, and the tokens of all its attempts, kept by the writes
		// that change them, so that counts and the dashboard aggregate a
		// campaign of 100k tasks from one covering index instead of
		// joining attempts and verdicts and parsing stage JSON per row.
		`ALTER TABLE tasks ADD COLUMN outcome TEXT CHECK (outcome IN ('pass','fail','pending'));
ALTER TABLE tasks ADD COLUMN class TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
` + refreshOutcomeSQL + ` WHERE judged_attempt_id IS NOT NULL;
` + refreshTokensSQL + `;
CREATE INDEX tasks_outcomes ON tasks (campaign_id, state, seq, round, outcome, class, model,
	prompt_tokens, completion_tokens, reasoning_tokens, done_at, categories);
CREATE INDEX tasks_tallies ON tasks (campaign_id, round, categories, class, state, outcome,
	prompt_tokens, completion_tokens, reasoning_tokens, done_at);
CREATE INDEX tasks_judged ON tasks (campaign_id, done_at, prompt_tokens, completion_tokens) WHERE done_at IS NOT NULL;`,
		// 5: results of jobs run by worker hosts (runs/jobs), one row per
		// job id: a duplicate result finds the row and changes nothing,
		// so a job never makes a second verdict revision. verdict_id is
		// the revision a job stored (complete jobs), NULL otherwise.
		`CREATE TABLE job_results (
	job_id     TEXT PRIMARY KEY CHECK (job_id <> ''),
	kind       TEXT NOT NULL,
	status     TEXT NOT NULL CHECK (status IN ('done','failed','dead')),
	worker     TEXT NOT NULL,
	reason     TEXT NOT NULL,
	deliveries INTEGER NOT NULL,
	verdict_id TEXT REFERENCES verdicts (id) ON DELETE CASCADE,
	result     TEXT,
	created_at TEXT NOT NULL
) STRICT;
CREATE INDEX job_results_verdict ON job_results (verdict_id) WHERE verdict_id IS NOT NULL;`,
	}
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx,
		`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ms := migrations()
	for {
		done, err := s.migrateOne(ctx, ms)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// migrateOne applies the next migration, if any, in its own transaction and
// reports whether the schema is current.
func (s *Store) migrateOne(ctx context.Context, ms []string) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
			return false, fmt.Errorf("migrate: %w", err)
		}
	case err != nil:
		return false, fmt.Errorf("migrate: %w", err)
	}
	if v > len(ms) {
		return false, fmt.Errorf("migrate: database schema version %d is newer than this program's %d", v, len(ms))
	}
	if v == len(ms) {
		return true, tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, ms[v]); err != nil {
		return false, fmt.Errorf("migrate to version %d: %w", v+1, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate: %w", err)
	}
	s.log.Info("store schema migrated", "version", v+1)
	return false, nil
}

// --- encoding helpers ---

func newID() string { return uuid.NewString() }

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return fmtTime(t)
}

func parseTime(s sql.NullString) (time.Time, error) {
	if !s.Valid || s.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse stored time %q: %w", s.String, err)
	}
	return t, nil
}

// jsonText encodes v as JSON text for a TEXT column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// rawJSON stores caller-supplied JSON: empty is NULL, otherwise it must be
// valid JSON.
func rawJSON(field string, b []byte) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("%s is not valid JSON", field)
	}
	return string(b), nil
}

func rawBytes(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

func unmarshalText(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

package runs

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The queries of this file serve the dashboard (runs/web): aggregates that
// SQLite computes without loading results, and one page of verdicts at a
// time, found by key (the task's claim sequence), so that a campaign of
// 100k verdicts is browsed without reading them all.

// latestVerdictJoin joins a done task (alias t) to its judged attempt (a)
// and that attempt's latest verdict revision (v).
const latestVerdictJoin = `JOIN attempts a ON a.id = t.judged_attempt_id
	JOIN verdicts v ON v.attempt_id = a.id
		AND v.revision = (SELECT MAX(revision) FROM verdicts WHERE attempt_id = a.id)`

// Tally is a count of done tasks by Outcome.
type Tally struct {
	Pass, Fail, Pending, TaskFaults int
}

// N is every done task of the tally, pending ones and task faults
// included.
func (t Tally) N() int { return t.Pass + t.Fail + t.Pending + t.TaskFaults }

// Judged is the denominator of a pass rate: passes and fails.
func (t Tally) Judged() int { return t.Pass + t.Fail }

// CategoryTally is one category's tally.
type CategoryTally struct {
	Category string
	Tally
}

// ClassCount is how many judged tasks failed with one class.
type ClassCount struct {
	Class string
	N     int
}

// FailureClasses counts a campaign's failed tasks (latest verdicts) by
// failure class, most frequent first; task faults are not failures.
func (s *Store) FailureClasses(ctx context.Context, campaignID string) ([]ClassCount, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT class, COUNT(*) FROM tasks INDEXED BY tasks_outcomes
		WHERE campaign_id = ? AND state = 'done' AND outcome = 'fail' AND class <> ?
		GROUP BY class ORDER BY COUNT(*) DESC, class`, campaignID, ClassReferenceError)
	if err != nil {
		return nil, fmt.Errorf("failure classes: %w", err)
	}
	defer rows.Close()
	var out []ClassCount
	for rows.Next() {
		var c ClassCount
		if err := rows.Scan(&c.Class, &c.N); err != nil {
			return nil, fmt.Errorf("failure classes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failure classes: %w", err)
	}
	return out, nil
}

// RoundTally is one round's tasks by state, its tally and its tokens.
type RoundTally struct {
	Round, Tasks, Queued, Leased, Done int
	Tally
	PromptTokens, CompletionTokens, ReasoningTokens int64
}

// Overview is a campaign's figures from one pass over its tasks: the
// tally of each round (with task states and tokens), each category's tally
// over every round (sorted by category), and the span of judged tasks.
type Overview struct {
	Rounds     []RoundTally
	Categories []CategoryTally
	// Classes counts failed tasks by class, most frequent first (task
	// faults are not failures: see the tallies' TaskFaults).
	Classes []ClassCount
	Span    Span
}

// Overview reads a campaign's overview; Span.Since counts the tasks judged
// at or after since. The store groups tasks by round, category list (tasks
// share few lists) and class, and the lists are split here, once each.
func (s *Store) Overview(ctx context.Context, campaignID string, since time.Time) (Overview, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT round, categories, class, COUNT(*),
			SUM(state = 'queued'), SUM(state = 'leased'), SUM(state = 'done'),
			COALESCE(SUM(outcome = 'pass'), 0), COALESCE(SUM(outcome = 'fail'), 0), COALESCE(SUM(outcome = 'pending'), 0),
			SUM(prompt_tokens), SUM(completion_tokens), SUM(reasoning_tokens),
			MIN(done_at), MAX(done_at), COALESCE(SUM(done_at >= ?2), 0)
		FROM tasks INDEXED BY tasks_tallies WHERE campaign_id = ?1
		GROUP BY round, categories, class ORDER BY round`, campaignID, fmtTime(since))
	if err != nil {
		return Overview{}, fmt.Errorf("overview: %w", err)
	}
	defer rows.Close()
	var ov Overview
	cats := map[string]*CategoryTally{}
	classes := map[string]int{}
	for rows.Next() {
		var r RoundTally
		var catText, class string
		var first, last sql.NullString
		var since int
		if err := rows.Scan(&r.Round, &catText, &class, &r.Tasks, &r.Queued, &r.Leased, &r.Done, &r.Pass, &r.Fail, &r.Pending,
			&r.PromptTokens, &r.CompletionTokens, &r.ReasoningTokens, &first, &last, &since); err != nil {
			return Overview{}, fmt.Errorf("overview: %w", err)
		}
		if n := len(ov.Rounds); n == 0 || ov.Rounds[n-1].Round != r.Round {
			ov.Rounds = append(ov.Rounds, RoundTally{Round: r.Round})
		}
		if class == ClassReferenceError {
			// The group's failures are task faults (grouped by class).
			r.TaskFaults, r.Fail = r.Fail, 0
		}
		if r.Fail > 0 {
			classes[class] += r.Fail
		}
		acc := &ov.Rounds[len(ov.Rounds)-1]
		acc.Tasks += r.Tasks
		acc.Queued += r.Queued
		acc.Leased += r.Leased
		acc.Done += r.Done
		acc.Pass += r.Pass
		acc.Fail += r.Fail
		acc.Pending += r.Pending
		acc.TaskFaults += r.TaskFaults
		acc.PromptTokens += r.PromptTokens
		acc.CompletionTokens += r.CompletionTokens
		acc.ReasoningTokens += r.ReasoningTokens
		if r.Done > 0 {
			var list []string
			if err := unmarshalText(catText, &list); err != nil {
				return Overview{}, fmt.Errorf("overview: categories %q: %w", catText, err)
			}
			for _, c := range list {
				ct := cats[c]
				if ct == nil {
					ct = &CategoryTally{Category: c}
					cats[c] = ct
				}
				ct.Pass += r.Pass
				ct.Fail += r.Fail
				ct.Pending += r.Pending
				ct.TaskFaults += r.TaskFaults
			}
		}
		f, err := parseTime(first)
		if err != nil {
			return Overview{}, fmt.Errorf("overview: %w", err)
		}
		l, err := parseTime(last)
		if err != nil {
			return Overview{}, fmt.Errorf("overview: %w", err)
		}
		sp := &ov.Span
		if !f.IsZero() && (sp.First.IsZero() || f.Before(sp.First)) {
			sp.First = f
		}
		if l.After(sp.Last) {
			sp.Last = l
		}
		sp.Judged += r.Done
		sp.Since += since
	}
	if err := rows.Err(); err != nil {
		return Overview{}, fmt.Errorf("overview: %w", err)
	}
	for _, ct := range cats {
		ov.Categories = append(ov.Categories, *ct)
	}
	sort.Slice(ov.Categories, func(i, j int) bool { return ov.Categories[i].Category < ov.Categories[j].Category })
	for c, n := range classes {
		ov.Classes = append(ov.Classes, ClassCount{Class: c, N: n})
	}
	sort.Slice(ov.Classes, func(i, j int) bool {
		if ov.Classes[i].N != ov.Classes[j].N {
			return ov.Classes[i].N > ov.Classes[j].N
		}
		return ov.Classes[i].Class < ov.Classes[j].Class
	})
	return ov, nil
}

// CampaignCategories lists the categories of a campaign's judged tasks,
// sorted.
func (s *Store) CampaignCategories(ctx context.Context, campaignID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT categories FROM tasks INDEXED BY tasks_outcomes
		WHERE campaign_id = ? AND state = 'done'`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("campaign categories: %w", err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var text string
		var list []string
		if err := rows.Scan(&text); err != nil {
			return nil, fmt.Errorf("campaign categories: %w", err)
		}
		if err := unmarshalText(text, &list); err != nil {
			return nil, fmt.Errorf("campaign categories: %w", err)
		}
		for _, c := range list {
			set[c] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("campaign categories: %w", err)
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// Bucket is what a campaign did in one interval of time.
type Bucket struct {
	Start  time.Time
	Judged int   // tasks judged in the interval
	Tokens int64 // their attempts' prompt + completion tokens
}

// Timeline buckets a campaign's judged tasks by the time they were judged
// into intervals of width (at least a second), oldest first; empty
// intervals are left out.
func (s *Store) Timeline(ctx context.Context, campaignID string, width time.Duration) ([]Bucket, error) {
	width = max(width, time.Second)
	// Group by a prefix of the stored time (a string: no date parsing per
	// row), as coarse as the width allows, and bucket the groups here.
	prefix := 19 // "2006-01-02T15:04:05"
	switch {
	case width%(24*time.Hour) == 0:
		prefix = 10
	case width%time.Hour == 0:
		prefix = 13
	case width%time.Minute == 0:
		prefix = 16
	}
	rows, err := s.r.QueryContext(ctx, `SELECT substr(done_at, 1, ?2) AS p, COUNT(*), SUM(prompt_tokens + completion_tokens)
		FROM tasks INDEXED BY tasks_judged
		WHERE campaign_id = ?1 AND done_at IS NOT NULL
		GROUP BY p ORDER BY p`, campaignID, prefix)
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	defer rows.Close()
	layout := "2006-01-02T15:04:05"[:prefix]
	var out []Bucket
	for rows.Next() {
		var p string
		var n int
		var tok int64
		if err := rows.Scan(&p, &n, &tok); err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		t, err := time.Parse(layout, p)
		if err != nil {
			return nil, fmt.Errorf("timeline: stored time %q: %w", p, err)
		}
		start := t.Truncate(width)
		if k := len(out); k > 0 && out[k-1].Start.Equal(start) {
			out[k-1].Judged += n
			out[k-1].Tokens += tok
			continue
		}
		out = append(out, Bucket{Start: start, Judged: n, Tokens: tok})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	return out, nil
}

// Span is when a campaign's tasks were judged: the first and last times
// (zero when none was), how many in all, and how many at or after a given
// time.
type Span struct {
	First, Last time.Time
	Judged      int
	Since       int
}

// JudgedSpan reads a campaign's span of judged tasks (for throughput and
// ETA).
func (s *Store) JudgedSpan(ctx context.Context, campaignID string, since time.Time) (Span, error) {
	var sp Span
	var first, last sql.NullString
	// Each part is a seek or a range of the index ordered by done_at.
	err := s.r.QueryRowContext(ctx, `SELECT
			(SELECT MIN(done_at) FROM tasks INDEXED BY tasks_judged WHERE campaign_id = ?1 AND done_at IS NOT NULL),
			(SELECT MAX(done_at) FROM tasks INDEXED BY tasks_judged WHERE campaign_id = ?1 AND done_at IS NOT NULL),
			(SELECT COUNT(*) FROM tasks INDEXED BY tasks_judged WHERE campaign_id = ?1 AND done_at IS NOT NULL),
			(SELECT COUNT(*) FROM tasks INDEXED BY tasks_judged WHERE campaign_id = ?1 AND done_at >= ?2)`,
		campaignID, fmtTime(since)).Scan(&first, &last, &sp.Judged, &sp.Since)
	if err != nil {
		return Span{}, fmt.Errorf("judged span: %w", err)
	}
	if sp.First, err = parseTime(first); err != nil {
		return Span{}, fmt.Errorf("judged span: %w", err)
	}
	if sp.Last, err = parseTime(last); err != nil {
		return Span{}, fmt.Errorf("judged span: %w", err)
	}
	return sp, nil
}

// VerdictFilter selects verdicts to browse; zero fields select everything.
type VerdictFilter struct {
	Category string // tasks with this category
	Class    string // latest verdicts of this failure class
	Model    string // attempts by this model
	Round    int    // this round; < 0 every round
	// Outcome is an Outcome ("pass", "fail", "pending", "task_fault") or
	// "" (any).
	Outcome string
}

// VerdictRow is one judged task in the browser: no transcript, no
// artifacts, the first line of the diagnostic.
type VerdictRow struct {
	Seq        int64 // the task's claim sequence: the page key
	TaskID     string
	TaskKey    string
	Round      int
	Categories []string
	AttemptID  string
	Model      string
	// Pass is a complete pass (never a pending one); Pending and
	// TaskFault are the other outcomes that are no failure.
	Pass       bool
	Pending    bool
	TaskFault  bool
	Class      string
	Stage      string
	Diagnostic string // first line
	Tokens     int64
	LatencyMS  int64
	FinishedAt time.Time
}

// MaxBrowse bounds one page of BrowseVerdicts.
const MaxBrowse = 500

// BrowseVerdicts returns up to limit (<= MaxBrowse) judged tasks of a
// campaign that match f, in claim order, starting after the task sequence
// after (0: from the first). The next page starts after the last row's Seq;
// a page shorter than limit is the last.
func (s *Store) BrowseVerdicts(ctx context.Context, campaignID string, f VerdictFilter, after int64, limit int) ([]VerdictRow, error) {
	if limit <= 0 || limit > MaxBrowse {
		limit = MaxBrowse
	}
	var where []string
	args := []any{campaignID, after}
	if f.Category != "" {
		where = append(where, `EXISTS (SELECT 1 FROM json_each(t.categories) WHERE value = ?)`)
		args = append(args, f.Category)
	}
	if f.Class != "" {
		where = append(where, `t.class = ? AND t.outcome = 'fail'`)
		args = append(args, f.Class)
	}
	if f.Model != "" {
		where = append(where, `t.model = ?`)
		args = append(args, f.Model)
	}
	if f.Round >= 0 {
		where = append(where, `t.round = ?`)
		args = append(args, f.Round)
	}
	switch Outcome(f.Outcome) {
	case "":
	case OutcomePass, OutcomePending:
		where = append(where, `t.outcome = ?`)
		args = append(args, f.Outcome)
	case OutcomeFail:
		where = append(where, `t.outcome = 'fail' AND t.class <> ?`)
		args = append(args, ClassReferenceError)
	case OutcomeTaskFault:
		where = append(where, `t.outcome = 'fail' AND t.class = ?`)
		args = append(args, ClassReferenceError)
	default:
		return nil, fmt.Errorf("browse verdicts: outcome %q: want pass, fail, pending, task_fault or empty", f.Outcome)
	}
	// The page's tasks come from the covering index alone; only they are
	// joined to their attempt and verdict.
	q := `SELECT t.seq FROM tasks t INDEXED BY tasks_outcomes
		WHERE t.campaign_id = ? AND t.state = 'done' AND t.seq > ?`
	for _, w := range where {
		q += " AND " + w
	}
	q += ` ORDER BY t.seq LIMIT ?`
	args = append(args, limit)
	q = `SELECT t.seq, t.id, t.key, t.round, t.categories, a.id, a.model, v.pass, t.outcome = 'pending',
			v.class, v.stage, substr(v.diagnostic, 1, 400), a.prompt_tokens + a.completion_tokens, a.latency_ms, a.finished_at
		FROM (` + q + `) page JOIN tasks t ON t.seq = page.seq ` + latestVerdictJoin + `
		ORDER BY t.seq`
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("browse verdicts: %w", err)
	}
	defer rows.Close()
	var out []VerdictRow
	for rows.Next() {
		var r VerdictRow
		var cats string
		var finished sql.NullString
		if err := rows.Scan(&r.Seq, &r.TaskID, &r.TaskKey, &r.Round, &cats, &r.AttemptID, &r.Model, &r.Pass, &r.Pending,
			&r.Class, &r.Stage, &r.Diagnostic, &r.Tokens, &r.LatencyMS, &finished); err != nil {
			return nil, fmt.Errorf("browse verdicts: %w", err)
		}
		if err := unmarshalText(cats, &r.Categories); err != nil {
			return nil, fmt.Errorf("browse verdicts: task %s categories: %w", r.TaskID, err)
		}
		if r.FinishedAt, err = parseTime(finished); err != nil {
			return nil, fmt.Errorf("browse verdicts: %w", err)
		}
		if r.Pending {
			r.Pass = false
		}
		r.TaskFault = !r.Pass && r.Class == ClassReferenceError
		r.Diagnostic, _, _ = strings.Cut(r.Diagnostic, "\n")
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("browse verdicts: %w", err)
	}
	return out, nil
}

// CampaignModels lists the models whose attempts were judged in a
// campaign, sorted.
func (s *Store) CampaignModels(ctx context.Context, campaignID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT DISTINCT model FROM tasks INDEXED BY tasks_outcomes
		WHERE campaign_id = ? AND state = 'done' ORDER BY model`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("campaign models: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("campaign models: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Attempt returns one attempt by id, or ErrNotFound.
func (s *Store) Attempt(ctx context.Context, id string) (Attempt, error) {
	a, err := scanAttempt(s.r.QueryRowContext(ctx, `SELECT `+attemptCols+` FROM attempts a WHERE a.id = ?`, id))
	if err != nil {
		return Attempt{}, fmt.Errorf("attempt %s: %w", id, notFound(err))
	}
	return a, nil
}

package runs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func testLabels() *VerdictLabels {
	return &VerdictLabels{Class: "wrong_output", DiagnosticKind: "wrong.value", Evidence: "line 3: 4 != 3",
		Features: []string{"loop", "switch_many"}, Categories: []string{"switch_many"}, Domain: "general compute"}
}

// TestVerdictLabels stores labels with Finish and AddRescore and reads
// them back through Results, Verdicts, ForkCampaign and Export.
func TestVerdictLabels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 2))
	l, err := s.Claim(ctx, c.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := testVerdict(false)
	v.Labels = testLabels()
	if err := s.Finish(ctx, l, testAttempt("a", 1), v); err != nil {
		t.Fatal(err)
	}
	// A verdict without labels stays without (NULL, not an empty object).
	l2, err := s.Claim(ctx, c.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, l2, testAttempt("b", 1), testVerdict(true)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 2 {
		t.Fatalf("results: %d %v", len(res), err)
	}
	if got := res[0].Verdict.Labels; got == nil || !reflect.DeepEqual(*got, *testLabels()) {
		t.Fatalf("labels round trip: %+v", got)
	}
	if res[1].Verdict.Labels != nil {
		t.Fatalf("verdict stored without labels reads %+v", res[1].Verdict.Labels)
	}

	// Rescores carry their own labels; empty lists are stored as [].
	re := testVerdict(true)
	re.Labels = &VerdictLabels{DiagnosticKind: "pass"}
	stored, err := s.AddRescore(ctx, res[0].Attempt.ID, re)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Labels == nil || stored.Labels.Features == nil || stored.Labels.Categories == nil {
		t.Fatalf("rescore labels as returned: %+v", stored.Labels)
	}
	vs, err := s.Verdicts(ctx, res[0].Attempt.ID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("verdicts: %d %v", len(vs), err)
	}
	if vs[0].Labels == nil || vs[0].Labels.DiagnosticKind != "wrong.value" ||
		vs[1].Labels == nil || vs[1].Labels.DiagnosticKind != "pass" || vs[1].Labels.Features == nil || len(vs[1].Labels.Features) != 0 {
		t.Fatalf("revisions' labels: %+v, %+v", vs[0].Labels, vs[1].Labels)
	}

	// A fork copies the latest revision's labels.
	if err := s.SetCampaignState(ctx, c.ID, CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	fork, err := s.ForkCampaign(ctx, c.ID, Campaign{Name: "fork"})
	if err != nil {
		t.Fatal(err)
	}
	fres, err := s.Results(ctx, fork.ID, -1)
	if err != nil || len(fres) != 2 {
		t.Fatalf("fork results: %d %v", len(fres), err)
	}
	if fres[0].Verdict.Labels == nil || fres[0].Verdict.Labels.DiagnosticKind != "pass" || fres[1].Verdict.Labels != nil {
		t.Fatalf("fork labels: %+v, %+v", fres[0].Verdict.Labels, fres[1].Verdict.Labels)
	}

	// Export: labels inside the verdict object, absent where none were stored.
	var buf bytes.Buffer
	if _, err := s.Export(ctx, c.ID, &buf, ExportOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d export lines", len(lines))
	}
	var rec struct {
		Verdict map[string]json.RawMessage `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if string(rec.Verdict["labels"]) != `{"class":"","diagnostic_kind":"pass","features":[],"categories":[]}` {
		t.Errorf("exported labels %s", rec.Verdict["labels"])
	}
	rec.Verdict = nil
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.Verdict["labels"]; ok {
		t.Errorf("a verdict without labels exports %s", rec.Verdict["labels"])
	}
}

// TestMigrateVersion1 opens a database written with schema version 1 (the
// schema before verdict labels, rows inserted by hand as that version
// wrote them): Open adds the labels column, old verdicts read without
// labels, new ones store them.
func TestMigrateVersion1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, dbFile)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	now := fmtTime(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	stmts := []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		migrations()[0],
		`INSERT INTO schema_version (version) VALUES (1)`,
		`INSERT INTO campaigns (id, name, lane, spec, state, round, created_at, updated_at)
			VALUES ('c1', 'old', 'c2x86', x'', 'done', 0, '` + now + `', '` + now + `')`,
		`INSERT INTO tasks (id, campaign_id, round, key, lane, files, meta, categories, prompt, state, leases, created_at)
			VALUES ('t1', 'c1', 0, 'r0/a#0', 'c2x86', '{"function.c":"int f(void){return 1;}"}', '{}', '["int_arith"]', '', 'queued', 1, '` + now + `'),
			       ('t2', 'c1', 0, 'r0/b#0', 'c2x86', '{}', '{}', '[]', '', 'queued', 0, '` + now + `')`,
		`INSERT INTO attempts (id, task_id, number, endpoint, model, answer, prompt_tokens, completion_tokens, reasoning_tokens,
			prompt_source, completion_source, reasoning_source, latency_ms, ttft_ms, calls, turns, tool_calls, repair_turns, error, saved_at)
			VALUES ('a1', 't1', 1, 'e', 'm', 'f: ret', 1, 2, 0, 'server', 'server', 'none', 10, 1, 1, 1, 0, 0, '', '` + now + `')`,
		`INSERT INTO verdicts (id, attempt_id, task_id, revision, pass, class, stage, stages, diagnostic, measurements, artifacts, toolchain, policy, created_at)
			VALUES ('v1', 'a1', 't1', 0, 0, 'wrong_output', 'compare', NULL, 'differs', '{}', '{}', '{}', 'p', '` + now + `')`,
		`UPDATE tasks SET state = 'done', judged_attempt_id = 'a1', done_at = '` + now + `' WHERE id = 't1'`,
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	var version int
	if err := s.r.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version); err != nil || version != len(migrations()) {
		t.Fatalf("schema version %d %v, want %d", version, err, len(migrations()))
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.Results(ctx, "c1", -1)
	if err != nil || len(res) != 1 {
		t.Fatalf("old results: %d %v", len(res), err)
	}
	if r := res[0]; r.Verdict.Labels != nil || r.Verdict.Class != "wrong_output" || r.Task.Categories[0] != "int_arith" {
		t.Fatalf("old verdict: %+v", r.Verdict)
	}
	// The old campaign can go on: a new verdict stores its labels.
	if err := s.SetCampaignState(ctx, "c1", CampaignFailed, ""); err == nil {
		t.Fatal("done campaign changed state")
	}
	c := mustCampaign(t, s, "new")
	mustAdd(t, s, c.ID, mkTasks(0, 1))
	l, err := s.Claim(ctx, c.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := testVerdict(false)
	v.Labels = testLabels()
	if err := s.Finish(ctx, l, testAttempt("k", 1), v); err != nil {
		t.Fatal(err)
	}
	nres, err := s.Results(ctx, c.ID, -1)
	if err != nil || len(nres) != 1 || nres[0].Verdict.Labels == nil || nres[0].Verdict.Labels.Domain != "general compute" {
		t.Fatalf("new results after migration: %+v %v", nres, err)
	}
	// Opening again does not migrate again.
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("reopen after migration: %v", err)
	}
	s2.Close()
}

package runs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// testClock is a settable clock for lease expiry tests.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func withClock(s *Store) *testClock {
	c := &testClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.now = c.now
	return c
}

func mustCampaign(t testing.TB, s *Store, name string) Campaign {
	t.Helper()
	c, err := s.CreateCampaign(context.Background(), Campaign{Name: name, Lane: "c2x86", Spec: []byte("lane: c2x86\n"), SpecDir: "/specs"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mkTasks(round, n int) []Task {
	out := make([]Task, n)
	for i := range out {
		out[i] = Task{
			Round:      round,
			Key:        fmt.Sprintf("r%d/item%04d#0", round, i),
			Files:      map[string]string{"main.c": fmt.Sprintf("int f(void){return %d;}", i)},
			Meta:       map[string]string{"item": fmt.Sprint(i)},
			Categories: []string{"arith"},
		}
	}
	return out
}

func mustAdd(t testing.TB, s *Store, cid string, tasks []Task) {
	t.Helper()
	if _, err := s.AddTasks(context.Background(), cid, tasks); err != nil {
		t.Fatal(err)
	}
}

func testAttempt(key string, n int) Attempt {
	return Attempt{
		Endpoint: "http://gpu:8000/v1", Model: "qwen-coder",
		Answer:     fmt.Sprintf("answer %s #%d", key, n),
		Transcript: []byte(fmt.Sprintf(`[{"role":"user","content":%q}]`, key)),
		Usage: Usage{PromptTokens: 100, CompletionTokens: 50, ReasoningTokens: 7,
			PromptSource: "server", CompletionSource: "server", ReasoningSource: "estimate",
			LatencyMS: 1200, TTFTMS: 90, Calls: 2},
		Turns: 2, ToolCalls: 1, RepairTurns: 1,
		StartedAt:  time.Date(2025, 1, 1, 0, 0, 0, 123, time.FixedZone("x", 3600)),
		FinishedAt: time.Date(2025, 1, 1, 0, 1, 0, 0, time.UTC),
	}
}

func testVerdict(pass bool) Verdict {
	v := Verdict{Pass: pass, Stage: "run", Stages: []byte(`[{"name":"assemble","ok":true}]`),
		Measurements: map[string]float64{"cycles": 1234.5},
		Toolchain:    map[string]string{"gcc": "12.2.0"}, Policy: "c2x86/v1"}
	if !pass {
		v.Class, v.Diagnostic = "wrong_output", "expected 3 got 4"
	}
	return v
}

func TestCampaignCRUD(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	clk := withClock(s)

	a := mustCampaign(t, s, "alpha")
	clk.advance(time.Second)
	b := mustCampaign(t, s, "alpha") // same name, newer
	clk.advance(time.Second)
	c := mustCampaign(t, s, "gamma")
	if a.State != CampaignQueued || a.Round != 0 || a.ID == "" || !a.CreatedAt.Equal(a.UpdatedAt) {
		t.Fatalf("created campaign = %+v", a)
	}

	got, err := s.Campaign(ctx, a.ID)
	if err != nil || got.ID != a.ID || string(got.Spec) != "lane: c2x86\n" || got.SpecDir != "/specs" || got.Lane != "c2x86" || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("by id: %+v %v", got, err)
	}
	if got, err := s.Campaign(ctx, "alpha"); err != nil || got.ID != b.ID {
		t.Fatalf("by name: got %s want newest %s (%v)", got.ID, b.ID, err)
	}
	if got, err := s.Campaign(ctx, c.ID[:8]); err != nil || got.ID != c.ID {
		t.Fatalf("by prefix: %+v %v", got, err)
	}
	if _, err := s.Campaign(ctx, "zzzz-nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := s.Campaign(ctx, c.ID[:3]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("short prefix must not match: %v", err)
	}

	// Two ids sharing a prefix: ambiguous.
	for _, id := range []string{"abcd0000-0000-4000-8000-000000000001", "abcd0000-0000-4000-8000-000000000002"} {
		if _, err := s.w.ExecContext(ctx, `INSERT INTO campaigns (`+campaignCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
			id, "x", "c2x86", []byte{}, "/specs", "", "queued", 0, "", fmtTime(clk.now()), fmtTime(clk.now())); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Campaign(ctx, "abcd"); !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("ambiguous prefix: %v", err)
	}
	if got, err := s.Campaign(ctx, "ABCD0000-0000-4000-8000-000000000002"); err != nil || got.ID != "abcd0000-0000-4000-8000-000000000002" {
		t.Fatalf("upper-case full id as prefix: %v", err)
	}

	list, err := s.ListCampaigns(ctx)
	if err != nil || len(list) != 5 || list[2].ID != c.ID || list[4].ID != a.ID {
		t.Fatalf("list: %d %v", len(list), err)
	}

	if err := s.SetCampaignRound(ctx, a.ID, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCampaignRound(ctx, "nope", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("round on missing: %v", err)
	}
	if err := s.SetCampaignRound(ctx, a.ID, -1); err == nil {
		t.Fatal("negative round accepted")
	}
	if got, _ := s.Campaign(ctx, a.ID); got.Round != 3 {
		t.Fatalf("round = %d", got.Round)
	}
}

func TestCampaignTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	tests := []struct {
		path []CampaignState
		ok   bool
	}{
		{[]CampaignState{CampaignRunning, CampaignDone}, true},
		{[]CampaignState{CampaignRunning, CampaignRunning, CampaignFailed, CampaignQueued, CampaignRunning}, true},
		{[]CampaignState{CampaignRunning, CampaignQueued, CampaignCancelled}, true},
		{[]CampaignState{CampaignFailed}, true},
		{[]CampaignState{CampaignDone}, false},
		{[]CampaignState{CampaignRunning, CampaignDone, CampaignRunning}, false},
		{[]CampaignState{CampaignCancelled, CampaignQueued}, false},
		{[]CampaignState{CampaignCancelled, CampaignCancelled}, false},
		{[]CampaignState{CampaignFailed, CampaignDone}, false},
	}
	for i, tc := range tests {
		c := mustCampaign(t, s, fmt.Sprint("c", i))
		var err error
		for j, st := range tc.path {
			err = s.SetCampaignState(ctx, c.ID, st, fmt.Sprint("step ", j))
			if err != nil {
				break
			}
		}
		if tc.ok != (err == nil) {
			t.Errorf("path %v: err = %v", tc.path, err)
			continue
		}
		got, _ := s.Campaign(ctx, c.ID)
		if tc.ok {
			if got.State != tc.path[len(tc.path)-1] || got.Note != fmt.Sprint("step ", len(tc.path)-1) {
				t.Errorf("path %v: ended %s %q", tc.path, got.State, got.Note)
			}
			continue
		}
		var te *TransitionError
		if !errors.Is(err, ErrBadTransition) || !errors.As(err, &te) {
			t.Errorf("path %v: want TransitionError, got %v", tc.path, err)
			continue
		}
		if CanTransition(te.From, te.To) {
			t.Errorf("CanTransition(%s, %s) is true but the store refused it", te.From, te.To)
		}
		if got.State != te.From {
			t.Errorf("refused change moved the campaign to %s", got.State)
		}
	}
	if err := s.SetCampaignState(ctx, "missing", CampaignRunning, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing campaign: %v", err)
	}
	c := mustCampaign(t, s, "bad")
	if err := s.SetCampaignState(ctx, c.ID, "paused", ""); err == nil {
		t.Error("unknown state accepted")
	}
}

func TestAddTasksIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")

	n, err := s.AddTasks(ctx, c.ID, mkTasks(0, 3))
	if err != nil || n != 3 {
		t.Fatalf("first add: %d %v", n, err)
	}
	batch := append(mkTasks(0, 5), mkTasks(0, 5)[4]) // 2 new, 1 duplicated in batch
	batch[3].Files["main.c"] = "changed"
	if n, err := s.AddTasks(ctx, c.ID, batch); err != nil || n != 2 {
		t.Fatalf("second add: %d %v", n, err)
	}
	if n, err := s.AddTasks(ctx, c.ID, mkTasks(0, 5)); err != nil || n != 0 {
		t.Fatalf("third add: %d %v", n, err)
	}
	tasks, err := s.Tasks(ctx, c.ID, -1)
	if err != nil || len(tasks) != 5 {
		t.Fatalf("tasks: %d %v", len(tasks), err)
	}
	for i, tk := range tasks {
		if tk.Key != fmt.Sprintf("r0/item%04d#0", i) || tk.Lane != "c2x86" || tk.State != TaskQueued || tk.Leases != 0 ||
			tk.Categories[0] != "arith" || tk.Meta["item"] != fmt.Sprint(i) || tk.ID == "" || tk.CampaignID != c.ID {
			t.Errorf("task %d = %+v", i, tk)
		}
	}
	if tasks[3].Files["main.c"] != "changed" {
		t.Errorf("files = %v", tasks[3].Files)
	}
	got, err := s.Task(ctx, tasks[2].ID)
	if err != nil || got.Key != tasks[2].Key {
		t.Fatalf("task by id: %v", err)
	}
	if _, err := s.Task(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing task: %v", err)
	}

	// The same key in another campaign is a different task.
	c2 := mustCampaign(t, s, "c2")
	if n, err := s.AddTasks(ctx, c2.ID, []Task{{Key: "r0/item0000#0", Lane: "other"}}); err != nil || n != 1 {
		t.Fatalf("other campaign: %d %v", n, err)
	}
	if ts, _ := s.Tasks(ctx, c2.ID, 0); len(ts) != 1 || ts[0].Lane != "other" || ts[0].Files == nil {
		t.Fatalf("other campaign tasks: %+v", ts)
	}

	if _, err := s.AddTasks(ctx, "missing", mkTasks(0, 1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing campaign: %v", err)
	}
	if _, err := s.AddTasks(ctx, c.ID, []Task{{Key: "new"}, {Key: ""}}); err == nil {
		t.Fatal("empty key accepted")
	}
	if ts, _ := s.Tasks(ctx, c.ID, -1); len(ts) != 5 {
		t.Fatalf("failed batch left %d tasks", len(ts))
	}
}

func TestClaimOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	other := mustCampaign(t, s, "other")
	mustAdd(t, s, other.ID, mkTasks(0, 2))

	if _, err := s.Claim(ctx, c.ID, "w", time.Minute); !errors.Is(err, ErrNoTask) {
		t.Fatalf("empty campaign: %v", err)
	}
	mustAdd(t, s, c.ID, mkTasks(0, 3))
	mustAdd(t, s, c.ID, mkTasks(1, 2))
	var keys []string
	for {
		l, err := s.Claim(ctx, c.ID, "w1", time.Minute)
		if errors.Is(err, ErrNoTask) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if l.Number != 1 || l.Task.State != TaskLeased || l.Task.Leases != 1 || l.Worker != "w1" || l.Task.CampaignID != c.ID {
			t.Fatalf("lease = %+v", l)
		}
		keys = append(keys, l.Task.Key)
	}
	want := []string{"r0/item0000#0", "r0/item0001#0", "r0/item0002#0", "r1/item0000#0", "r1/item0001#0"}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("claim order %v, want %v", keys, want)
	}
	cnt, err := s.Counts(ctx, c.ID, -1)
	if err != nil || cnt.Tasks != 5 || cnt.Leased != 5 || cnt.Queued != 0 {
		t.Fatalf("counts %+v %v", cnt, err)
	}
	if cnt, _ := s.Counts(ctx, other.ID, -1); cnt.Queued != 2 {
		t.Fatalf("other campaign touched: %+v", cnt)
	}
	if _, err := s.Claim(ctx, c.ID, "w", 0); err == nil {
		t.Fatal("zero ttl accepted")
	}
}

func TestLeaseExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	clk := withClock(s)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 2))

	old, err := s.Claim(ctx, c.ID, "old", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Claim(ctx, c.ID, "other", time.Minute)
	if err != nil || second.Task.ID == old.Task.ID {
		t.Fatalf("second claim: %v", err)
	}
	if _, err := s.SaveAnswer(ctx, old, testAttempt(old.Task.Key, 1)); err != nil {
		t.Fatal(err)
	}
	clk.advance(30 * time.Second)
	if err := s.Renew(ctx, second, time.Minute); err != nil { // second now expires at +90s
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, c.ID, "new", time.Minute); !errors.Is(err, ErrNoTask) {
		t.Fatalf("nothing expired yet: %v", err)
	}
	clk.advance(45 * time.Second) // old expired (+60s), second not (+90s)
	nl, err := s.Claim(ctx, c.ID, "new", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if nl.Task.ID != old.Task.ID || nl.Number != 2 || nl.Task.Leases != 2 {
		t.Fatalf("reclaimed lease = %+v", nl)
	}
	if _, err := s.Claim(ctx, c.ID, "new", time.Minute); !errors.Is(err, ErrNoTask) {
		t.Fatalf("renewed lease was taken: %v", err)
	}

	// The old lease is dead everywhere.
	if err := s.Renew(ctx, old, time.Minute); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("renew old: %v", err)
	}
	if _, err := s.SaveAnswer(ctx, old, testAttempt(old.Task.Key, 1)); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("save old: %v", err)
	}
	if err := s.Finish(ctx, old, testAttempt(old.Task.Key, 1), testVerdict(true)); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("finish old: %v", err)
	}
	if err := s.Release(ctx, old); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("release old: %v", err)
	}

	if err := s.Finish(ctx, nl, testAttempt(nl.Task.Key, 2), testVerdict(false)); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, nl, testAttempt(nl.Task.Key, 2), testVerdict(true)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("finish twice: %v", err)
	}
	if err := s.Renew(ctx, nl, time.Minute); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("renew finished: %v", err)
	}
	atts, err := s.Attempts(ctx, old.Task.ID)
	if err != nil || len(atts) != 2 || atts[0].Number != 1 || atts[1].Number != 2 {
		t.Fatalf("attempts: %+v %v", atts, err)
	}
	res, err := s.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 1 || res[0].Attempt.Number != 2 || res[0].Verdict.Pass || res[0].Task.State != TaskDone {
		t.Fatalf("results: %+v %v", res, err)
	}
	vs, _ := s.Verdicts(ctx, atts[0].ID)
	if len(vs) != 0 {
		t.Fatalf("lost attempt has verdicts: %+v", vs)
	}
	cnt, _ := s.Counts(ctx, c.ID, 0)
	if cnt.Done != 1 || cnt.Leased != 1 || cnt.Fail != 1 || cnt.Pass != 0 || cnt.PromptTokens != 200 {
		t.Fatalf("counts = %+v", cnt)
	}
}

func TestSaveAnswerFinishRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, []Task{{Key: "k", Prompt: "translate this", Files: map[string]string{"a.c": "x"}}})
	l, err := s.Claim(ctx, c.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	in := testAttempt("k", 1)
	if _, err := s.SaveAnswer(ctx, l, Attempt{Transcript: []byte("{not json")}); err == nil {
		t.Fatal("invalid transcript accepted")
	}
	saved, err := s.SaveAnswer(ctx, l, in)
	if err != nil || saved.ID == "" || saved.Number != 1 || saved.TaskID != l.Task.ID {
		t.Fatalf("save: %+v %v", saved, err)
	}
	in.Answer = "answer v2"
	again, err := s.SaveAnswer(ctx, l, in) // no ID given: same row by (task, number)
	if err != nil || again.ID != saved.ID {
		t.Fatalf("save again: %s vs %s %v", again.ID, saved.ID, err)
	}
	art, err := s.Blobs().Put([]byte("binary"))
	if err != nil {
		t.Fatal(err)
	}
	v := testVerdict(true)
	v.Artifacts = map[string]string{"a.out": art}
	bad := v
	bad.Artifacts = map[string]string{"x": "../../etc/passwd"}
	if err := s.Finish(ctx, l, again, bad); !errors.Is(err, ErrBadHash) {
		t.Fatalf("bad artifact hash: %v", err)
	}
	in.Answer = "final"
	if err := s.Finish(ctx, l, in, v); err != nil {
		t.Fatal(err)
	}
	res, err := s.Results(ctx, c.ID, 0)
	if err != nil || len(res) != 1 {
		t.Fatalf("results: %v", err)
	}
	r := res[0]
	a := r.Attempt
	if a.ID != saved.ID || a.Answer != "final" || string(a.Transcript) != string(in.Transcript) || a.Usage != in.Usage ||
		a.Turns != 2 || a.ToolCalls != 1 || a.RepairTurns != 1 || !a.StartedAt.Equal(in.StartedAt) ||
		!a.FinishedAt.Equal(in.FinishedAt) || a.StartedAt.Location() != time.UTC || a.Model != "qwen-coder" {
		t.Fatalf("attempt round trip: %+v", a)
	}
	rv := r.Verdict
	if rv.Revision != 0 || !rv.Pass || rv.AttemptID != a.ID || rv.TaskID != r.Task.ID || rv.Stage != "run" ||
		string(rv.Stages) != string(v.Stages) || rv.Measurements["cycles"] != 1234.5 || rv.Artifacts["a.out"] != art ||
		rv.Toolchain["gcc"] != "12.2.0" || rv.Policy != "c2x86/v1" || rv.CreatedAt.IsZero() {
		t.Fatalf("verdict round trip: %+v", rv)
	}
	if r.Task.Prompt != "translate this" || r.Task.Files["a.c"] != "x" || r.Task.State != TaskDone {
		t.Fatalf("task: %+v", r.Task)
	}
	if atts, _ := s.Attempts(ctx, l.Task.ID); len(atts) != 1 {
		t.Fatalf("%d attempt rows, want 1", len(atts))
	}
	if _, err := s.SaveAnswer(ctx, l, in); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("save after finish: %v", err)
	}
}

func TestReleaseAndReclaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 3))
	l, err := s.Claim(ctx, c.ID, "w", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, l); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("release twice: %v", err)
	}
	l2, err := s.Claim(ctx, c.ID, "w", time.Hour)
	if err != nil || l2.Task.ID != l.Task.ID || l2.Number != 2 {
		t.Fatalf("after release: %+v %v", l2, err)
	}
	if _, err := s.Claim(ctx, c.ID, "w", time.Hour); err != nil {
		t.Fatal(err)
	}
	n, err := s.ReclaimAll(ctx, c.ID)
	if err != nil || n != 2 {
		t.Fatalf("reclaim: %d %v", n, err)
	}
	if err := s.Finish(ctx, l2, testAttempt("x", 2), testVerdict(true)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("finish after reclaim: %v", err)
	}
	cnt, _ := s.Counts(ctx, c.ID, -1)
	if cnt.Queued != 3 || cnt.Leased != 0 {
		t.Fatalf("counts %+v", cnt)
	}
	l3, _ := s.Claim(ctx, c.ID, "w", time.Hour)
	if l3.Number != 3 {
		t.Fatalf("number after reclaim = %d", l3.Number)
	}
	if n, err := s.ReclaimAll(ctx, ""); err != nil || n != 1 {
		t.Fatalf("reclaim all campaigns: %d %v", n, err)
	}
}

func TestConcurrentClaimers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	const total, workers = 500, 8
	mustAdd(t, s, c.ID, mkTasks(0, total))

	var (
		mu      sync.Mutex
		claimed = map[string]int{}
		wg      sync.WaitGroup
		errs    = make(chan error, workers)
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprint("w", w)
			for {
				l, err := s.Claim(ctx, c.ID, worker, time.Hour)
				if errors.Is(err, ErrNoTask) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				claimed[l.Task.ID]++
				mu.Unlock()
				a, err := s.SaveAnswer(ctx, l, testAttempt(l.Task.Key, l.Number))
				if err != nil {
					errs <- err
					return
				}
				if err := s.Finish(ctx, l, a, testVerdict(l.Task.Key[len(l.Task.Key)-3] == '0')); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(claimed) != total {
		t.Fatalf("%d distinct tasks claimed, want %d", len(claimed), total)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("task %s claimed %d times", id, n)
		}
	}
	cnt, err := s.Counts(ctx, c.ID, -1)
	if err != nil || cnt.Done != total || cnt.Pass+cnt.Fail != total || cnt.Pass != 50 {
		t.Fatalf("counts %+v %v", cnt, err)
	}
	var verdicts int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM verdicts WHERE revision = 0`).Scan(&verdicts); err != nil || verdicts != total {
		t.Fatalf("verdicts = %d %v", verdicts, err)
	}
}

func TestRescore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 2))
	l, _ := s.Claim(ctx, c.ID, "w", time.Hour)
	a, err := s.SaveAnswer(ctx, l, testAttempt(l.Task.Key, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddRescore(ctx, a.ID, testVerdict(true)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rescore unjudged: %v", err)
	}
	if err := s.Finish(ctx, l, a, testVerdict(true)); err != nil {
		t.Fatal(err)
	}
	v1, err := s.AddRescore(ctx, a.ID, testVerdict(false))
	if err != nil || v1.Revision != 1 || v1.TaskID != l.Task.ID || v1.AttemptID != a.ID || v1.ID == "" {
		t.Fatalf("rescore 1: %+v %v", v1, err)
	}
	if cnt, _ := s.Counts(ctx, c.ID, -1); cnt.Pass != 0 || cnt.Fail != 1 {
		t.Fatalf("counts after failing rescore: %+v", cnt)
	}
	v2, err := s.AddRescore(ctx, a.ID, testVerdict(true))
	if err != nil || v2.Revision != 2 {
		t.Fatalf("rescore 2: %+v %v", v2, err)
	}
	res, _ := s.Results(ctx, c.ID, -1)
	if len(res) != 1 || res[0].Verdict.Revision != 2 || res[0].Verdict.ID != v2.ID || !res[0].Verdict.Pass {
		t.Fatalf("results use latest: %+v", res)
	}
	vs, err := s.Verdicts(ctx, a.ID)
	if err != nil || len(vs) != 3 || vs[0].Revision != 0 || !vs[0].Pass || vs[1].Pass || vs[1].Class != "wrong_output" {
		t.Fatalf("verdicts: %+v %v", vs, err)
	}
	if _, err := s.AddRescore(ctx, "nope", testVerdict(true)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rescore missing: %v", err)
	}
}

func TestReopenPersists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 1))
	l, _ := s.Claim(ctx, c.ID, "w", time.Hour)
	if err := s.Finish(ctx, l, testAttempt("k", 1), testVerdict(true)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	if err := s.r.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&version); err != nil || version != len(migrations()) {
		t.Fatalf("schema version %d %v", version, err)
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}
	var syncMode, fk int
	if err := s.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&syncMode); err != nil || syncMode != 2 {
		t.Fatalf("synchronous %d %v", syncMode, err)
	}
	if err := s.r.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign keys %d %v", fk, err)
	}
	if _, err := s.r.ExecContext(ctx, `DELETE FROM tasks`); err == nil {
		t.Fatal("read pool accepted a write")
	}
	res, err := s.Results(ctx, c.ID, -1)
	if err != nil || len(res) != 1 {
		t.Fatalf("results after reopen: %v", err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestWriterBeginsImmediate checks that write transactions take the write
// lock at BEGIN (so they queue on busy_timeout instead of failing later with
// SQLITE_BUSY on lock upgrade): while another connection holds the write lock,
// BeginTx on the store's writer must wait for it.
func TestWriterBeginsImmediate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	other, err := sql.Open("sqlite", filepath.Join(s.Dir(), dbFile)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	const hold = 300 * time.Millisecond
	go func() {
		time.Sleep(hold)
		conn.ExecContext(ctx, "COMMIT")
	}()
	start := time.Now()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	tx.Rollback()
	if waited < hold*2/3 {
		t.Fatalf("BeginTx returned after %v while another connection held the write lock: not IMMEDIATE", waited)
	}
}

package runs

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// finishAll claims and judges every queued task of c: task i gets outcome
// outcomes[i%len] ("pass", "fail:<class>", "pending") by model models[i%len].
func finishAll(t *testing.T, s *Store, clock *testClock, c Campaign, outcomes, models []string, finished time.Time) {
	t.Helper()
	ctx := context.Background()
	for i := 0; ; i++ {
		l, err := s.Claim(ctx, c.ID, "w", time.Minute)
		if err == ErrNoTask {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		a := testAttempt(l.Task.Key, l.Number)
		a.Model = models[i%len(models)]
		a.FinishedAt = finished.Add(time.Duration(i) * time.Second)
		var v Verdict
		switch o := outcomes[i%len(outcomes)]; {
		case o == "pass":
			v = testVerdict(true)
		case o == "pending":
			v = testVerdict(true)
			v.Stages = []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true}]`)
		default:
			v = testVerdict(false)
			v.Class = o[len("fail:"):]
			v.Diagnostic = "first line of " + v.Class + "\nsecond line"
		}
		if clock != nil {
			clock.t = finished.Add(time.Duration(i) * time.Second)
		}
		if err := s.Finish(ctx, l, a, v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBrowseQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	clock := withClock(s)
	c := mustCampaign(t, s, "browse")
	tasks := mkTasks(0, 30)
	for i := range tasks {
		if i%3 == 0 {
			tasks[i].Categories = []string{"arith", "loops"}
		}
	}
	mustAdd(t, s, c.ID, tasks)
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	// 30 tasks: outcomes cycle pass, fail:wrong_output, pending, fail:compile_error, pass.
	finishAll(t, s, clock, c, []string{"pass", "fail:wrong_output", "pending", "fail:compile_error", "pass"}, []string{"m1", "m2"}, start)
	mustAdd(t, s, c.ID, mkTasks(1, 4)) // round 1: queued, not judged

	ov, err := s.Overview(ctx, c.ID, start.Add(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cats := ov.Categories
	// Every task is "arith": 12 pass, 12 fail, 6 pending. "loops" is
	// tasks 0,3,...,27 (claim order = task order): outcomes i%5 for
	// i in {0,3,6,9,12,15,18,21,24,27} = 0,3,1,4,2,0,3,1,4,2 -> pass 4, fail 4, pending 2.
	want := []CategoryTally{{"arith", Tally{12, 12, 6, 0}}, {"loops", Tally{4, 4, 2, 0}}}
	if fmt.Sprint(cats) != fmt.Sprint(want) {
		t.Errorf("category tallies = %v, want %v", cats, want)
	}
	classes, err := s.FailureClasses(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(classes) != fmt.Sprint([]ClassCount{{"compile_error", 6}, {"wrong_output", 6}}) || fmt.Sprint(ov.Classes) != fmt.Sprint(classes) {
		t.Errorf("failure classes = %v", classes)
	}
	rounds := ov.Rounds
	if fmt.Sprint(rounds) != fmt.Sprint([]RoundTally{{0, 30, 0, 0, 30, Tally{12, 12, 6, 0}, 3000, 1500, 210}, {1, 4, 4, 0, 0, Tally{}, 0, 0, 0}}) {
		t.Errorf("round tallies = %v", rounds)
	}
	// Tasks are judged one a second from 10:00:00 (the test clock): 30 s
	// in 3 buckets of 10 s.
	tl, err := s.Timeline(ctx, c.ID, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 3 || tl[0].Judged != 10 || tl[0].Tokens != 1500 || !tl[0].Start.Equal(start) || !tl[2].Start.Equal(start.Add(20*time.Second)) {
		t.Errorf("timeline = %+v", tl)
	}
	sp, err := s.JudgedSpan(ctx, c.ID, start.Add(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if sp != ov.Span {
		t.Errorf("overview span %+v, judged span %+v", ov.Span, sp)
	}
	if tl5, err := s.Timeline(ctx, c.ID, time.Minute); err != nil || len(tl5) != 1 || tl5[0].Judged != 30 {
		t.Errorf("one-minute timeline = %+v, %v", tl5, err)
	}
	if cl, err := s.CampaignCategories(ctx, c.ID); err != nil || fmt.Sprint(cl) != "[arith loops]" {
		t.Errorf("categories = %v, %v", cl, err)
	}
	if sp.Judged != 30 || sp.Since != 10 || !sp.First.Equal(start) || !sp.Last.Equal(start.Add(29*time.Second)) {
		t.Errorf("span = %+v", sp)
	}
	models, err := s.CampaignModels(ctx, c.ID)
	if err != nil || fmt.Sprint(models) != "[m1 m2]" {
		t.Errorf("models = %v, %v", models, err)
	}

	// Paging through everything in pages of 7 visits every judged task once, in order.
	var seen []string
	var after int64
	for pages := 0; ; pages++ {
		rows, err := s.BrowseVerdicts(ctx, c.ID, VerdictFilter{Round: -1}, after, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			seen = append(seen, r.TaskKey)
		}
		if len(rows) < 7 {
			break
		}
		after = rows[len(rows)-1].Seq
		if pages > 10 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 30 || seen[0] != "r0/item0000#0" || seen[29] != "r0/item0029#0" {
		t.Errorf("paged %d rows: %v", len(seen), seen)
	}
	for _, tc := range []struct {
		f    VerdictFilter
		n    int
		desc string
	}{
		{VerdictFilter{Round: -1, Outcome: "pending"}, 6, "pending"},
		{VerdictFilter{Round: -1, Outcome: "pass"}, 12, "complete passes"},
		{VerdictFilter{Round: -1, Outcome: "fail"}, 12, "fails"},
		{VerdictFilter{Round: -1, Class: "wrong_output"}, 6, "class"},
		{VerdictFilter{Round: -1, Category: "loops"}, 10, "category"},
		{VerdictFilter{Round: -1, Category: "loops", Outcome: "pending"}, 2, "category and outcome"},
		{VerdictFilter{Round: -1, Model: "m2"}, 15, "model"},
		{VerdictFilter{Round: 1}, 0, "round without verdicts"},
		{VerdictFilter{Round: 0, Model: "nobody"}, 0, "unknown model"},
	} {
		rows, err := s.BrowseVerdicts(ctx, c.ID, tc.f, 0, MaxBrowse)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != tc.n {
			t.Errorf("%s: %d rows, want %d", tc.desc, len(rows), tc.n)
		}
		for _, r := range rows {
			switch {
			case tc.f.Outcome == "pending" && (!r.Pending || r.Pass):
				t.Errorf("%s: row %+v", tc.desc, r)
			case tc.f.Outcome == "pass" && (!r.Pass || r.Pending):
				t.Errorf("%s: row %+v", tc.desc, r)
			case tc.f.Class != "" && (r.Class != tc.f.Class || r.Diagnostic != "first line of "+tc.f.Class):
				t.Errorf("%s: row %+v", tc.desc, r)
			}
		}
	}
	if _, err := s.BrowseVerdicts(ctx, c.ID, VerdictFilter{Outcome: "maybe"}, 0, 10); err == nil {
		t.Error("unknown outcome accepted")
	}
	rows, _ := s.BrowseVerdicts(ctx, c.ID, VerdictFilter{Round: -1}, 0, 1)
	a, err := s.Attempt(ctx, rows[0].AttemptID)
	if err != nil || a.TaskID != rows[0].TaskID || a.Model != "m1" {
		t.Errorf("attempt = %+v, %v", a, err)
	}
	if _, err := s.Attempt(ctx, "nope"); err == nil {
		t.Error("unknown attempt found")
	}
}

// TestOutcomeColumns: the tasks' outcome columns follow every write that
// changes them (finish, rescore, fork), and the migration's backfill gives
// the same numbers as the writes did.
func TestOutcomeColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "outcomes")
	mustAdd(t, s, c.ID, mkTasks(0, 8))
	finishAll(t, s, nil, c, []string{"pass", "pending", "fail:wrong_output", "pending"}, []string{"m1"}, time.Now())
	before, err := s.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if before.Pass != 2 || before.Pending != 4 || before.Fail != 2 || before.PromptTokens != 800 || before.ReasoningTokens != 56 {
		t.Fatalf("counts %+v", before)
	}
	// A GPU host completes a pending verdict: the task becomes a pass.
	rows, err := s.BrowseVerdicts(ctx, c.ID, VerdictFilter{Round: -1, Outcome: "pending"}, 0, 1)
	if err != nil || len(rows) != 1 {
		t.Fatal(rows, err)
	}
	done := testVerdict(true)
	done.Stages = []byte(`[{"name":"compile","ok":true},{"name":"run","ok":true}]`)
	if _, err := s.AddRescore(ctx, rows[0].AttemptID, done); err != nil {
		t.Fatal(err)
	}
	after, err := s.Counts(ctx, c.ID, -1)
	if err != nil || after.Pass != 3 || after.Pending != 3 {
		t.Fatalf("after rescore: %+v %v", after, err)
	}
	// The migration's backfill recomputes the same columns from the rows.
	if _, err := s.w.ExecContext(ctx, `UPDATE tasks SET outcome = NULL, class = '', model = '', prompt_tokens = 0,
		completion_tokens = 0, reasoning_tokens = 0`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{refreshOutcomeSQL + ` WHERE judged_attempt_id IS NOT NULL`, refreshTokensSQL} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if again, err := s.Counts(ctx, c.ID, -1); err != nil || again != after {
		t.Errorf("backfilled counts %+v, want %+v (%v)", again, after, err)
	}
	if cl, err := s.FailureClasses(ctx, c.ID); err != nil || fmt.Sprint(cl) != "[{wrong_output 2}]" {
		t.Errorf("classes after backfill: %v %v", cl, err)
	}
	// A fork copies judged work with its outcome.
	if err := s.SetCampaignState(ctx, c.ID, CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCampaignState(ctx, c.ID, CampaignDone, ""); err != nil {
		t.Fatal(err)
	}
	fork, err := s.ForkCampaign(ctx, c.ID, Campaign{Name: "fork", Spec: []byte("lane: c2x86\n")})
	if err != nil {
		t.Fatal(err)
	}
	fc, err := s.Counts(ctx, fork.ID, -1)
	if err != nil || fc.Pass != after.Pass || fc.Pending != after.Pending || fc.Fail != after.Fail || fc.PromptTokens != after.PromptTokens {
		t.Errorf("fork counts %+v, source %+v (%v)", fc, after, err)
	}
}

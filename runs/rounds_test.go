package runs

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRoundRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "c")
	mustAdd(t, s, c.ID, mkTasks(0, 2))

	if _, err := s.Round(ctx, c.ID, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no record yet: %v", err)
	}
	if err := s.SaveRoundDraft(ctx, c.ID, 0, []byte("{not json")); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	if err := s.SaveRoundDraft(ctx, c.ID, 0, nil); err == nil {
		t.Fatal("empty record accepted")
	}
	if err := s.SaveRoundDraft(ctx, "nope", 0, []byte(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown campaign: %v", err)
	}
	if err := s.SaveRoundDraft(ctx, c.ID, 0, []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRoundDraft(ctx, c.ID, 0, []byte(`{"v":2}`)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Round(ctx, c.ID, 0)
	if err != nil || r.Final || string(r.Record) != `{"v":2}` || r.CreatedAt.IsZero() {
		t.Fatalf("draft: %+v %v", r, err)
	}

	// Tasks of the wrong round, or a campaign at another round, are refused
	// and leave nothing behind.
	if _, err := s.CloseRound(ctx, c.ID, 0, []byte(`{"v":3}`), mkTasks(2, 1)); err == nil {
		t.Fatal("task of round 2 accepted when closing round 0")
	}
	if _, err := s.CloseRound(ctx, c.ID, 1, []byte(`{}`), mkTasks(2, 1)); err == nil {
		t.Fatal("closed round 1 of a campaign at round 0")
	}
	if r, _ := s.Round(ctx, c.ID, 0); r.Final {
		t.Fatal("a refused close made the record final")
	}

	next := mkTasks(1, 3)
	n, err := s.CloseRound(ctx, c.ID, 0, []byte(`{"v":3}`), next)
	if err != nil || n != 3 {
		t.Fatalf("close: %d %v", n, err)
	}
	got, _ := s.Campaign(ctx, c.ID)
	if got.Round != 1 {
		t.Fatalf("campaign round %d, want 1", got.Round)
	}
	if ts, _ := s.Tasks(ctx, c.ID, 1); len(ts) != 3 {
		t.Fatalf("%d tasks in round 1", len(ts))
	}
	if _, err := s.CloseRound(ctx, c.ID, 0, []byte(`{"v":4}`), next); !errors.Is(err, ErrRoundClosed) {
		t.Fatalf("second close: %v", err)
	}
	if err := s.SaveRoundDraft(ctx, c.ID, 0, []byte(`{"v":5}`)); !errors.Is(err, ErrRoundClosed) {
		t.Fatalf("draft after close: %v", err)
	}
	// Closing a round with no next tasks (the campaign stops) keeps the round.
	if n, err := s.CloseRound(ctx, c.ID, 1, []byte(`{"stop":"rounds"}`), nil); err != nil || n != 0 {
		t.Fatalf("close last round: %d %v", n, err)
	}
	if got, _ := s.Campaign(ctx, c.ID); got.Round != 1 {
		t.Fatalf("campaign round %d after a stop, want 1", got.Round)
	}
	all, err := s.Rounds(ctx, c.ID)
	if err != nil || len(all) != 2 || all[0].Round != 0 || !all[0].Final || string(all[0].Record) != `{"v":3}` ||
		all[1].Round != 1 || string(all[1].Record) != `{"stop":"rounds"}` {
		t.Fatalf("rounds: %+v %v", all, err)
	}
}

func TestForkCampaign(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	src := mustCampaign(t, s, "src")
	mustAdd(t, s, src.ID, mkTasks(0, 3))
	// Task 0 passes, task 1 fails then is rescored as passing, task 2 stays queued.
	for i := 0; i < 2; i++ {
		l, err := s.Claim(ctx, src.ID, "w", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(ctx, l, testAttempt(l.Task.Key, l.Number), testVerdict(i == 0)); err != nil {
			t.Fatal(err)
		}
	}
	res, _ := s.Results(ctx, src.ID, -1)
	if _, err := s.AddRescore(ctx, res[1].Attempt.ID, testVerdict(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CloseRound(ctx, src.ID, 0, []byte(`{"r":0}`), mkTasks(1, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CloseRound(ctx, src.ID, 1, []byte(`{"stop":"rounds"}`), nil); err != nil {
		t.Fatal(err)
	}

	if _, err := s.ForkCampaign(ctx, src.ID, Campaign{}); err == nil {
		t.Fatal("fork without a name accepted")
	}
	if _, err := s.ForkCampaign(ctx, "nope", Campaign{Name: "x"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("fork of an unknown campaign: %v", err)
	}
	f, err := s.ForkCampaign(ctx, "src", Campaign{Name: "fork", Spec: []byte("lane: c2x86\nrefinement: {rounds: 2}\n")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Campaign(ctx, f.ID)
	if err != nil || got.Parent != src.ID || got.Round != 1 || got.State != CampaignQueued || got.Lane != "c2x86" ||
		string(got.Spec) != "lane: c2x86\nrefinement: {rounds: 2}\n" {
		t.Fatalf("fork campaign: %+v %v", got, err)
	}
	n, err := s.Counts(ctx, f.ID, -1)
	if err != nil || n.Tasks != 4 || n.Done != 2 || n.Pass != 2 || n.Queued != 2 || n.PromptTokens != 200 {
		t.Fatalf("fork counts: %+v %v", n, err)
	}
	fres, err := s.Results(ctx, f.ID, -1)
	if err != nil || len(fres) != 2 {
		t.Fatalf("fork results: %v", err)
	}
	for i, r := range fres {
		o := res[i]
		if r.Task.Key != o.Task.Key || r.Task.ID == o.Task.ID || r.Attempt.ID == o.Attempt.ID ||
			r.Attempt.Answer != o.Attempt.Answer || r.Attempt.Usage != o.Attempt.Usage || r.Verdict.Revision != 0 ||
			!r.Verdict.Pass || r.Task.CampaignID != f.ID {
			t.Errorf("fork result %d: %+v\nsource: %+v", i, r, o)
		}
	}
	// The fork's tasks are its own: claiming and judging there leaves the source alone.
	l, err := s.Claim(ctx, f.ID, "w", time.Minute)
	if err != nil || l.Task.Key != "r0/item0002#0" {
		t.Fatalf("claim in fork: %+v %v", l, err)
	}
	if err := s.Finish(ctx, l, testAttempt(l.Task.Key, l.Number), testVerdict(true)); err != nil {
		t.Fatal(err)
	}
	if sn, _ := s.Counts(ctx, src.ID, -1); sn.Done != 2 || sn.Queued != 2 {
		t.Errorf("source changed: %+v", sn)
	}
	// Only the record of the round before the source's current one is copied.
	rs, err := s.Rounds(ctx, f.ID)
	if err != nil || len(rs) != 1 || rs[0].Round != 0 || !rs[0].Final || string(rs[0].Record) != `{"r":0}` {
		t.Fatalf("fork rounds: %+v %v", rs, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}

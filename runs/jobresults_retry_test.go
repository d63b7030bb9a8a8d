package runs

import (
	"context"
	"testing"
)

// A pending verdict whose first try failed leaves PendingResults for
// TriedPendingResults; its tries are found by job id prefix; counts and
// the latest failures come from the same rows.
func TestTriedPendingResults(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	c, err := s.CreateCampaign(ctx, Campaign{Name: "tries", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	judgeTask(t, s, c.ID, "k1", Verdict{Pass: true, Stage: "run", Stages: []byte(pendingStages)})
	judgeTask(t, s, c.ID, "k2", Verdict{Pass: true, Stage: "run", Stages: []byte(pendingStages)})
	pend, err := s.PendingResults(ctx, c.ID, "complete-")
	if err != nil || len(pend) != 2 {
		t.Fatalf("pending %d %v", len(pend), err)
	}
	if tried, err := s.TriedPendingResults(ctx, c.ID, "complete-"); err != nil || len(tried) != 0 {
		t.Fatalf("tried before any job: %d %v", len(tried), err)
	}
	v1 := pend[0].Verdict.ID
	for _, r := range []JobResult{
		{JobID: "complete-" + v1, Kind: "complete", Status: JobFailed, Worker: "w1", Reason: "no GPU", Deliveries: 5},
		{JobID: "complete-" + v1 + "-try2", Kind: "complete", Status: JobDead, Reason: "dead letter", Deliveries: 5},
		{JobID: "complete-" + v1 + "x", Kind: "complete", Status: JobFailed, Reason: "another verdict's"},
		{JobID: "sleep-1", Kind: "sleep", Status: JobDone},
	} {
		if _, err := s.RecordJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if pend, err := s.PendingResults(ctx, c.ID, "complete-"); err != nil || len(pend) != 1 || pend[0].Verdict.ID == v1 {
		t.Fatalf("pending after a failed try: %d %v", len(pend), err)
	}
	tried, err := s.TriedPendingResults(ctx, c.ID, "complete-")
	if err != nil || len(tried) != 1 || tried[0].Verdict.ID != v1 {
		t.Fatalf("tried %d %v", len(tried), err)
	}
	jrs, err := s.JobResultsWithPrefix(ctx, "complete-"+v1)
	if err != nil || len(jrs) != 3 {
		t.Fatalf("tries of %s: %d %v", v1, len(jrs), err)
	}
	counts, err := s.JobResultCounts(ctx)
	if err != nil || counts[JobDone] != 1 || counts[JobFailed] != 2 || counts[JobDead] != 1 {
		t.Errorf("counts %v %v", counts, err)
	}
	fails, err := s.LatestJobFailures(ctx, 2)
	if err != nil || len(fails) != 2 {
		t.Fatalf("failures %d %v", len(fails), err)
	}
	for _, f := range fails {
		if f.Status == JobDone {
			t.Errorf("a done job among the failures: %+v", f)
		}
	}
}

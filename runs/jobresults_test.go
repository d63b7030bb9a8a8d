package runs

import (
	"context"
	"testing"
)

// A job's result makes one verdict revision, however often it is stored;
// PendingResults stops offering a pending verdict once a job took it.
func TestAddJobRescoreIdempotent(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	c, err := s.CreateCampaign(ctx, Campaign{Name: "jobs", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	judgeTask(t, s, c.ID, "k1", Verdict{Pass: true, Stage: "run", Stages: []byte(pendingStages)})
	pend, err := s.PendingResults(ctx, c.ID, "complete-")
	if err != nil || len(pend) != 1 {
		t.Fatalf("pending %d %v", len(pend), err)
	}
	attempt, jobID := pend[0].Attempt.ID, "complete-"+pend[0].Verdict.ID
	v := Verdict{Pass: true, Stage: "run", Stages: []byte(completeStages)}
	rec := JobResult{JobID: jobID, Kind: "complete", Status: JobDone, Worker: "w1", Deliveries: 1}
	got, ok, err := s.AddJobRescore(ctx, rec, attempt, v)
	if err != nil || !ok || got.Revision != 1 {
		t.Fatalf("first: %+v %v %v", got, ok, err)
	}
	for range 3 {
		rec.Worker = "w2"
		if _, ok, err := s.AddJobRescore(ctx, rec, attempt, v); err != nil || ok {
			t.Fatalf("duplicate stored: %v %v", ok, err)
		}
	}
	vs, err := s.Verdicts(ctx, attempt)
	if err != nil || len(vs) != 2 {
		t.Fatalf("%d revisions, want 2 (%v)", len(vs), err)
	}
	jr, err := s.JobResultOf(ctx, jobID)
	if err != nil || jr.Worker != "w1" || jr.VerdictID != got.ID {
		t.Fatalf("job result %+v %v", jr, err)
	}
	if pend, err := s.PendingResults(ctx, c.ID, "complete-"); err != nil || len(pend) != 0 {
		t.Fatalf("still pending after the job: %d %v", len(pend), err)
	}
	if n, _ := s.Counts(ctx, c.ID, -1); n.Pending != 0 || n.Pass != 1 {
		t.Errorf("counts %+v", n)
	}
}

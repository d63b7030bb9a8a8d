package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// TestModelFaultKeepsJudgedClass: an answer that fails verification, then
// a repair turn whose model call fails for good: the task is judged by the
// failed answer's class (not model_error), the fault kept beside it.
func TestModelFaultKeepsJudgedClass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	tasks := []runs.Task{task(0, "r0/h#0", "hard", true), task(0, "r0/h#1", "hard", true), task(0, "r0/e#0", "easy", false)}
	model := fakeModel{fn: func(ctx context.Context, req agent.Request) (*agent.Response, error) {
		if len(req.Messages) > 1 { // a repair turn
			return nil, &agent.Error{Kind: agent.KindRetryable, Endpoint: "ep", Model: "m", Status: 500}
		}
		return solver.Chat(ctx, req)
	}}
	p := &Plan{Lane: fakeLane{}, Model: model, ToolMode: agent.ToolsNone, MaxToolCalls: -1, Concurrency: 1, RepairTurns: 2,
		Tasks: func() ([]runs.Task, error) { return tasks, nil }}
	n, err := (&Engine{Store: st}).Run(ctx, c.ID, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 3 || n.Pass != 1 || n.Fail != 2 {
		t.Fatalf("counts %+v: want every task judged (none requeued)", n)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Task.Categories[0] != "hard" {
			continue
		}
		if r.Verdict.Class != string(tools.ClassWrongOutput) || r.Attempt.Answer != "wrong" || r.Attempt.RepairTurns != 1 ||
			!strings.Contains(r.Attempt.Error, "HTTP 500") || r.Task.Leases != 1 {
			t.Errorf("%s: class %q answer %q repairs %d error %q leases %d", r.Task.Key, r.Verdict.Class, r.Attempt.Answer,
				r.Attempt.RepairTurns, r.Attempt.Error, r.Task.Leases)
		}
		if r.Verdict.Labels == nil || r.Verdict.Labels.Class != string(tools.ClassWrongOutput) {
			t.Errorf("%s: labels %+v", r.Task.Key, r.Verdict.Labels)
		}
	}
	rep, err := BuildCampaignReport(ctx, st, c, -1, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := rep.Stats[len(rep.Stats)-1]
	if all.Classes[string(tools.ClassWrongOutput)] != 2 || all.Classes[string(tools.ClassModelError)] != 0 {
		t.Errorf("report classes %v", all.Classes)
	}
	if rep.FaultedAttempts != (FaultedAttempts{Total: 2, KeptClass: 2}) {
		t.Errorf("faulted attempts %+v", rep.FaultedAttempts)
	}
	// A rescore judges the kept answer again: the class stays.
	if _, err := Rescore(ctx, st, c.ID, fakeLane{}, RescoreOptions{}, nil, "", nil); err != nil {
		t.Fatal(err)
	}
	res, _ = st.Results(ctx, c.ID, -1)
	for _, r := range res {
		if r.Task.Categories[0] == "hard" && r.Verdict.Class != string(tools.ClassWrongOutput) {
			t.Errorf("%s after rescore: %q", r.Task.Key, r.Verdict.Class)
		}
	}
}

// completerLane leaves every right answer pending; Complete finishes it
// as the task's "fate" says: pass, fail, a task fault, or still pending.
type completerLane struct{ fakeLane }

var pendingStages = []tools.Stage{{Name: "compile", OK: true}, {Name: "run", Skipped: true, Detail: "no GPU"}}

func (completerLane) Verify(context.Context, tools.Item, string) (tools.Verdict, error) {
	return tools.Verdict{Pass: true, Stage: "compile", Stages: pendingStages}, nil
}

func (completerLane) Complete(_ context.Context, it tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	done := []tools.Stage{pendingStages[0], {Name: "run", OK: true}}
	switch it.Meta["fate"] {
	case "pass":
		return tools.Verdict{Pass: true, Stage: "run", Stages: done}, nil
	case "fail":
		done[1].OK = false
		return tools.Verdict{Class: tools.ClassWrongOutput, Stage: "run", Stages: done, Diagnostic: "outputs differ"}, nil
	case "fault":
		return tools.Verdict{Class: tools.ClassReferenceError, Stage: "reference", Stages: done, Diagnostic: "reference crashed"}, nil
	}
	return prev, nil
}

var _ tools.Completer = completerLane{}

// TestRescorePendingSummary: the summary says what became of the pending
// verdicts, and a pending verdict is never counted as a pass before.
func TestRescorePendingSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	var tasks []runs.Task
	for _, fate := range []string{"pass", "pass", "fail", "fault", "wait"} {
		tk := task(0, "r0/"+fate+"#"+string(rune('0'+len(tasks))), "k", false)
		tk.Meta = map[string]string{"fate": fate}
		tasks = append(tasks, tk)
	}
	p := &Plan{Lane: completerLane{}, Model: solver, ToolMode: agent.ToolsNone, MaxToolCalls: -1, Concurrency: 2,
		Tasks: func() ([]runs.Task, error) { return tasks, nil }}
	n, err := (&Engine{Store: st}).Run(ctx, c.ID, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Pass != 0 || n.Pending != 5 {
		t.Fatalf("counts %+v", n)
	}
	sum, err := Rescore(ctx, st, c.ID, completerLane{}, RescoreOptions{PendingOnly: true, Concurrency: 2}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := RescoreSummary{Total: 5, Before: OutcomeCounts{Pending: 5}, After: OutcomeCounts{Pass: 2, Fail: 1, Pending: 1, TaskFaults: 1},
		Changed: 4, FromPending: PendingFate{Pass: 2, Fail: 1, TaskFaults: 1, Still: 1}}
	if sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	n, _ = st.Counts(ctx, c.ID, -1)
	if n.Pass != 2 || n.Fail != 1 || n.Pending != 1 || n.TaskFaults != 1 {
		t.Errorf("counts after %+v", n)
	}
}

// The API's campaign counts carry task faults apart from failures, and
// pass counts complete passes only.
func TestDaemonInfoCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	if _, err := st.AddTasks(ctx, c.ID, []runs.Task{task(0, "r0/a#0", "k", false), task(0, "r0/b#0", "k", false), task(0, "r0/c#0", "k", false)}); err != nil {
		t.Fatal(err)
	}
	verdicts := []runs.Verdict{
		{Pass: true, Stages: []byte(`[{"name":"run","ok":false,"skipped":true}]`)},
		{Class: runs.ClassReferenceError, Stage: "reference"},
		{Class: "wrong_output"},
	}
	for _, v := range verdicts {
		l, err := st.Claim(ctx, c.ID, "w", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Finish(ctx, l, runs.Attempt{Answer: "x"}, v); err != nil {
			t.Fatal(err)
		}
	}
	info, err := (&Daemon{Engine: &Engine{Store: st}}).info(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"pass": 0, "pending": 1, "task_faults": 1, "fail": 1, "done": 3}
	for k, n := range want {
		if info.Counts[k] != n {
			t.Errorf("counts[%s] = %d, want %d (%v)", k, info.Counts[k], n, info.Counts)
		}
	}
}

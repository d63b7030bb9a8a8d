package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// checkLane is fakeLane with a task check (tools.TaskChecker): a task
// whose file says "broken" is a task fault; err, when set, breaks the
// check itself.
type checkLane struct {
	fakeLane
	err    error
	mu     sync.Mutex
	checks int
}

var _ tools.TaskChecker = (*checkLane)(nil)

func (l *checkLane) CheckTask(_ context.Context, item tools.Item) (tools.Verdict, error) {
	l.mu.Lock()
	l.checks++
	l.mu.Unlock()
	if l.err != nil {
		return tools.Verdict{}, l.err
	}
	if strings.Contains(item.Files["function.c"], "broken") {
		return tools.Verdict{Class: tools.ClassReferenceError, Stage: "problem-check",
			Diagnostic: "the problem's reference failed (timeout)"}, nil
	}
	// A verdict that is no task fault lets the attempt go on.
	return tools.Verdict{Class: tools.ClassWrongOutput}, nil
}

// TestTaskCheckBeforeModel: a task whose check is a task fault is done with
// that verdict and no model call; the others are solved as usual; a check
// that breaks stops the campaign with the tasks left queued.
func TestTaskCheckBeforeModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tasks := []runs.Task{task(0, "ok#0", "easy", false), task(0, "broken#0", "easy", false),
		task(0, "ok#1", "easy", false), task(0, "broken#1", "easy", false)}
	for i := range tasks {
		if strings.HasPrefix(tasks[i].Key, "broken") {
			tasks[i].Files["function.c"] += " // broken"
		}
	}
	var calls atomic.Int64
	model := fakeModel{fn: func(_ context.Context, req agent.Request) (*agent.Response, error) {
		calls.Add(1)
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "broken") {
			t.Errorf("the model was asked to solve a broken task: %q", req.Messages[len(req.Messages)-1].Content)
		}
		return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "right"}, Usage: agent.Usage{Calls: 1}}, nil
	}}
	mkPlan := func(l tools.Lane) *Plan {
		return &Plan{Lane: l, Model: model, ToolMode: agent.ToolsNone, MaxToolCalls: -1, Concurrency: 2,
			Tasks: func() ([]runs.Task, error) { return tasks, nil }}
	}

	st := openStore(t)
	c := newCampaign(t, st)
	lane := &checkLane{}
	if _, err := (&Engine{Store: st}).Run(ctx, c.ID, mkPlan(lane), nil); err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 || calls.Load() != 2 || lane.checks != 4 {
		t.Fatalf("%d results, %d model calls, %d checks; want 4, 2, 4", len(rs), calls.Load(), lane.checks)
	}
	for _, r := range rs {
		broken := strings.HasPrefix(r.Task.Key, "broken")
		switch {
		case broken && (!r.Verdict.TaskFault() || r.Attempt.Answer != "" || r.Attempt.Model != "" ||
			!strings.Contains(r.Verdict.Diagnostic, "timeout")):
			t.Errorf("%s: verdict %+v, attempt answer %q model %q; want a task fault and no model", r.Task.Key, r.Verdict,
				r.Attempt.Answer, r.Attempt.Model)
		case !broken && (!r.Verdict.Pass || r.Attempt.Answer != "right"):
			t.Errorf("%s: verdict %+v answer %q; want a pass", r.Task.Key, r.Verdict, r.Attempt.Answer)
		}
	}

	// A check that breaks is the verifier breaking: the campaign stops, nothing judged.
	st2 := openStore(t)
	c2 := newCampaign(t, st2)
	_, err = (&Engine{Store: st2}).Run(ctx, c2.ID, mkPlan(&checkLane{err: errors.New("sandbox gone")}), nil)
	var fe *FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "check task: sandbox gone") {
		t.Fatalf("err %v; want a fatal check error", err)
	}
	n, err := st2.Counts(ctx, c2.ID, -1)
	if err != nil || n.Done != 0 || n.Queued != 4 {
		t.Fatalf("counts %+v (%v); want 4 queued, none done", n, err)
	}
}

package agent_test

import (
	"context"
	"testing"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/tools"
)

// A model failure in a repair turn does not mask the class of the answer
// judged before it: the attempt keeps that verdict, the fault beside it.
func TestLoopModelFaultKeepsJudgedClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		first     string
		wantClass tools.FailureClass
		wantAns   string
	}{
		{"wrong output", "```\nWRONG\n```", tools.ClassWrongOutput, "WRONG"},
		{"no answer", "I would rather chat.", tools.ClassNoAnswer, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fm := &fakeModel{chat: func(_ context.Context, _ agent.Request, n int) (*agent.Response, error) {
				if n == 1 {
					return reply(tc.first), nil
				}
				return nil, &agent.Error{Kind: agent.KindRetryable, Endpoint: "ep", Status: 500}
			}}
			l := &agent.Loop{Model: fm, Lane: codeBlockLane(), RepairTurns: 2}
			a, err := l.Run(context.Background(), "", "Solve it.", tools.Item{})
			if err != nil {
				t.Fatal(err)
			}
			if agent.KindOf(a.Err) != agent.KindRetryable {
				t.Errorf("err %v: want the model fault recorded", a.Err)
			}
			if a.Verdict.Class != tc.wantClass || a.Verdict.Pass || a.Answer != tc.wantAns || len(a.Checks) != 1 {
				t.Errorf("verdict %+v answer %q checks %d; want class %s kept", a.Verdict, a.Answer, len(a.Checks), tc.wantClass)
			}
			if a.RepairTurns != 1 || fm.calls.Load() != 2 {
				t.Errorf("repairs %d, calls %d", a.RepairTurns, fm.calls.Load())
			}
		})
	}
	// Without a judged reply the attempt is a model error, as before.
	fm := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return nil, &agent.Error{Kind: agent.KindRetryable, Endpoint: "ep", Status: 500}
	}}
	a, err := (&agent.Loop{Model: fm, Lane: codeBlockLane(), RepairTurns: 2}).Run(context.Background(), "", "x", tools.Item{})
	if err != nil || a.Verdict.Class != tools.ClassModelError || a.Err == nil {
		t.Errorf("first call failing: verdict %+v err %v run err %v", a.Verdict, a.Err, err)
	}
}

// A task fault (the task's reference failed) is not sent back for
// repair: no answer can fix the task.
func TestLoopNoRepairOfTaskFault(t *testing.T) {
	t.Parallel()
	lane := codeBlockLane()
	lane.verify = func(context.Context, tools.Item, string) (tools.Verdict, error) {
		return tools.Verdict{Class: tools.ClassReferenceError, Stage: "reference", Diagnostic: "the reference timed out"}, nil
	}
	fm := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return reply("```\nRIGHT\n```"), nil
	}}
	a, err := (&agent.Loop{Model: fm, Lane: lane, RepairTurns: 3}).Run(context.Background(), "", "x", tools.Item{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Verdict.TaskFault() || a.RepairTurns != 0 || fm.calls.Load() != 1 || len(a.Checks) != 1 {
		t.Errorf("verdict %+v, repairs %d, calls %d: want one call and no repair", a.Verdict, a.RepairTurns, fm.calls.Load())
	}
}

package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestVerdictOutcome(t *testing.T) {
	t.Parallel()
	skipped := []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true}]`)
	for _, tc := range []struct {
		name string
		v    Verdict
		want Outcome
	}{
		{"pass", Verdict{Pass: true, Stages: []byte(`[{"name":"run","ok":true}]`)}, OutcomePass},
		{"pass without stages", Verdict{Pass: true}, OutcomePass},
		{"pending", Verdict{Pass: true, Stages: skipped}, OutcomePending},
		{"fail", Verdict{Class: "wrong_output"}, OutcomeFail},
		{"fail with a skipped stage after it", Verdict{Class: "compile_error", Stages: skipped}, OutcomeFail},
		{"model error", Verdict{Class: "model_error"}, OutcomeFail},
		{"task fault", Verdict{Class: ClassReferenceError}, OutcomeTaskFault},
		{"task fault with a skipped stage", Verdict{Class: ClassReferenceError, Stages: skipped}, OutcomeTaskFault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.v.Outcome()
			if got != tc.want {
				t.Errorf("Outcome() = %s, want %s", got, tc.want)
			}
			if got.Judged() != (tc.want == OutcomePass || tc.want == OutcomeFail) {
				t.Errorf("%s judged = %v", got, got.Judged())
			}
		})
	}
}

// A task fault (the task's reference failed) is neither a pass nor a
// failure anywhere the store counts, lists or exports results.
func TestTaskFaultCountsBrowseExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "task-faults")
	tasks := mkTasks(0, 8)
	for i := range tasks {
		tasks[i].Categories = []string{"k"}
	}
	mustAdd(t, s, c.ID, tasks)
	// pass, reference_error, wrong_output, pending, repeated.
	finishAll(t, s, nil, c, []string{"pass", "fail:" + ClassReferenceError, "fail:wrong_output", "pending"}, []string{"m"}, time.Now())

	n, err := s.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if n.Done != 8 || n.Pass != 2 || n.Fail != 2 || n.Pending != 2 || n.TaskFaults != 2 || n.Judged() != 4 {
		t.Errorf("counts %+v: want pass 2, fail 2, pending 2, task faults 2", n)
	}
	ov, err := s.Overview(ctx, c.ID, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := Tally{Pass: 2, Fail: 2, Pending: 2, TaskFaults: 2}
	if len(ov.Rounds) != 1 || ov.Rounds[0].Tally != want || len(ov.Categories) != 1 || ov.Categories[0].Tally != want {
		t.Errorf("overview rounds %+v categories %+v, want tally %+v", ov.Rounds, ov.Categories, want)
	}
	if want.Judged() != 4 || want.N() != 8 {
		t.Errorf("tally judged %d of %d", want.Judged(), want.N())
	}
	if fmt.Sprint(ov.Classes) != "[{wrong_output 2}]" {
		t.Errorf("overview classes %v: a task fault is no failure class", ov.Classes)
	}
	if cl, err := s.FailureClasses(ctx, c.ID); err != nil || fmt.Sprint(cl) != "[{wrong_output 2}]" {
		t.Errorf("failure classes %v %v", cl, err)
	}
	for outcome, wantN := range map[Outcome]int{OutcomePass: 2, OutcomeFail: 2, OutcomePending: 2, OutcomeTaskFault: 2} {
		rows, err := s.BrowseVerdicts(ctx, c.ID, VerdictFilter{Round: -1, Outcome: string(outcome)}, 0, MaxBrowse)
		if err != nil || len(rows) != wantN {
			t.Errorf("browse %s: %d rows (want %d), %v", outcome, len(rows), wantN, err)
		}
		for _, r := range rows {
			if r.TaskFault != (outcome == OutcomeTaskFault) || r.Pass != (outcome == OutcomePass) || r.Pending != (outcome == OutcomePending) {
				t.Errorf("browse %s: row pass %v pending %v task fault %v", outcome, r.Pass, r.Pending, r.TaskFault)
			}
		}
	}

	export := func(opt ExportOptions) (keys []string) {
		var buf bytes.Buffer
		if _, err := s.Export(ctx, c.ID, &buf, opt); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			var smp Sample
			if err := json.Unmarshal(line, &smp); err != nil {
				t.Fatal(err)
			}
			if smp.Verdict.Class == ClassReferenceError {
				t.Errorf("a task fault exported: %s", smp.TaskKey)
			}
			if smp.Verdict.Pass != smp.Pass || (smp.Pending && smp.Pass) {
				t.Errorf("%s: pass %v, verdict pass %v, pending %v", smp.TaskKey, smp.Pass, smp.Verdict.Pass, smp.Pending)
			}
			keys = append(keys, smp.TaskKey)
		}
		return keys
	}
	if got := export(ExportOptions{All: true}); len(got) != 6 || slices.Contains(got, "r0/item0001#0") || slices.Contains(got, "r0/item0005#0") {
		t.Errorf("export --all: %v (want every result but the two task faults)", got)
	}
	if got := export(ExportOptions{}); !slices.Equal(got, []string{"r0/item0000#0", "r0/item0004#0"}) {
		t.Errorf("default export: %v", got)
	}
}

package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// Pending answers and task faults are neither passes nor failures on the
// dashboard: a category with nothing judged has no rate (–), and task
// faults are counted and browsable apart.
func TestPagesPendingAndTaskFaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	ctx := context.Background()
	c, err := f.st.CreateCampaign(ctx, runs.Campaign{Name: "gpu-wait", Lane: "cuda-synth", Spec: []byte(testSpec)})
	if err != nil {
		t.Fatal(err)
	}
	tasks := []runs.Task{
		{Key: "r0/p0#0", Categories: []string{"gpu_only"}}, {Key: "r0/p1#0", Categories: []string{"gpu_only"}},
		{Key: "r0/t0#0", Categories: []string{"broken"}},
	}
	if _, err := f.st.AddTasks(ctx, c.ID, tasks); err != nil {
		t.Fatal(err)
	}
	for i := range tasks {
		l, err := f.st.Claim(ctx, c.ID, "w", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		v := runs.Verdict{Pass: true, Stage: "compile", Stages: []byte(`[{"name":"compile","ok":true},{"name":"gpu-run","ok":false,"skipped":true}]`)}
		if i == 2 {
			v = runs.Verdict{Class: runs.ClassReferenceError, Stage: "reference", Diagnostic: "the reference timed out after 120s"}
		}
		if err := f.st.Finish(ctx, l, runs.Attempt{Model: "m", Answer: "x"}, v); err != nil {
			t.Fatal(err)
		}
	}
	stats := f.get(t, "/campaigns/"+c.ID+"/stats", 200)
	mustContain(t, "stats", stats, "gpu_only: nothing judged, 2 pending", "broken: nothing judged, 1 task faults",
		`<th class="n">task faults</th>`, `<td class="n">2</td><td class="n">0</td><td class="n">–</td>`)
	if strings.Contains(stats, "100%") {
		t.Errorf("a category of pending answers shows a rate:\n%s", stats)
	}
	list := f.get(t, "/", 200)
	mustContain(t, "list", list, `<td class="n pending">2</td><td class="n task-fault">1</td>`)
	v := f.get(t, "/campaigns/"+c.ID+"/verdicts?outcome=task_fault", 200)
	if n := strings.Count(v, `<a href="/attempts/`); n != 1 || !strings.Contains(v, "r0/t0#0") || !strings.Contains(v, "task fault") {
		t.Errorf("task-fault filter: %d rows\n%s", n, v)
	}
	v = f.get(t, "/campaigns/"+c.ID+"/verdicts?outcome=fail", 200)
	if strings.Contains(v, "r0/t0#0") {
		t.Error("a task fault listed as a failure")
	}
}

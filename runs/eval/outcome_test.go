package eval

import (
	"math"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// pass@k is over judged answers: pending ones and task faults are left out
// of n, and a task with none judged is left out of the row's pass@k.
func TestPassAtKJudgedOnly(t *testing.T) {
	t.Parallel()
	skipped := []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true}]`)
	res := func(key string, v runs.Verdict) Sample {
		s, err := FromResult("m", runs.Result{Task: runs.Task{Key: key, Lane: "lane", Categories: []string{"c"}}, Verdict: v})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	pass := runs.Verdict{Pass: true}
	fail := runs.Verdict{Class: "wrong_output"}
	pending := runs.Verdict{Pass: true, Stages: skipped}
	fault := runs.Verdict{Class: runs.ClassReferenceError}
	ss := []Sample{
		// x: 1 pass, 1 fail judged; a pending one and a task fault apart.
		res("r0/x#0", pass), res("r0/x#1", fail), res("r0/x#2", pending), res("r0/x#3", fault),
		// y: only pending and a task fault: not in pass@k.
		res("r0/y#0", pending), res("r0/y#1", fault),
	}
	if !ss[0].Pass || ss[2].Pass || !ss[2].Pending || ss[3].Pass || !ss[3].TaskFault {
		t.Fatalf("samples %+v", ss)
	}
	rep, err := Build(ss, Options{K: []int{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Tasks != 1 || r.Samples != 6 || r.Passed != 1 || r.Failed != 1 || r.Pending != 2 || r.TaskFaults != 2 || r.MinSamples != 2 {
			t.Errorf("%s row %+v", r.Category, r)
		}
		if math.Abs(r.PassAtK[1]-0.5) > 1e-12 || r.PassAtK[2] != 1 {
			t.Errorf("%s pass@k %v, want 0.5 and 1 over x's two judged answers", r.Category, r.PassAtK)
		}
		if _, ok := r.PassAtK[3]; ok {
			t.Errorf("%s: pass@3 with 2 judged answers", r.Category)
		}
	}
	if r, err := Build(ss[4:], Options{}); err != nil || len(r.Rows[0].PassAtK) != 0 || r.Rows[0].Tasks != 0 {
		t.Errorf("nothing judged: %+v %v", r, err)
	}
}

// Package eval owns benchmark evaluation reports (kiln eval): pass@k of
// each model on a fixed task set, per lane and per category, with the
// stage pass rates and measurements of its answers.
//
// # pass@k
//
// A task answered n times of which c passed has the unbiased estimate
// pass@k = 1 - C(n-c, k) / C(n, k) (Chen et al., 2021); a row's pass@k is
// the mean over its tasks. pass@k is reported only for k <= the smallest n
// of the row's tasks: a larger k would need answers that were never drawn.
// n and c count judged answers only (runs.Verdict.Outcome pass or fail): a
// pending verdict (stages left for a GPU or AMD host) and a task fault (the
// task's own reference failed) are neither a pass nor a failure here, left
// out of pass@k, and counted apart in their row (finish pending ones with
// kiln rescore --pending on such a host, then run kiln eval again); a task
// with no judged answer is not in the row's pass@k.
//
// # Stage rates
//
// For each stage a lane records (compile, run, ...), the share of a
// model's samples that passed it, and the share where it was skipped
// (pending). For ptx2cuda they are PtxDec's compilation, runtime-correct
// and I/O-correct rates.
package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// All is the category of a row that covers every task of a model and lane.
const All = "(all)"

// Sample is one judged answer.
type Sample struct {
	Model string
	Lane  string
	// Task identifies the task the answer belongs to: samples of one task
	// share it (the task key without its "#k" sample suffix).
	Task       string
	Categories []string
	// Pass is a complete pass; Pending a verdict with stages left for
	// another host (never a pass); TaskFault a verdict whose task's own
	// reference failed (never a failure).
	Pass, Pending, TaskFault bool
	Class                    string
	Stages                   []tools.Stage
	Measurements             map[string]float64
}

// FromResult turns a stored result of model into a Sample.
func FromResult(model string, r runs.Result) (Sample, error) {
	o := r.Verdict.Outcome()
	s := Sample{Model: model, Lane: r.Task.Lane, Task: TaskIdentity(r.Task.Key), Categories: slices.Clone(r.Task.Categories),
		Pass: o == runs.OutcomePass, Pending: o == runs.OutcomePending, TaskFault: o == runs.OutcomeTaskFault,
		Class: r.Verdict.Class, Measurements: r.Verdict.Measurements}
	if len(r.Verdict.Stages) > 0 {
		if err := json.Unmarshal(r.Verdict.Stages, &s.Stages); err != nil {
			return Sample{}, fmt.Errorf("verdict %s: stages: %w", r.Verdict.ID, err)
		}
	}
	return s, nil
}

// TaskIdentity is a task key without its sample suffix
// ("r0/basic_01#2" -> "r0/basic_01").
func TaskIdentity(key string) string {
	if i := strings.LastIndexByte(key, '#'); i > 0 {
		return key[:i]
	}
	return key
}

// Row is one model's results on one lane and category.
type Row struct {
	Model    string `json:"model"`
	Lane     string `json:"lane"`
	Category string `json:"category"`
	// Tasks counts the tasks with a judged answer (pass@k's tasks);
	// Samples every answer, pending ones and task faults included.
	Tasks   int `json:"tasks"`
	Samples int `json:"samples"`
	// MinSamples is the fewest judged answers any of the row's tasks has.
	MinSamples int `json:"min_samples"`
	Passed     int `json:"passed"`
	Pending    int `json:"pending"`
	TaskFaults int `json:"task_faults"`
	Failed     int `json:"failed"`
	// PassAtK maps k to pass@k, for the report's ks <= MinSamples.
	PassAtK map[int]float64 `json:"pass_at_k"`
	// Classes counts failure classes.
	Classes map[string]int `json:"classes,omitempty"`
}

// StageRate is how a model's samples of one lane fared at one stage.
type StageRate struct {
	Model   string `json:"model"`
	Lane    string `json:"lane"`
	Stage   string `json:"stage"`
	Samples int    `json:"samples"`
	// Passed and Skipped count samples whose verdict has the stage passed
	// or skipped; the others failed it or never reached it.
	Passed  int `json:"passed"`
	Skipped int `json:"skipped"`
}

// Measure summarises one measurement over a model's samples of a lane.
type Measure struct {
	Model  string  `json:"model"`
	Lane   string  `json:"lane"`
	Name   string  `json:"name"`
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	// GeoMean is set for positive ratios (names ending in "_ratio").
	GeoMean float64 `json:"geomean,omitempty"`
}

// Report is an evaluation report.
type Report struct {
	// K are the ks asked for.
	K      []int       `json:"k"`
	Models []string    `json:"models"`
	Rows   []Row       `json:"rows"`
	Stages []StageRate `json:"stages"`
	// Measures cover the measurements in Options.Measures.
	Measures []Measure `json:"measures"`
}

// Options tune Build.
type Options struct {
	// K are the ks of pass@k (each >= 1; default 1).
	K []int
	// Measures are the measurement names summarised (answer-level ones
	// such as latency_ratio or opcode_similarity; nil: none).
	Measures []string
}

// Build computes the report of samples. Models keep the order in which
// they first appear; lanes and categories are sorted, each lane's (all)
// row first.
func Build(samples []Sample, opt Options) (*Report, error) {
	ks, err := normaliseKs(opt.K)
	if err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, errors.New("eval: no judged answers to report on")
	}
	rep := &Report{K: ks}
	t := newTally()
	for _, s := range samples {
		if !slices.Contains(rep.Models, s.Model) {
			rep.Models = append(rep.Models, s.Model)
		}
		t.add(s, opt.Measures)
	}
	rep.Rows = t.passAtK(ks)
	modelIdx := func(m string) int { return slices.Index(rep.Models, m) }
	sort.Slice(rep.Rows, func(i, j int) bool {
		a, b := rep.Rows[i], rep.Rows[j]
		if a.Lane != b.Lane {
			return a.Lane < b.Lane
		}
		if a.Category != b.Category {
			if a.Category == All || b.Category == All {
				return a.Category == All
			}
			return a.Category < b.Category
		}
		return modelIdx(a.Model) < modelIdx(b.Model)
	})
	rep.Stages = t.stageRates()
	sort.SliceStable(rep.Stages, func(i, j int) bool {
		a, b := rep.Stages[i], rep.Stages[j]
		if a.Lane != b.Lane {
			return a.Lane < b.Lane
		}
		return modelIdx(a.Model) < modelIdx(b.Model)
	})
	for _, name := range opt.Measures {
		for _, m := range rep.Models {
			for _, lane := range lanesOf(rep.Rows) {
				vs := t.meas[[3]string{m, lane, name}]
				if len(vs) == 0 {
					continue
				}
				rep.Measures = append(rep.Measures, summarise(m, lane, name, vs))
			}
		}
	}
	return rep, nil
}

// normaliseKs checks the ks of pass@k and sorts them, without repeats
// (default: 1).
func normaliseKs(in []int) ([]int, error) {
	ks := slices.Clone(in)
	if len(ks) == 0 {
		ks = []int{1}
	}
	for _, k := range ks {
		if k < 1 {
			return nil, fmt.Errorf("eval: k = %d: want >= 1", k)
		}
	}
	slices.Sort(ks)
	return slices.Compact(ks), nil
}

type (
	rowKey  struct{ model, lane, cat string }
	taskKey struct{ model, lane, cat, task string }
)

// tally accumulates the samples: a row per (model, lane, category), the
// judged answers and passes per task, the stage outcomes per (model, lane,
// stage) in the order first seen, and the measurements.
type tally struct {
	rows       map[rowKey]*Row
	perTask    map[taskKey][2]int // n, c
	stages     map[[3]string]*StageRate
	stageOrder [][3]string
	meas       map[[3]string][]float64
}

func newTally() *tally {
	return &tally{rows: map[rowKey]*Row{}, perTask: map[taskKey][2]int{}, stages: map[[3]string]*StageRate{},
		meas: map[[3]string][]float64{}}
}

// add counts s in the rows of its lane and categories (and the lane's
// (all) row), its stages and the measures it has.
func (t *tally) add(s Sample, measures []string) {
	cats := append([]string{All}, s.Categories...)
	for _, c := range slices.Compact(cats) {
		t.addToRow(s, c)
	}
	for _, st := range s.Stages {
		k := [3]string{s.Model, s.Lane, st.Name}
		sr := t.stages[k]
		if sr == nil {
			sr = &StageRate{Model: s.Model, Lane: s.Lane, Stage: st.Name}
			t.stages[k] = sr
			t.stageOrder = append(t.stageOrder, k)
		}
		switch {
		case st.Skipped:
			sr.Skipped++
		case st.OK:
			sr.Passed++
		}
	}
	for _, name := range measures {
		if v, ok := s.Measurements[name]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			k := [3]string{s.Model, s.Lane, name}
			t.meas[k] = append(t.meas[k], v)
		}
	}
}

// addToRow counts s in its row of category c and, judged, in its task's
// answers for pass@k.
func (t *tally) addToRow(s Sample, c string) {
	rk := rowKey{s.Model, s.Lane, c}
	r := t.rows[rk]
	if r == nil {
		r = &Row{Model: s.Model, Lane: s.Lane, Category: c, Classes: map[string]int{}}
		t.rows[rk] = r
	}
	r.Samples++
	switch {
	case s.Pass:
		r.Passed++
	case s.Pending:
		r.Pending++
	case s.TaskFault:
		r.TaskFaults++
	default:
		r.Failed++
		if s.Class != "" {
			r.Classes[s.Class]++
		}
	}
	if s.Pending || s.TaskFault {
		return // not judged: not in pass@k
	}
	tk := taskKey{s.Model, s.Lane, c, s.Task}
	nc := t.perTask[tk]
	nc[0]++
	if s.Pass {
		nc[1]++
	}
	t.perTask[tk] = nc
}

// passAtK returns the rows with their pass@k: the mean over the row's
// tasks, for k <= the fewest samples of a task.
func (t *tally) passAtK(ks []int) []Row {
	type acc struct {
		tasks int
		minN  int
		sums  map[int]float64
	}
	accs := map[rowKey]*acc{}
	for tk, nc := range t.perTask {
		rk := rowKey{tk.model, tk.lane, tk.cat}
		a := accs[rk]
		if a == nil {
			a = &acc{minN: math.MaxInt, sums: map[int]float64{}}
			accs[rk] = a
		}
		a.tasks++
		a.minN = min(a.minN, nc[0])
		for _, k := range ks {
			a.sums[k] += refinement.PassAtK(nc[0], nc[1], k)
		}
	}
	var rows []Row
	for rk, r := range t.rows {
		r.PassAtK = map[int]float64{}
		if a := accs[rk]; a != nil {
			r.Tasks, r.MinSamples = a.tasks, a.minN
			for _, k := range ks {
				if k <= a.minN {
					r.PassAtK[k] = a.sums[k] / float64(a.tasks)
				}
			}
		}
		rows = append(rows, *r)
	}
	return rows
}

// stageRates are the stage outcomes in the order first seen, each over the
// samples of its (model, lane).
func (t *tally) stageRates() []StageRate {
	laneSamples := map[[2]string]int{}
	for rk, r := range t.rows {
		if rk.cat == All {
			laneSamples[[2]string{rk.model, rk.lane}] = r.Samples
		}
	}
	var out []StageRate
	for _, k := range t.stageOrder {
		sr := t.stages[k]
		sr.Samples = laneSamples[[2]string{k[0], k[1]}]
		out = append(out, *sr)
	}
	return out
}

func lanesOf(rows []Row) []string {
	var out []string
	for _, r := range rows {
		if !slices.Contains(out, r.Lane) {
			out = append(out, r.Lane)
		}
	}
	return out
}

func summarise(model, lane, name string, vs []float64) Measure {
	sort.Float64s(vs)
	m := Measure{Model: model, Lane: lane, Name: name, N: len(vs)}
	sum, logSum, positive := 0.0, 0.0, true
	for _, v := range vs {
		sum += v
		if v <= 0 {
			positive = false
		} else {
			logSum += math.Log(v)
		}
	}
	m.Mean = sum / float64(len(vs))
	if n := len(vs); n%2 == 1 {
		m.Median = vs[n/2]
	} else {
		m.Median = (vs[n/2-1] + vs[n/2]) / 2
	}
	if positive && strings.HasSuffix(name, "_ratio") {
		m.GeoMean = math.Exp(logSum / float64(len(vs)))
	}
	return m
}

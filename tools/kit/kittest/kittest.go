// Package kittest is the lane kit conformance suite: one contract every
// registered lane passes (tools/lanes runs it over lanes.Kits()), and the
// first test a new lane's author runs. It checks, with the lane's worked
// example (kit.Example) and the lane's real verifier in a real sandbox:
//
//   - the kit's parts: name, summary, toolchains, prompts, verify flags;
//   - the task source: round 0 non-empty, keys unique, tasks of the lane,
//     deterministic; refinement draws deterministic and of their round;
//   - the rules: lane name, documented rules and features, a taxonomy
//     that labels every class the lane gives;
//   - extraction: the example answers come out of their fences, prose
//     gives no answer;
//   - verification: the right answer passes (stages another host must
//     run may be pending, never failed), the wrong one fails with its
//     class and a fine label, the verdict's stages are named;
//   - suspicion: the cheating answer is flagged, the right one is not;
//   - resynthesis: a prompt renders for a failing example, the example
//     reply parses into a candidate that becomes tasks (prepared first
//     when the lane's validator is a refinement.Preparer), and the lane's
//     validator accepts it.
//
// Verification needs the lane's toolchains: where one is missing the
// suite says which and skips those checks (CI installs them all).
package kittest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Run runs the suite on k with host h (a sandbox runner and the host's
// toolchains). Subtests name the parts.
func Run(t *testing.T, k kit.Kit, h kit.Host) {
	t.Helper()
	reg, err := kit.NewRegistry(k)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	ex, err := k.Example()
	if err != nil {
		t.Fatalf("example: %v", err)
	}
	set := checkSource(t, k, ex)
	task, ok := findTask(set.Round0, ex.TaskKey)
	if !ok {
		t.Fatalf("example task %s is not among round 0's %d tasks", ex.TaskKey, len(set.Round0))
	}
	t.Run("parts", func(t *testing.T) { checkParts(t, k, ex) })
	t.Run("rules", func(t *testing.T) { checkRules(t, k, reg.Rules()) })
	t.Run("suspicion", func(t *testing.T) { checkSuspicion(t, k, reg.Rules(), task, ex) })
	var lane tools.Lane
	t.Run("open", func(t *testing.T) { lane = open(t, k, h) })
	if lane == nil {
		return
	}
	t.Run("extract", func(t *testing.T) { checkExtract(t, lane, ex) })
	var wrong runs.Result
	t.Run("verify", func(t *testing.T) { wrong = checkVerify(t, k, lane, reg.Rules(), task, ex) })
	t.Run("resynthesis", func(t *testing.T) { checkResynthesis(t, k, lane, reg.Rules(), set, wrong, ex) })
}

func findTask(ts []runs.Task, key string) (runs.Task, bool) {
	for _, t := range ts {
		if t.Key == key {
			return t, true
		}
	}
	return runs.Task{}, false
}

func checkSource(t *testing.T, k kit.Kit, ex kit.Example) *kit.TaskSet {
	t.Helper()
	set, err := k.Source(ex.Tasks)
	if err != nil {
		t.Fatalf("source of the example's tasks: %v", err)
	}
	again, err := k.Source(ex.Tasks)
	if err != nil {
		t.Fatalf("source again: %v", err)
	}
	if len(set.Round0) == 0 {
		t.Fatal("round 0 has no task")
	}
	if !reflect.DeepEqual(set.Round0, again.Round0) {
		t.Error("round 0 differs between two reads of the same tasks section")
	}
	keys := map[string]bool{}
	for _, task := range set.Round0 {
		if task.Lane != k.Name || task.Round != 0 || task.Key == "" || len(task.Categories) == 0 {
			t.Errorf("round-0 task %q: lane %q round %d categories %v", task.Key, task.Lane, task.Round, task.Categories)
		}
		if keys[task.Key] {
			t.Errorf("round-0 task key %q twice", task.Key)
		}
		keys[task.Key] = true
		if strings.TrimSpace(task.Prompt) == "" {
			t.Errorf("round-0 task %q has no prompt", task.Key)
		}
	}
	if len(set.Known) == 0 {
		t.Error("no known categories")
	}
	if set.Draw == nil {
		t.Fatal("no Draw for refinement rounds")
	}
	w := map[string]float64{set.Known[0]: 4, refinement.DefaultWeightKey: 1}
	d1, err := set.Draw(1, w)
	if err != nil {
		t.Fatalf("draw: %v", err)
	}
	d2, err := again.Draw(1, w)
	if err != nil {
		t.Fatalf("draw again: %v", err)
	}
	if len(d1) == 0 || !reflect.DeepEqual(d1, d2) {
		t.Errorf("draw of round 1: %d tasks, deterministic %v", len(d1), reflect.DeepEqual(d1, d2))
	}
	for _, task := range d1 {
		if task.Round != 1 || task.Lane != k.Name || keys[task.Key] {
			t.Errorf("drawn task %q: round %d lane %q (or a round-0 key)", task.Key, task.Round, task.Lane)
		}
	}
	return set
}

func checkParts(t *testing.T, k kit.Kit, ex kit.Example) {
	if k.Summary == "" || strings.Contains(k.Summary, "\n") {
		t.Errorf("summary %q: want one line", k.Summary)
	}
	sys, err := k.System(ex.Tasks, nil)
	if err != nil || strings.TrimSpace(sys) == "" {
		t.Errorf("system prompt: %q %v", sys, err)
	}
	withTools, err := k.System(ex.Tasks, []string{"tool_one", "tool_two"})
	if err != nil || !strings.Contains(withTools, "tool_one") || !strings.Contains(withTools, "tool_two") {
		t.Errorf("system prompt does not name the tools offered: %v\n%.500s", err, withTools)
	}
	if k.Repair != nil {
		s, err := k.Repair(tools.Verdict{Class: ex.WrongClass, Diagnostic: "diagnostic text 123"})
		if err != nil || !strings.Contains(s, "diagnostic text 123") {
			t.Errorf("repair prompt does not quote the diagnostic: %v\n%.500s", err, s)
		}
	}
	if v := k.Verify; v != nil {
		fs := flag.NewFlagSet("verify", flag.ContinueOnError)
		read := v.Flags(fs)
		if v.Usage == "" || read == nil {
			t.Errorf("verify: usage %q", v.Usage)
		}
		if _, _, err := read(); err == nil {
			t.Error("verify with no flags set: no error")
		} else if _, ok := err.(kit.UsageError); !ok {
			t.Errorf("verify with no flags set: %T %v, want a kit.UsageError", err, err)
		}
	}
	for _, c := range k.Commands {
		if c.Verb == "" || c.Summary == "" || c.Flags == nil || len(strings.Fields(c.Verb)) != 2 {
			t.Errorf("command %+v: want a two-word verb, a summary and flags", c.Verb)
		}
	}
}

func checkRules(t *testing.T, k kit.Kit, lanes *refinement.Lanes) {
	lr, err := k.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if lr.Lane != k.Name {
		t.Errorf("rules of lane %q", lr.Lane)
	}
	for i, r := range lr.Rules {
		if r.Label == "" || r.Doc == "" || len(r.Classes) == 0 {
			t.Errorf("rule %d (%s): want a label, classes and a doc", i, r.Label)
		}
	}
	if lr.Features != nil {
		seen := map[string]bool{}
		for _, f := range lr.Features.Rules {
			if f.Doc == "" {
				t.Errorf("feature %s has no doc", f.Name)
			}
			seen[f.Name] = true
		}
		if len(seen) == 0 {
			t.Error("a feature table without features")
		}
	}
	if lr.Synth != nil && (lr.Synth.Parse == nil || lr.Synth.Templates == nil) {
		t.Error("a synthesis format without templates or a parser")
	}
	if got := lanes.Names(); !slices.Equal(got, []string{k.Name}) {
		t.Errorf("lanes %v", got)
	}
}

func checkSuspicion(t *testing.T, k kit.Kit, lanes *refinement.Lanes, task runs.Task, ex kit.Example) {
	lr, err := k.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if lr.Suspect == nil {
		t.Fatal("no suspicion check")
	}
	if why := lr.Suspect(answerOf(t, ex.Cheat), task); why == "" {
		t.Errorf("the example's cheating answer is not flagged:\n%.600s", ex.Cheat)
	}
	if why := lr.Suspect(answerOf(t, ex.Right), task); why != "" {
		t.Errorf("the example's right answer is flagged: %s", why)
	}
	// A cheat is counted as suspected_cheating, passing or not.
	for _, v := range []runs.Verdict{{Pass: true, Stage: "run"}, {Class: string(ex.WrongClass), Stage: "run"}} {
		l := lanes.Taxonomy.ClassifyResult(runs.Result{Task: task, Attempt: runs.Attempt{Answer: answerOf(t, ex.Cheat)}, Verdict: v})
		if l.Key() != refinement.LabelSuspectedCheating || l.Suspicion == "" {
			t.Errorf("a cheating answer (pass %v) is counted as %s", v.Pass, l.Key())
		}
	}
}

// answerOf is the fenced answer of a reply (the lanes' extractors all
// read the first fenced block; the suite checks Extract separately).
func answerOf(t *testing.T, reply string) string {
	t.Helper()
	blocks := tools.Fences(reply)
	if len(blocks) == 0 {
		t.Fatalf("example reply without a fenced block:\n%.300s", reply)
	}
	return blocks[0].Body
}

func open(t *testing.T, k kit.Kit, h kit.Host) tools.Lane {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if len(k.Toolchains) > 0 {
		reg, err := h.Toolchains(ctx, false)
		if err != nil {
			t.Fatalf("toolchains: %v", err)
		}
		for _, name := range k.Toolchains {
			if _, ok := reg.Get(name); !ok {
				t.Skipf("toolchain %s missing on this host: verification not checked", name)
			}
		}
	}
	l, err := k.Open(ctx, h, sandboxes.Limits{Wall: 10 * time.Second, CPU: 5 * time.Second, Memory: 1 << 30, Procs: 64,
		Output: 1 << 20, FileSize: 64 << 20})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if l.Name() != k.Name {
		t.Errorf("the lane opened is named %q", l.Name())
	}
	names := map[string]bool{}
	for _, tool := range l.Tools(tools.Item{Lane: k.Name}) {
		if names[tool.Name()] {
			t.Errorf("model tool %s twice", tool.Name())
		}
		names[tool.Name()] = true
		var schema map[string]any
		if err := json.Unmarshal(tool.Schema(), &schema); err != nil || tool.Description() == "" {
			t.Errorf("model tool %s: schema %v, description %q", tool.Name(), err, tool.Description())
		}
	}
	return l
}

func checkExtract(t *testing.T, lane tools.Lane, ex kit.Example) {
	for name, reply := range map[string]string{"right": ex.Right, "wrong": ex.Wrong} {
		a, ok := lane.Extract("Here is my answer.\n\n" + reply + "\n\nThat is all.")
		if !ok || strings.TrimSpace(a) != strings.TrimSpace(answerOf(t, reply)) {
			t.Errorf("%s answer: extracted %v:\n%.300s", name, ok, a)
		}
	}
	if a, ok := lane.Extract("I cannot do that, sorry."); ok && strings.TrimSpace(a) != "" {
		t.Errorf("prose without code gave an answer: %q", a)
	}
}

// item is what the engine verifies a task's answer against.
func item(task runs.Task) tools.Item {
	return tools.Item{Lane: task.Lane, Files: task.Files, Meta: task.Meta}
}

func checkVerify(t *testing.T, k kit.Kit, lane tools.Lane, lanes *refinement.Lanes, task runs.Task, ex kit.Example) runs.Result {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	verify := func(reply string) tools.Verdict {
		a, ok := lane.Extract(reply)
		if !ok {
			t.Fatalf("no answer extracted from:\n%.300s", reply)
		}
		v, err := lane.Verify(ctx, item(task), a)
		if err != nil {
			t.Fatalf("verify: %v", err)
		}
		if v.Stage == "" || len(v.Stages) == 0 {
			t.Errorf("verdict without stages: %+v", v)
		}
		for _, s := range v.Stages {
			if s.Name == "" {
				t.Errorf("a stage without a name: %+v", v.Stages)
			}
		}
		return v
	}
	right := verify(ex.Right)
	if !right.Pass || right.Class != tools.ClassNone {
		t.Errorf("the right answer fails: %s at %s: %.800s", right.Class, right.Stage, right.Diagnostic)
	}
	for _, s := range right.Stages {
		if !s.OK && !s.Skipped {
			t.Errorf("the right answer's stage %s failed: %s", s.Name, s.Detail)
		}
	}
	if pending := tools.PendingStages(right); len(pending) > 0 {
		if _, ok := lane.(tools.Completer); !ok {
			t.Errorf("stages %v left pending by a lane that cannot complete them (tools.Completer)", pending)
		}
	}
	wrong := verify(ex.Wrong)
	if wrong.Pass || wrong.Class != ex.WrongClass || wrong.Diagnostic == "" {
		t.Errorf("the wrong answer: pass %v class %q (want %q) diagnostic %q", wrong.Pass, wrong.Class, ex.WrongClass, wrong.Diagnostic)
	}
	res := runs.Result{Task: task, Attempt: runs.Attempt{Answer: answerOf(t, ex.Wrong)},
		Verdict: runs.Verdict{Pass: wrong.Pass, Class: string(wrong.Class), Stage: wrong.Stage, Diagnostic: wrong.Diagnostic}}
	labels := lanes.Labeler().Labels(res, "")
	if labels.DiagnosticKind == "" || labels.DiagnosticKind == refinement.LabelUnknown || labels.DiagnosticKind == refinement.LabelPass {
		t.Errorf("the wrong answer's fine label: %+v", labels)
	}
	if doc := lanes.Taxonomy.Labels(k.Name)[labels.DiagnosticKind]; doc == "" {
		t.Errorf("label %s has no doc", labels.DiagnosticKind)
	}
	res.Verdict.Labels = &labels
	return res
}

func checkResynthesis(t *testing.T, k kit.Kit, lane tools.Lane, lanes *refinement.Lanes, set *kit.TaskSet, wrong runs.Result, ex kit.Example) {
	lr, err := k.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if lr.Synth == nil {
		if ex.Synth != "" {
			t.Error("an example synthesiser reply for a lane without a synthesis format")
		}
		return
	}
	examples := refinement.ExamplesFor([]runs.Result{wrong}, wrong.Task.Categories[0], refinement.ExampleOptions{Lanes: lanes})
	if len(examples) != 1 {
		t.Fatalf("%d failing examples picked from the wrong answer", len(examples))
	}
	p, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: k.Name, Category: ex.SynthCategory, K: 3, Examples: examples})
	if err != nil || p.System == "" || !strings.Contains(p.User, ex.SynthCategory) {
		t.Errorf("resynthesis prompt: %v\n%.600s", err, p.User)
	}
	cands, errs := lanes.ParseSynthesized(k.Name, ex.Synth)
	if len(cands) == 0 {
		t.Fatalf("the example reply gives no candidate: %v", errs)
	}
	c := cands[0]
	c.Category = ex.SynthCategory
	if c.Lane != k.Name || c.Hash == "" {
		t.Errorf("candidate: lane %q hash %q", c.Lane, c.Hash)
	}
	if set.FromCandidate == nil {
		t.Fatal("no FromCandidate for a lane with a synthesis format")
	}
	// A validator that prepares candidates (refinement.Preparer) makes
	// what FromCandidate takes.
	var v refinement.Validator
	if k.Validator != nil {
		if v, err = k.Validator(lane); err != nil {
			t.Fatalf("validator: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prepared := c
	if p, ok := v.(refinement.Preparer); ok {
		if prepared, err = p.Prepare(ctx, c); err != nil {
			t.Fatalf("the validator does not prepare the example's candidate: %v", err)
		}
		prepared.Category = c.Category
	}
	ts, err := set.FromCandidate(1, prepared)
	if err != nil || len(ts) != max(ex.Tasks.SamplesPerTask, 1) {
		t.Fatalf("candidate tasks: %d, %v", len(ts), err)
	}
	for _, task := range ts {
		if task.Round != 1 || task.Lane != k.Name || task.Meta["origin"] != "resynthesis" || !slices.Contains(task.Categories, ex.SynthCategory) {
			t.Errorf("candidate task %+v", task)
		}
		// A prepared candidate is the identity of its tasks, so that a
		// later round drops it again.
		if _, ok := v.(refinement.Preparer); ok && lanes.TaskHash(task) != lanes.SourceHash(k.Name, prepared.Files, prepared.Prompt) {
			t.Errorf("task %s: its identity differs from the prepared candidate's", task.Key)
		}
	}
	// The same candidate again is a duplicate of itself.
	acc, rej, err := refinement.Screen(context.Background(), []refinement.Candidate{c, c}, refinement.ScreenOptions{Lanes: lanes})
	if err != nil || len(acc) != 1 || len(rej) != 1 {
		t.Errorf("screening a candidate twice: %d accepted, %d rejected, %v", len(acc), len(rej), err)
	}
	if v == nil {
		return
	}
	// A validation may wait for another host (a GPU), as a verdict may.
	if err := v.Validate(ctx, c); err != nil && !errors.Is(err, refinement.ErrPending) {
		t.Errorf("the validator rejects the example's candidate: %v", err)
	}
	bad := c
	bad.Files = map[string]string{}
	for name, body := range c.Files {
		bad.Files[name] = "this is not source code " + fmt.Sprint(len(body))
	}
	if len(bad.Files) > 0 {
		if err := v.Validate(ctx, bad); err == nil {
			t.Error("the validator accepts a candidate whose files are not code")
		}
	}
}

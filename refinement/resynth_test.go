package refinement

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

func TestExamplesFor(t *testing.T) {
	t.Parallel()
	results := synthCampaign()
	// A model error in the category: never an example.
	me := synthResult(0, 99, srcSwitch, false, ClassModelError, "gave up", "switch_many")
	results = append(results, me)
	// Every switch_many task has the same source: item07 (asm.mnemonic,
	// with another answer) is shown after item06 and item02 (the first of
	// each label); item08, the same as item06 in all, is not.
	for i := range results {
		if results[i].Task.Key == "r0/item07" {
			results[i].Attempt.Answer = "\t.globl f\nf:\n\tmulsss %xmm1, %xmm0\n\tret\n"
		}
	}
	ex := ExamplesFor(results, "switch_many", ExampleOptions{Max: 4, Lanes: toyLanes})
	if len(ex) != 3 {
		t.Fatalf("%d examples", len(ex))
	}
	// Round robin over labels sorted: asm.mnemonic, wrong.numeric, then
	// asm.mnemonic again.
	var labels []string
	for _, e := range ex {
		labels = append(labels, e.Label)
		if e.Files["function.c"] != srcSwitch || e.Answer == "" || e.Diagnostic == "" || e.LabelDoc == "" || e.Prompt != "" {
			t.Errorf("example %+v", e)
		}
	}
	if !slices.Equal(labels, []string{"asm.mnemonic", "wrong.numeric", "asm.mnemonic"}) {
		t.Errorf("labels %v", labels)
	}
	if ex[0].TaskKey != "r0/item06" || ex[1].TaskKey != "r0/item02" || ex[2].TaskKey != "r0/item07" {
		t.Errorf("keys %s, %s, %s", ex[0].TaskKey, ex[1].TaskKey, ex[2].TaskKey)
	}
	// Distinct tasks first: one example per source before any repeat.
	loop := synthResult(0, 98, srcLoop, false, ClassWrongOutput, diagNumeric, "switch_many")
	ex = ExamplesFor(append(results, loop), "switch_many", ExampleOptions{Max: 2, Lanes: toyLanes})
	if len(ex) != 2 || ex[0].TaskKey != "r0/item06" || ex[1].TaskKey != loop.Task.Key {
		t.Errorf("distinct tasks first: %+v", ex)
	}
	// A feature category: the for-loop tasks (one fails).
	ex = ExamplesFor(results, "loop_for", ExampleOptions{Lanes: toyLanes})
	if len(ex) != 1 || ex[0].Label != "crash.segv" {
		t.Fatalf("loop_for examples %+v", ex)
	}
	// Shortening.
	long := synthResult(0, 100, srcLoop, false, ClassWrongOutput, strings.Repeat("x", 5000), "long")
	long.Attempt.Answer = strings.Repeat("movl %eax, %ebx\n", 1000)
	ex = ExamplesFor([]runs.Result{long}, "long", ExampleOptions{MaxAnswerChars: 100, MaxDiagnosticChars: 50, Lanes: toyLanes})
	if len(ex) != 1 || len(ex[0].Answer) > 140 || !strings.Contains(ex[0].Answer, "more characters)") || len(ex[0].Diagnostic) > 90 {
		t.Fatalf("shortened %q / %q", ex[0].Answer, ex[0].Diagnostic)
	}
	if got := ExamplesFor(results, "no_such_category", ExampleOptions{Lanes: toyLanes}); got != nil {
		t.Errorf("examples of an unknown category: %v", got)
	}
}

func TestExistingFunctions(t *testing.T) {
	t.Parallel()
	tasks := []runs.Task{{Meta: map[string]string{"function": "b"}}, {Meta: map[string]string{"function": "a"}}, {Meta: map[string]string{"function": "b"}}, {}}
	if got := ExistingFunctions(tasks, 0); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("got %v", got)
	}
	if got := ExistingFunctions(tasks, 1); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("limit: got %v", got)
	}
}

func TestScreenConcurrencyAndCancel(t *testing.T) {
	t.Parallel()
	var cands []Candidate
	for i := range 12 {
		cands = append(cands, Candidate{Lane: "prompt-only", Index: i + 1, Prompt: fmt.Sprintf("task statement number %d, long enough", i)})
	}
	var cur, peak atomic.Int32
	v := ValidatorFunc(func(ctx context.Context, c Candidate) error {
		n := cur.Add(1)
		defer cur.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		return nil
	})
	acc, rej, err := Screen(context.Background(), cands, ScreenOptions{Validator: v, Parallel: 3})
	if err != nil || len(acc) != 12 || len(rej) != 0 {
		t.Fatalf("accepted %d, rejected %d, err %v", len(acc), len(rej), err)
	}
	for i, c := range acc {
		if c.Index != i+1 {
			t.Fatalf("order: %d at %d", c.Index, i)
		}
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 2..3", p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	block := ValidatorFunc(func(ctx context.Context, c Candidate) error {
		if c.Index == 2 {
			cancel()
		}
		<-ctx.Done()
		return ctx.Err()
	})
	acc, rej, err = Screen(ctx, cands, ScreenOptions{Validator: block, Parallel: 2})
	if !errors.Is(err, context.Canceled) || len(acc) != 0 || len(rej) != 12 {
		t.Fatalf("cancelled: accepted %d, rejected %d, err %v", len(acc), len(rej), err)
	}
	for _, r := range rej {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("candidate %d: %v", r.Candidate.Index, r.Err)
		}
	}
}

package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// fakeLane passes the answer "right" and fails anything else.
type fakeLane struct{}

func (fakeLane) Name() string                       { return "c2x86" }
func (fakeLane) Extract(text string) (string, bool) { return strings.TrimSpace(text), true }
func (fakeLane) Tools(tools.Item) []tools.Tool      { return nil }
func (fakeLane) Verify(_ context.Context, _ tools.Item, answer string) (tools.Verdict, error) {
	if answer == "right" {
		return tools.Verdict{Pass: true, Stage: "compare"}, nil
	}
	return tools.Verdict{Class: tools.ClassWrongOutput, Stage: "compare", Diagnostic: "line 1: expected 1 got 2"}, nil
}

// fakeModel answers with fn.
type fakeModel struct {
	fn func(ctx context.Context, req agent.Request) (*agent.Response, error)
}

func (m fakeModel) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	return m.fn(ctx, req)
}

// solver answers wrong for tasks whose prompt says hard=yes.
var solver = fakeModel{fn: func(_ context.Context, req agent.Request) (*agent.Response, error) {
	ans := "right"
	if strings.Contains(req.Messages[len(req.Messages)-1].Content, "hard=yes") {
		ans = "wrong"
	}
	return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: ans},
		Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 5, Calls: 1}}, nil
}}

// synth counts calls per category and answers with reply(category, call).
type synth struct {
	mu    sync.Mutex
	calls map[string]int
	reply func(cat string, n int) (string, error)
	// block, when set, makes calls wait for ctx to end (after closing
	// started once).
	block   bool
	started chan struct{}
}

var catRE = regexp.MustCompile(`category "([a-z_]+)"`)

func (s *synth) model() agent.Model {
	return fakeModel{fn: func(ctx context.Context, req agent.Request) (*agent.Response, error) {
		cat := catRE.FindStringSubmatch(req.Messages[1].Content)[1]
		s.mu.Lock()
		s.calls[cat]++
		n := s.calls[cat]
		block := s.block
		s.mu.Unlock()
		if block {
			close(s.started)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		text, err := s.reply(cat, n)
		if err != nil {
			return nil, err
		}
		return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: text}, Model: "synth",
			Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 50}}, nil
	}}
}

func (s *synth) count(cat string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[cat]
}

// cTask is a c2x86 TASK block with a trivial function.
func cTask(i int, cat, fn string) string {
	return fmt.Sprintf("### TASK %d\ncategory: %s\nfunction: %s\n```c function.c\nint %s(int x) { return x + %d; }\n```\n"+
		"```c driver.c\n#include <stdio.h>\nint %s(int x);\nint main(void) { printf(\"%%d\\n\", %s(1)); return 0; }\n```\n",
		i, cat, fn, fn, i, fn, fn)
}

// task makes a task of category cat; hard ones are answered wrong.
func task(round int, key, cat string, hard bool) runs.Task {
	h := "no"
	if hard {
		h = "yes"
	}
	return runs.Task{Round: round, Key: key, Lane: "c2x86", Categories: []string{cat},
		Files:  map[string]string{"function.c": "int f_" + strings.ReplaceAll(key, "/", "_") + "(void){return 1;}"},
		Prompt: fmt.Sprintf("solve %s cat=%s hard=%s", key, cat, h)}
}

// testRefine builds a refinement config over two categories, "hard"
// (always failed) and "easy" (always passed), 6 tasks each per round.
func testRefine(rounds int, s *synth, v refinement.Validator) *Refine {
	pol := refinement.DefaultPolicy()
	return &Refine{
		Rounds: rounds, Policy: pol, Factor: 3, K: 2, Plateau: 0.02,
		Draw: func(round int, weights map[string]float64) ([]runs.Task, error) {
			var out []runs.Task
			for i := 0; i < 6; i++ {
				out = append(out, task(round, fmt.Sprintf("r%d/hard#%d", round, i), "hard", true))
				out = append(out, task(round, fmt.Sprintf("r%d/easy#%d", round, i), "easy", false))
			}
			return out, nil
		},
		FromCandidate: func(round int, c refinement.Candidate) ([]runs.Task, error) {
			t := c.Task(round, fmt.Sprintf("r%d/synth/%s/%d", round, c.Category, c.Index))
			t.Prompt = "solve synthesised cat=" + c.Category + " hard=no"
			return []runs.Task{t}, nil
		},
		Synth: s.model(), SynthName: "synth", Validator: v, Lanes: testLanes(),
	}
}

// testLanes are the registered lanes' refinement rules (the tests' tasks
// are c2x86 tasks).
func testLanes() *refinement.Lanes {
	r, err := lanes.Registry()
	if err != nil {
		panic(err)
	}
	return r.Rules()
}

func openStore(t *testing.T) *runs.Store {
	t.Helper()
	st, err := runs.Open(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newCampaign(t *testing.T, st *runs.Store) runs.Campaign {
	t.Helper()
	c, err := st.CreateCampaign(context.Background(), runs.Campaign{Name: "t", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func plan(rf *Refine) *Plan {
	return &Plan{Lane: fakeLane{}, Model: solver, ToolMode: agent.ToolsNone, MaxToolCalls: -1, Concurrency: 2,
		Tasks: func() ([]runs.Task, error) { return rf.Draw(0, nil) }, Refine: rf}
}

func records(t *testing.T, st *runs.Store, id string) []RoundRecord {
	t.Helper()
	rs, err := st.Rounds(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []RoundRecord
	for _, r := range rs {
		d, err := DecodeRoundRecord(r.Record)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func TestRoundsPlateau(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	s := &synth{calls: map[string]int{}, reply: func(string, int) (string, error) { return "No ideas.", nil }}
	e := &Engine{Store: st}
	n, err := e.Run(ctx, c.ID, plan(testRefine(5, s, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Campaign(ctx, c.ID)
	// Round 0: hard 0/6 is targeted; the synthesiser gives nothing; round 1
	// is again 0/6: no category improved, plateau.
	if got.State != runs.CampaignDone || got.Round != 1 || !strings.HasPrefix(got.Note, "plateau") || n.Tasks != 24 {
		t.Fatalf("campaign %s round %d note %q, counts %+v", got.State, got.Round, got.Note, n)
	}
	rs := records(t, st, c.ID)
	if len(rs) != 2 || rs[0].NextRound != 1 || len(rs[0].Choices) != 1 || rs[0].Choices[0].Category != "hard" ||
		len(rs[0].Synth) != 1 || len(rs[0].Synth[0].Rejected) != 1 || rs[1].Stop == "" || rs[1].NextRound != 0 {
		t.Fatalf("records %+v", rs)
	}
	if rs[0].Weights["hard"] != 3 || rs[0].Weights["easy"] != 1 {
		t.Errorf("weights %v", rs[0].Weights)
	}
	// Running a done campaign again changes nothing.
	if _, err := e.Run(ctx, c.ID, plan(testRefine(5, s, nil)), nil); err != nil || s.count("hard") != 1 {
		t.Fatalf("second run: %v, %d synthesiser calls", err, s.count("hard"))
	}
}

func TestRoundsBudgetAtRoundEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	s := &synth{calls: map[string]int{}, reply: func(string, int) (string, error) { return "", nil }}
	p := plan(testRefine(3, s, nil))
	p.MaxTasks = 12 // exactly round 0
	if _, err := (&Engine{Store: st}).Run(ctx, c.ID, p, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := st.Campaign(ctx, c.ID)
	rs := records(t, st, c.ID)
	if got.State != runs.CampaignDone || got.Round != 0 || !strings.Contains(got.Note, "budget") || s.count("hard") != 0 ||
		len(rs) != 1 || !strings.HasPrefix(rs[0].Stop, "budget reached") {
		t.Fatalf("campaign %+v, records %+v, %d synthesiser calls", got, rs, s.count("hard"))
	}
}

// TestRoundsFailuresResume: a synthesiser that fails for good, then a
// validator that cannot run, each stop the campaign as failed; resuming
// reuses every reply already stored and asks again only for what is missing.
func TestRoundsFailuresResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	down := true
	s := &synth{calls: map[string]int{}}
	s.reply = func(cat string, n int) (string, error) {
		switch {
		case cat == "extra":
			return "", &agent.Error{Kind: agent.KindBadRequest, Err: errors.New("context too long")}
		case cat == "hard" && down:
			return "", &agent.Error{Kind: agent.KindRetryable, Err: errors.New("connection refused")}
		}
		return cTask(1, cat, "fa_"+cat) + cTask(2, cat, "fb_"+cat), nil
	}
	broken := true
	v := refinement.ValidatorFunc(func(_ context.Context, c refinement.Candidate) error {
		if broken {
			return fmt.Errorf("%w: sandbox gone", ErrValidatorBroken)
		}
		if c.Function == "fb_hard" {
			return errors.New("does not compile")
		}
		return nil
	})
	rf := testRefine(1, s, v)
	rf.Policy.Forced = []string{"extra"} // answered with a bad request: recorded, not fatal
	e := &Engine{Store: st}
	run := func() error {
		_, err := e.Run(ctx, c.ID, plan(rf), nil)
		var fe *FatalError
		if err != nil && !errors.As(err, &fe) {
			t.Fatal(err)
		}
		return err
	}
	resume := func() {
		if err := st.SetCampaignState(ctx, c.ID, runs.CampaignQueued, "resumed"); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("first run: %v", err)
	}
	got, _ := st.Campaign(ctx, c.ID)
	if got.State != runs.CampaignFailed || got.Round != 0 {
		t.Fatalf("after the synthesiser failed: %+v", got)
	}
	if rec, err := st.Round(ctx, c.ID, 0); err != nil || rec.Final {
		t.Fatalf("draft: %+v %v", rec, err)
	}

	down = false
	resume()
	if err := run(); err == nil || !errors.Is(err, ErrValidatorBroken) {
		t.Fatalf("second run: %v", err)
	}
	if s.count("extra") != 1 || s.count("hard") != 2 {
		t.Fatalf("calls %v: the bad request must not be repeated, hard asked once more", s.calls)
	}

	broken = false
	resume()
	if err := run(); err != nil {
		t.Fatalf("third run: %v", err)
	}
	if s.count("extra") != 1 || s.count("hard") != 2 {
		t.Fatalf("calls %v: stored replies must be reused", s.calls)
	}
	got, _ = st.Campaign(ctx, c.ID)
	n1, _ := st.Counts(ctx, c.ID, 1)
	rs := records(t, st, c.ID)
	if got.State != runs.CampaignDone || got.Round != 1 || n1.Tasks != 13 || n1.Done != 13 || len(rs) != 2 {
		t.Fatalf("campaign %+v round 1 %+v records %d", got, n1, len(rs))
	}
	by := map[string]SynthRecord{}
	for _, sr := range rs[0].Synth {
		by[sr.Category] = sr
	}
	if e := by["extra"]; e.Error == "" || e.ReplyBlob != "" {
		t.Errorf("extra: %+v", e)
	}
	h := by["hard"]
	if len(h.Accepted) != 1 || h.Accepted[0].Function != "fa_hard" || len(h.Rejected) != 1 ||
		h.Rejected[0].Stage != RejectInvalid || !strings.Contains(h.Rejected[0].Reason, "does not compile") {
		t.Errorf("hard: %+v", h)
	}
	if rs[0].SynthTasks != 1 || rs[0].DrawnTasks != 12 || rs[0].Tasks != 13 {
		t.Errorf("record 0: %+v", rs[0])
	}
}

// TestRoundsStopBetweenRounds: a campaign stopped during synthesis is not
// done; run again, it synthesises and finishes.
func TestRoundsStopBetweenRounds(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	c := newCampaign(t, st)
	s := &synth{calls: map[string]int{}, block: true, started: make(chan struct{}),
		reply: func(cat string, _ int) (string, error) { return cTask(1, cat, "f_"+cat), nil }}
	rf := testRefine(1, s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-s.started; cancel() }()
	_, err := (&Engine{Store: st}).Run(ctx, c.ID, plan(rf), nil)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped run: %v", err)
	}
	got, _ := st.Campaign(context.Background(), c.ID)
	if got.State != runs.CampaignRunning || got.Round != 0 {
		t.Fatalf("after the stop: %+v", got)
	}
	s.mu.Lock()
	s.block = false
	s.mu.Unlock()
	if _, err := (&Engine{Store: st}).Run(context.Background(), c.ID, plan(rf), nil); err != nil {
		t.Fatal(err)
	}
	got, _ = st.Campaign(context.Background(), c.ID)
	n, _ := st.Counts(context.Background(), c.ID, -1)
	if got.State != runs.CampaignDone || got.Round != 1 || n.Tasks != 12+13 || n.Done != n.Tasks || s.count("hard") != 2 {
		t.Fatalf("after the rerun: %+v %+v, %d calls", got, n, s.count("hard"))
	}
}

// TestRoundsCarryPending: a candidate whose validation is pending (the
// checks it needs wait for another host) is neither accepted nor
// rejected; the next transition screens it again, and once the host can
// run its checks it is accepted and its task queued.
func TestRoundsCarryPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	s := &synth{calls: map[string]int{}, reply: func(cat string, n int) (string, error) {
		if n == 1 {
			return cTask(1, cat, "fa_"+cat) + cTask(2, cat, "fb_"+cat), nil
		}
		return "No more ideas.", nil
	}}
	var mu sync.Mutex
	gpu := false
	v := refinement.ValidatorFunc(func(_ context.Context, c refinement.Candidate) error {
		mu.Lock()
		defer mu.Unlock()
		if c.Function == "fb_hard" {
			return errors.New("does not compile")
		}
		if !gpu {
			return fmt.Errorf("%w: the GPU check waits for a GPU host", refinement.ErrPending)
		}
		return nil
	})
	rf := testRefine(2, s, v)
	rf.Plateau = -1 // no plateau stop: round 1 is as bad as round 0
	p := plan(rf)
	e := &Engine{Store: st}
	// Round 1's tasks are judged here; the transition after it happens on
	// a "GPU host" (the validator can run its checks from then on).
	p.Model = fakeModel{fn: func(ctx context.Context, req agent.Request) (*agent.Response, error) {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "solve r1/") {
			mu.Lock()
			gpu = true
			mu.Unlock()
		}
		return solver.fn(ctx, req)
	}}
	if _, err := e.Run(ctx, c.ID, p, nil); err != nil {
		t.Fatal(err)
	}
	rs := records(t, st, c.ID)
	if len(rs) != 3 {
		t.Fatalf("%d records", len(rs))
	}
	h := rs[0].Synth[0]
	if len(h.Pending) != 1 || h.Pending[0].Function != "fa_hard" || h.Pending[0].Stage != RejectPending || len(h.Accepted) != 0 ||
		len(h.Rejected) != 1 || rs[0].SynthTasks != 0 {
		t.Fatalf("round 0 synthesis: %+v", rs[0])
	}
	cc := rs[1].Carried
	if len(cc) != 1 || cc[0].FromRound != 0 || cc[0].Index != 1 || cc[0].Stage != CarryAccepted || len(cc[0].Keys) != 1 ||
		rs[1].SynthTasks != 1 {
		t.Fatalf("round 1 carried: %+v (synth tasks %d)", cc, rs[1].SynthTasks)
	}
	n2, _ := st.Counts(ctx, c.ID, 2)
	ts, _ := st.Tasks(ctx, c.ID, 2)
	found := false
	for _, task := range ts {
		found = found || task.Key == cc[0].Keys[0] && task.Meta["function"] == "fa_hard"
	}
	if n2.Tasks != 13 || !found {
		t.Errorf("round 2: %+v, carried task queued: %v", n2, found)
	}
	if len(rs[2].Carried) != 0 {
		t.Errorf("round 2 carried again: %+v", rs[2].Carried)
	}
}

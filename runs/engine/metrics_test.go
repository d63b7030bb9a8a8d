package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// recorder is a Metrics and agent.CallMetrics that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	started map[string]int
	ended   []AttemptStats
	faults  map[string]int // lane/class
	calls   []string       // model/endpoint
	tokens  agent.Usage
}

var (
	_ Metrics           = (*recorder)(nil)
	_ agent.CallMetrics = (*recorder)(nil)
)

func newRecorder() *recorder {
	return &recorder{started: map[string]int{}, faults: map[string]int{}}
}

func (r *recorder) AttemptStarted(lane string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started[lane]++
}

func (r *recorder) AttemptEnded(a AttemptStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, a)
}

func (r *recorder) ModelFault(lane, class string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[lane+"/"+class]++
}

func (r *recorder) ModelCall(model, endpoint string, u agent.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, model+"/"+endpoint)
	r.tokens.Add(u)
}

// stagedLane judges "right" a pass, "pending" a pass with its run stage
// left for another host, anything else wrong output; every verdict has
// timed stages.
type stagedLane struct{}

func (stagedLane) Name() string                       { return "c2x86" }
func (stagedLane) Extract(text string) (string, bool) { return strings.TrimSpace(text), true }
func (stagedLane) Tools(tools.Item) []tools.Tool      { return nil }
func (stagedLane) Verify(_ context.Context, _ tools.Item, answer string) (tools.Verdict, error) {
	compile := tools.Stage{Name: "compile", OK: true, Duration: 2 * time.Millisecond}
	switch answer {
	case "right":
		return tools.Verdict{Pass: true, Stage: "run", Stages: []tools.Stage{compile, {Name: "run", OK: true, Duration: 3 * time.Millisecond}}}, nil
	case "pending":
		return tools.Verdict{Pass: true, Stage: "compile", Stages: []tools.Stage{compile, {Name: "run", Skipped: true}}}, nil
	}
	return tools.Verdict{Class: tools.ClassWrongOutput, Stage: "run",
		Stages: []tools.Stage{compile, {Name: "run", Duration: 4 * time.Millisecond}}}, nil
}

// scripted answers the word after "ans=" in the prompt; prompts holding
// "flaky" get a 500 on their first call.
func scripted() agent.Model {
	var flaky atomic.Bool
	return fakeModel{fn: func(_ context.Context, req agent.Request) (*agent.Response, error) {
		p := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(p, "flaky") && !flaky.Swap(true) {
			return nil, &agent.Error{Kind: agent.KindRetryable, Status: 500, Err: errors.New("internal error")}
		}
		_, ans, _ := strings.Cut(p, "ans=")
		ans, _, _ = strings.Cut(ans, " ")
		return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: ans}, Model: "m1", Endpoint: "ep1",
			Usage: agent.Usage{PromptTokens: 10, CompletionTokens: 5, ReasoningTokens: 2, Calls: 1}}, nil
	}}
}

// TestMetricsHook runs a campaign with a recording Metrics: every attempt
// is started and ended once with its verdict class and stages, every
// model call and fault is reported, and the totals match the store.
func TestMetricsHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	rec := newRecorder()
	tasks := []runs.Task{
		{Key: "a", Lane: "c2x86", Prompt: "ans=right"},
		{Key: "b", Lane: "c2x86", Prompt: "ans=pending"},
		{Key: "c", Lane: "c2x86", Prompt: "ans=wrong"},
		{Key: "d", Lane: "c2x86", Prompt: "ans=right flaky"},
	}
	model := agent.Retry(scripted(), agent.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}, "ep1", nil)
	e := &Engine{Store: st, Metrics: rec}
	n, err := e.Run(ctx, c.ID, &Plan{Lane: stagedLane{}, Model: model, ToolMode: agent.ToolsNone, MaxToolCalls: -1,
		Concurrency: 2, Tasks: func() ([]runs.Task, error) { return tasks, nil }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.started["c2x86"] != 4 || len(rec.ended) != 4 {
		t.Fatalf("started %v, ended %d", rec.started, len(rec.ended))
	}
	classes := map[string]int{}
	for _, a := range rec.ended {
		if a.Outcome != OutcomeJudged || a.Lane != "c2x86" || a.Model != "m1" || a.Endpoint != "ep1" || a.Duration <= 0 {
			t.Errorf("attempt %+v", a)
		}
		classes[a.Class]++
		if len(a.Stages) != 2 || a.Stages[0].Name != "compile" || a.Stages[0].Duration != 2*time.Millisecond {
			t.Errorf("stages %+v", a.Stages)
		}
	}
	if want := map[string]int{ClassPass: 2, ClassPending: 1, "wrong_output": 1}; fmt.Sprint(classes) != fmt.Sprint(want) {
		t.Errorf("classes %v, want %v", classes, want)
	}
	// The store's figures agree.
	if n.Pass != 2 || n.Pending != 1 || n.Fail != 1 {
		t.Errorf("store counts %+v", n)
	}
	faults, err := st.Faults(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.faults["c2x86/server_error"] != 1 || faults["server_error"] != 1 || len(rec.faults) != 1 {
		t.Errorf("faults %v, store %v", rec.faults, faults)
	}
	if len(rec.calls) != 4 || slices.IndexFunc(rec.calls, func(s string) bool { return s != "m1/ep1" }) >= 0 {
		t.Errorf("calls %v", rec.calls)
	}
	if int64(rec.tokens.PromptTokens) != n.PromptTokens || int64(rec.tokens.CompletionTokens) != n.CompletionTokens ||
		int64(rec.tokens.ReasoningTokens) != n.ReasoningTokens || n.PromptTokens != 40 {
		t.Errorf("tokens %+v, store %+v", rec.tokens, n)
	}
}

// TestMetricsHookRequeued: an attempt whose model fails for good is
// reported requeued, without a class.
func TestMetricsHookRequeued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	c := newCampaign(t, st)
	rec := newRecorder()
	down := fakeModel{fn: func(context.Context, agent.Request) (*agent.Response, error) {
		return nil, &agent.Error{Kind: agent.KindRetryable, Status: 503, Err: errors.New("overloaded")}
	}}
	e := &Engine{Store: st, Metrics: rec, MaxModelFailures: 1}
	_, err := e.Run(ctx, c.ID, &Plan{Lane: stagedLane{}, Model: down, ToolMode: agent.ToolsNone, MaxToolCalls: -1,
		Concurrency: 1, Tasks: func() ([]runs.Task, error) { return []runs.Task{{Key: "a", Lane: "c2x86", Prompt: "ans=right"}}, nil }}, nil)
	var fatal *FatalError
	if !errors.As(err, &fatal) {
		t.Fatalf("run: %v, want a fatal error", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ended) != 1 || rec.ended[0].Outcome != OutcomeRequeued || rec.ended[0].Class != "" || len(rec.calls) != 0 {
		t.Fatalf("ended %+v, calls %v", rec.ended, rec.calls)
	}
}

// closingLane records Close.
type closingLane struct {
	stagedLane
	closed atomic.Int32
}

func (l *closingLane) Close() error {
	l.closed.Add(1)
	return nil
}

// TestDaemonClosesLane: when a campaign's run ends the daemon closes its
// plan's lane.
func TestDaemonClosesLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openStore(t)
	lane := &closingLane{}
	d := &Daemon{
		Engine: &Engine{Store: st},
		Prepare: func([]byte) (runs.Campaign, error) {
			return runs.Campaign{Name: "x", Lane: "c2x86"}, nil
		},
		Plan: func(context.Context, runs.Campaign) (*Plan, error) {
			return &Plan{Lane: lane, Model: scripted(), ToolMode: agent.ToolsNone, MaxToolCalls: -1,
				Tasks: func() ([]runs.Task, error) { return []runs.Task{{Key: "a", Lane: "c2x86", Prompt: "ans=right"}}, nil }}, nil
		},
	}
	if err := d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := d.Submit(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for lane.closed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := d.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.Campaign(ctx, info.ID)
	if err != nil || got.State != runs.CampaignDone || lane.closed.Load() != 1 {
		t.Fatalf("campaign %s %v, lane closed %d times", got.State, err, lane.closed.Load())
	}
}

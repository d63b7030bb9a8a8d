// Package engine runs campaigns: it queues a campaign's tasks in the runs
// store, leases them to a bounded set of workers, drives one agent attempt
// per lease, stores the answer before it is verified, and records the verdict
// and the attempt in one transaction. A campaign killed at any moment and run
// again continues where it stopped: leases of the dead process are reclaimed,
// finished attempts are kept and no task is judged twice (the store refuses a
// verdict for a lease that is no longer current).
//
// The engine knows no concrete model, lane or corpus: the caller supplies a
// Plan per campaign (cmd/kiln wires the real ones).
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// Log attribute keys.
const (
	keyRun     = "run"
	keyTask    = "task"
	keyAttempt = "attempt"
	keyLane    = "lane"
)

// Plan is everything the engine needs to run one campaign.
type Plan struct {
	Lane     tools.Lane
	Model    agent.Model
	ToolMode agent.ToolMode
	Sampling agent.Sampling
	// System is the lane's system prompt.
	System string
	// Repair writes a repair turn after a failed verdict; nil uses the
	// agent's default wording.
	Repair       func(v tools.Verdict) string
	RepairTurns  int
	MaxToolCalls int
	Concurrency  int
	// Tasks returns round 0's tasks. It is called on every start; the store
	// skips keys it already holds, so it must be deterministic.
	Tasks func() ([]runs.Task, error)
	// Budgets; zero means unlimited.
	MaxTasks  int
	MaxTokens int64
	MaxWall   time.Duration
	// Toolchain and Policy are recorded in every verdict.
	Toolchain map[string]string
	Policy    string
	// Refine, when set, makes the campaign a refinement campaign: rounds
	// after round 0 (see rounds.go).
	Refine *Refine
	// Labels computes the labels stored with every verdict (labels.go);
	// the zero value uses refinement's built-in tables and takes the
	// domain from the lane's "domain" artifact only.
	Labels Labels
}

// Engine runs campaigns held in a store.
type Engine struct {
	Store  *runs.Store
	Log    *slog.Logger
	Worker string // lease owner name; defaults to "kiln"
	// LeaseTTL bounds how long a dead worker's task stays leased when a
	// second process shares the store. Defaults to 10 minutes; leases are
	// renewed while an attempt runs.
	LeaseTTL time.Duration
	// MaxModelFailures is how many attempts in a row may fail on the model
	// side (after the adapters' own retries) before the campaign stops as
	// failed. Defaults to 3 + 2*concurrency.
	MaxModelFailures int
	// Progress, when set, is called about once per second while a campaign
	// runs, and once at the end.
	Progress func(c runs.Campaign, n runs.Counts)
	// OnFault, when set, is called for every failed model call of an
	// attempt, tries that a retry recovered included, with the failure's
	// class (agent.FaultClass). It must be safe for concurrent use.
	OnFault func(c runs.Campaign, class string, err error)
	// Metrics, when set, is told about attempts, verdicts, model calls and
	// faults (metrics.go).
	Metrics Metrics
}

// ErrStopped reports a campaign that ended without finishing its tasks
// because the caller stopped it (the campaign stays resumable).
var ErrStopped = errors.New("campaign stopped before it finished")

// FatalError stops a campaign: the model is not there, the endpoints are
// down, or the verifier itself is broken. Unfinished tasks stay queued.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return "campaign stopped: " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Run runs campaign id until its tasks are done, a budget is reached, a fatal
// error occurs or ctx is cancelled. soft, when closed, asks the workers to
// finish their in-flight attempts and claim nothing new; cancelling ctx
// aborts in-flight attempts (their leases are released, nothing is judged).
func (e *Engine) Run(ctx context.Context, id string, plan *Plan, soft <-chan struct{}) (runs.Counts, error) {
	c, err := e.Store.Campaign(ctx, id)
	if err != nil {
		return runs.Counts{}, fmt.Errorf("run campaign: %w", err)
	}
	switch c.State {
	case runs.CampaignDone, runs.CampaignCancelled:
		n, err := e.Store.Counts(ctx, c.ID, -1)
		return n, err
	}
	r := &runner{e: e, c: c, plan: plan, log: e.log().With(keyRun, c.ID, keyLane, c.Lane), start: time.Now()}
	return r.run(ctx, soft)
}

func (e *Engine) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

type runner struct {
	e     *Engine
	c     runs.Campaign
	plan  *Plan
	log   *slog.Logger
	start time.Time

	modelFailures atomic.Int64 // consecutive
	stopOnce      sync.Once
	stopClaims    chan struct{} // closed when no new task may be claimed
	mu            sync.Mutex
	fatal         error          // first fatal error
	budget        string         // budget that stopped the campaign
	doneNote      string         // why a refinement campaign stopped
	refineDone    bool           // a refinement campaign decided to stop
	faults        map[string]int // failed model calls by agent.FaultClass
}

func (r *runner) run(ctx context.Context, soft <-chan struct{}) (runs.Counts, error) {
	st := r.e.Store
	r.stopClaims = make(chan struct{})
	tasks, err := r.plan.Tasks()
	if err != nil {
		r.failCampaign(ctx, err)
		return runs.Counts{}, fmt.Errorf("build tasks: %w", err)
	}
	for i := range tasks {
		tasks[i].CampaignID = r.c.ID
		if tasks[i].Lane == "" {
			tasks[i].Lane = r.c.Lane
		}
	}
	added, err := st.AddTasks(ctx, r.c.ID, tasks)
	if err != nil {
		return runs.Counts{}, fmt.Errorf("queue tasks: %w", err)
	}
	reclaimed, err := st.ReclaimAll(ctx, r.c.ID)
	if err != nil {
		return runs.Counts{}, fmt.Errorf("reclaim leases: %w", err)
	}
	if err := st.SetCampaignState(ctx, r.c.ID, runs.CampaignRunning, ""); err != nil {
		return runs.Counts{}, fmt.Errorf("start campaign: %w", err)
	}
	r.log.Info("campaign running", "tasks_added", added, "leases_reclaimed", reclaimed, "concurrency", r.concurrency())

	progressDone := make(chan struct{})
	progressStopped := make(chan struct{})
	go r.progressLoop(progressDone, progressStopped)

	roundsDone := make(chan struct{})
	go func() {
		select {
		case <-soft:
			r.stopClaiming()
		case <-r.stopClaims:
		case <-ctx.Done():
		case <-roundsDone: // a finished campaign must not leave this goroutine waiting
		}
	}()

	runErr := r.rounds(ctx)
	close(roundsDone)
	close(progressDone)
	<-progressStopped

	// Final state. A background context: the state must be written even when ctx is done.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	n, err := st.Counts(fctx, r.c.ID, -1)
	if err != nil {
		return n, errors.Join(runErr, fmt.Errorf("count results: %w", err))
	}
	r.report(n)
	r.logFaults()
	r.mu.Lock()
	fatal, budget, doneNote := r.fatal, r.budget, r.doneNote
	finished := r.plan.Refine == nil || r.refineDone
	r.mu.Unlock()
	switch {
	case fatal != nil:
		r.failCampaign(fctx, fatal)
		return n, &FatalError{Err: fatal}
	case runErr != nil:
		return n, runErr
	case budget != "":
		return n, r.setState(fctx, runs.CampaignDone, "budget reached: "+budget)
	case n.Queued == 0 && n.Leased == 0 && finished:
		return n, r.setState(fctx, runs.CampaignDone, doneNote)
	case ctx.Err() != nil:
		return n, fmt.Errorf("%w: %w", ErrStopped, ctx.Err())
	default:
		return n, ErrStopped
	}
}

func (r *runner) setState(ctx context.Context, s runs.CampaignState, note string) error {
	if err := r.e.Store.SetCampaignState(ctx, r.c.ID, s, note); err != nil {
		return fmt.Errorf("set campaign state %s: %w", s, err)
	}
	return nil
}

func (r *runner) failCampaign(ctx context.Context, cause error) {
	if err := r.setState(ctx, runs.CampaignFailed, cause.Error()); err != nil {
		r.log.Error("could not mark campaign failed", "err", err)
	}
}

func (r *runner) concurrency() int {
	if r.plan.Concurrency > 0 {
		return r.plan.Concurrency
	}
	return 1
}

func (r *runner) stopClaiming() { r.stopOnce.Do(func() { close(r.stopClaims) }) }

func (r *runner) stopFatal(err error) {
	r.mu.Lock()
	if r.fatal == nil {
		r.fatal = err
		r.log.Error("campaign stopping", "err", err)
	}
	r.mu.Unlock()
	r.stopClaiming()
}

func (r *runner) claimsStopped() bool {
	select {
	case <-r.stopClaims:
		return true
	default:
		return false
	}
}

// workers runs the worker pool until no task is left or claims stop. Tasks
// released by a failing model go back to the queue; the pool goes round again
// while any are left and claims are open.
func (r *runner) workers(ctx context.Context) error {
	for {
		g, gctx := errgroup.WithContext(ctx)
		for w := 0; w < r.concurrency(); w++ {
			g.Go(func() error { return r.worker(gctx, ctx) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if r.claimsStopped() || ctx.Err() != nil {
			return nil
		}
		n, err := r.e.Store.Counts(ctx, r.c.ID, -1)
		if err != nil {
			return fmt.Errorf("count tasks: %w", err)
		}
		if n.Queued == 0 {
			return nil
		}
	}
}

// worker claims and attempts tasks until none is left. gctx ends the group on
// a storage error; ctx is the caller's.
func (r *runner) worker(gctx, ctx context.Context) error {
	for {
		if r.claimsStopped() || gctx.Err() != nil {
			return nil
		}
		if r.budgetReached(gctx) {
			return nil
		}
		lease, err := r.e.Store.Claim(gctx, r.c.ID, r.e.worker(), r.e.leaseTTL())
		if errors.Is(err, runs.ErrNoTask) {
			return nil
		}
		if err != nil {
			if gctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("claim task: %w", err)
		}
		if err := r.attempt(ctx, lease); err != nil {
			return err
		}
	}
}

func (e *Engine) worker() string {
	if e.Worker != "" {
		return e.Worker
	}
	return "kiln"
}

func (e *Engine) leaseTTL() time.Duration {
	if e.LeaseTTL > 0 {
		return e.LeaseTTL
	}
	return 10 * time.Minute
}

func (r *runner) budgetReached(ctx context.Context) bool {
	p := r.plan
	reason := ""
	if p.MaxWall > 0 && time.Since(r.start) >= p.MaxWall {
		reason = fmt.Sprintf("wall time %s", p.MaxWall)
	}
	if reason == "" && (p.MaxTasks > 0 || p.MaxTokens > 0) {
		n, err := r.e.Store.Counts(ctx, r.c.ID, -1)
		if err != nil {
			return false // the claim that follows reports the store error
		}
		if p.MaxTasks > 0 && n.Done >= p.MaxTasks {
			reason = fmt.Sprintf("tasks %d", p.MaxTasks)
		}
		if tok := n.PromptTokens + n.CompletionTokens; p.MaxTokens > 0 && tok >= p.MaxTokens {
			reason = fmt.Sprintf("tokens %d", p.MaxTokens)
		}
	}
	if reason == "" {
		return false
	}
	r.mu.Lock()
	if r.budget == "" {
		r.budget = reason
		r.log.Info("budget reached; finishing in-flight attempts", "budget", reason)
	}
	r.mu.Unlock()
	r.stopClaiming()
	return true
}

// attempt runs one leased task. It returns an error only for storage
// failures that must stop the campaign.
func (r *runner) attempt(ctx context.Context, lease *runs.Lease) error {
	st := r.e.Store
	t := lease.Task
	log := r.log.With(keyTask, t.Key, keyAttempt, lease.Number)
	stats := AttemptStats{Lane: t.Lane, Outcome: OutcomeRequeued}
	if stats.Lane == "" {
		stats.Lane = r.c.Lane
	}
	begin := time.Now()
	r.e.metrics().AttemptStarted(stats.Lane)
	defer func() {
		stats.Duration = time.Since(begin)
		r.e.metrics().AttemptEnded(stats)
	}()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	renewDone := r.renew(actx, cancel, lease, log)
	defer func() { cancel(); <-renewDone }()

	actx = agent.WithFaultObserver(actx, func(err error) { r.fault(actx, log, err) })

	rec := runs.Attempt{TaskID: t.ID, Number: lease.Number, StartedAt: time.Now().UTC()}
	var saved atomic.Bool
	loop := &agent.Loop{
		Model:        r.plan.Model,
		Lane:         r.plan.Lane,
		Sampling:     r.plan.Sampling,
		ToolMode:     r.plan.ToolMode,
		MaxToolCalls: r.plan.MaxToolCalls,
		RepairTurns:  r.plan.RepairTurns,
		Repair:       r.plan.Repair,
		Log:          log,
		Metrics:      r.callMetrics(),
		OnAnswer: func(ctx context.Context, answer string) error {
			a := rec
			a.Answer = answer
			out, err := st.SaveAnswer(ctx, lease, a)
			if err != nil {
				return fmt.Errorf("save answer: %w", err)
			}
			rec.ID = out.ID
			saved.Store(true)
			return nil
		},
	}
	item := tools.Item{Lane: t.Lane, Files: t.Files, Meta: t.Meta}
	if done, err := r.checkTask(ctx, actx, lease, log, rec, item, &stats); done || err != nil {
		return err
	}
	res, err := loop.Run(actx, r.plan.System, t.Prompt, item)
	if res != nil {
		stats.Model, stats.Endpoint = res.Model, res.Endpoint
		for _, c := range res.Checks {
			stats.Stages = append(stats.Stages, c.Verdict.Stages...)
		}
	}
	if err != nil || res == nil {
		if errors.Is(err, runs.ErrLeaseLost) {
			stats.Outcome = OutcomeLost
		}
		return r.abandon(ctx, lease, log, err)
	}
	r.fill(&rec, res)

	var failures int64 // model failures in a row, when this attempt ended with one
	if res.Err != nil {
		judge, n, err := r.modelFault(ctx, lease, log, res)
		if !judge {
			return err
		}
		failures = n
	} else {
		r.modelFailures.Store(0)
	}

	v := r.verdict(ctx, res)
	rec.FinishedAt = time.Now().UTC()
	v.Labels = r.plan.Labels.Of(t, rec, v, res.Verdict.Artifacts)
	if err := st.Finish(context.WithoutCancel(ctx), lease, rec, v); err != nil {
		if errors.Is(err, runs.ErrLeaseLost) {
			stats.Outcome = OutcomeLost
			log.Warn("lease lost before the verdict was stored; another worker owns the task now")
			return nil
		}
		return fmt.Errorf("store verdict: %w", err)
	}
	stats.Outcome, stats.Class = OutcomeJudged, VerdictClass(finalVerdict(res))
	log.Debug("attempt judged", "pass", v.Pass, "class", v.Class, "model_fault", res.Err != nil)
	if failures > 0 {
		r.pause(ctx, failures)
	}
	return nil
}

// checkTask asks a lane that checks tasks (tools.TaskChecker) whether the
// task can be judged at all. When it cannot (a TaskFault verdict: the
// task's own reference is broken), the attempt ends with that verdict and
// no model is called: done is true. An error of the check abandons the
// attempt as a verifier's would.
func (r *runner) checkTask(ctx, actx context.Context, lease *runs.Lease, log *slog.Logger, rec runs.Attempt, item tools.Item,
	stats *AttemptStats) (done bool, err error) {
	tc, ok := r.plan.Lane.(tools.TaskChecker)
	if !ok {
		return false, nil
	}
	fault, err := tc.CheckTask(actx, item)
	if err != nil {
		return true, r.abandon(ctx, lease, log, fmt.Errorf("check task: %w", err))
	}
	if !fault.TaskFault() {
		return false, nil
	}
	rec.FinishedAt = time.Now().UTC()
	v := r.toVerdict(fault)
	v.Labels = r.plan.Labels.Of(lease.Task, rec, v, fault.Artifacts)
	if err := r.e.Store.Finish(context.WithoutCancel(ctx), lease, rec, v); err != nil {
		if errors.Is(err, runs.ErrLeaseLost) {
			stats.Outcome = OutcomeLost
			return true, nil
		}
		return true, fmt.Errorf("store verdict: %w", err)
	}
	stats.Outcome, stats.Class = OutcomeJudged, VerdictClass(fault)
	log.Info("task fault: the task cannot be judged; no model called", "class", string(fault.Class), "diagnostic", fault.Diagnostic)
	return true, nil
}

// modelFault handles an attempt that a failed model call ended. It reports
// whether the attempt is judged all the same, with the model failures in
// a row when the failure counts towards them (0 otherwise); when it is
// not, the task has been released (err is the release's error).
//
// An attempt with a judged reply (a repair turn failed) is judged by that
// reply's verdict: its failure class is what refinement targets, and the
// fault is recorded beside it (runs.Attempt.Error). Without one, a call
// rejected for this task (bad request: context too long, refused content)
// is judged a model error; a missing model or bad credentials stop the
// campaign; other failures (retryable ones that outlived the retries,
// unknown ones) send the task back to the queue. A cancelled context
// always releases the task.
func (r *runner) modelFault(ctx context.Context, lease *runs.Lease, log *slog.Logger, res *agent.Attempt) (judge bool, failures int64, err error) {
	kind := agent.KindOf(res.Err)
	answered := len(res.Checks) > 0
	switch {
	case ctx.Err() != nil:
		return false, 0, r.release(ctx, lease, log)
	case kind == agent.KindModelNotFound || kind == agent.KindAuth:
		r.stopFatal(res.Err)
		if answered {
			return true, 0, nil
		}
		return false, 0, r.release(ctx, lease, log)
	case kind == agent.KindBadRequest:
		return true, 0, nil
	}
	n := r.modelFailures.Add(1)
	if int(n) >= r.maxModelFailures() {
		r.stopFatal(fmt.Errorf("%d model calls failed in a row, last: %w", n, res.Err))
	}
	if answered {
		log.Warn("model call failed in a repair turn; the attempt keeps its last judged answer", "err", res.Err,
			"class", res.Verdict.Class, "in_a_row", n)
		return true, n, nil
	}
	log.Warn("model call failed; task goes back to the queue", "err", res.Err, "in_a_row", n)
	if err := r.release(ctx, lease, log); err != nil {
		return false, 0, err
	}
	r.pause(ctx, n)
	return false, 0, nil
}

// abandon handles an attempt the loop could not finish (answer could not be
// stored, verifier broken, ctx cancelled).
func (r *runner) abandon(ctx context.Context, lease *runs.Lease, log *slog.Logger, err error) error {
	if errors.Is(err, runs.ErrLeaseLost) {
		log.Warn("lease lost during the attempt", "err", err)
		return nil
	}
	if ctx.Err() == nil {
		// The verifier or the store failed for a reason that will not go away
		// by itself (missing toolchain, full disk): stop the campaign.
		r.stopFatal(fmt.Errorf("attempt on task %s: %w", lease.Task.Key, err))
	}
	return r.release(ctx, lease, log)
}

func (r *runner) release(ctx context.Context, lease *runs.Lease, log *slog.Logger) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.e.Store.Release(rctx, lease); err != nil && !errors.Is(err, runs.ErrLeaseLost) {
		log.Error("release lease", "err", err)
		return fmt.Errorf("release task: %w", err)
	}
	return nil
}

// pause backs off after a model failure so that a dead endpoint is not hammered.
func (r *runner) pause(ctx context.Context, n int64) {
	d := time.Duration(n) * 200 * time.Millisecond
	if d > 5*time.Second {
		d = 5 * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-r.stopClaims:
	}
}

// fault counts one failed model call (retried or not), in the store too (so
// `kiln report` shows it after a restart), and reports it.
func (r *runner) fault(ctx context.Context, log *slog.Logger, err error) {
	class := agent.FaultClass(err)
	if serr := r.e.Store.AddFault(context.WithoutCancel(ctx), r.c.ID, class); serr != nil {
		log.Warn("fault not counted in the store", "fault", class, "err", serr)
	}
	r.mu.Lock()
	if r.faults == nil {
		r.faults = map[string]int{}
	}
	r.faults[class]++
	r.mu.Unlock()
	log.Debug("model call failed", "fault", class, "err", err)
	r.e.metrics().ModelFault(r.c.Lane, class)
	if r.e.OnFault != nil {
		r.e.OnFault(r.c, class, err)
	}
}

// logFaults logs the failed model calls of this run by class, if any.
func (r *runner) logFaults() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.faults) == 0 {
		return
	}
	classes := make([]string, 0, len(r.faults))
	total := 0
	for c, n := range r.faults {
		classes = append(classes, c)
		total += n
	}
	sort.Strings(classes)
	attrs := []any{"total", total}
	for _, c := range classes {
		attrs = append(attrs, c, r.faults[c])
	}
	r.log.Info("failed model calls in this run, retried ones included", attrs...)
}

func (r *runner) maxModelFailures() int {
	if r.e.MaxModelFailures > 0 {
		return r.e.MaxModelFailures
	}
	return 3 + 2*r.concurrency()
}

// renew keeps the lease alive while the attempt runs; if the lease is lost,
// the attempt is cancelled.
func (r *runner) renew(ctx context.Context, cancel context.CancelFunc, lease *runs.Lease, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	ttl := r.e.leaseTTL()
	go func() {
		defer close(done)
		tick := time.NewTicker(ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := r.e.Store.Renew(ctx, lease, ttl); err != nil {
					if errors.Is(err, runs.ErrLeaseLost) {
						log.Warn("lease lost; cancelling the attempt")
						cancel()
						return
					}
					log.Warn("renew lease", "err", err)
				}
			}
		}
	}()
	return done
}

func (r *runner) fill(rec *runs.Attempt, res *agent.Attempt) {
	rec.Answer = res.Answer
	rec.Endpoint = res.Endpoint
	rec.Model = res.Model
	rec.Turns, rec.ToolCalls, rec.RepairTurns = res.Turns, res.ToolCalls, res.RepairTurns
	u := res.Usage
	rec.Usage = runs.Usage{
		PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, ReasoningTokens: u.ReasoningTokens,
		PromptSource: string(u.PromptSource), CompletionSource: string(u.CompletionSource), ReasoningSource: string(u.ReasoningSource),
		LatencyMS: u.Latency.Milliseconds(), TTFTMS: u.TTFT.Milliseconds(), Calls: u.Calls,
	}
	if b, err := json.Marshal(res.Messages); err == nil {
		rec.Transcript = b
	}
	if res.Err != nil {
		rec.Error = res.Err.Error()
	}
}

// verdict converts the loop's verdict into a stored one, writing artifacts to
// the blob store.
func (r *runner) verdict(ctx context.Context, res *agent.Attempt) runs.Verdict {
	return r.toVerdict(finalVerdict(res))
}

// finalVerdict is the lane verdict an attempt is judged by: that of its
// last judged reply (a model failure after it is recorded beside it, in
// the attempt's Error), or a model_error verdict when the model failed
// before any reply was judged.
func finalVerdict(res *agent.Attempt) tools.Verdict {
	if res.Err != nil && len(res.Checks) == 0 {
		return tools.Verdict{Class: tools.ClassModelError, Stage: "model", Diagnostic: res.Err.Error()}
	}
	return res.Verdict
}

// callMetrics is the engine's Metrics as the agent's per-call hook, when
// it is one.
func (r *runner) callMetrics() agent.CallMetrics {
	if m, ok := r.e.Metrics.(agent.CallMetrics); ok {
		return m
	}
	return nil
}

func (r *runner) toVerdict(tv tools.Verdict) runs.Verdict {
	return ToVerdict(r.e.Store.Blobs(), tv, r.plan.Toolchain, r.plan.Policy, r.log)
}

// ToVerdict converts a lane verdict into a stored verdict; artifacts go to
// blobs (an artifact that cannot be stored is logged and left out).
func ToVerdict(blobs *runs.Blobs, tv tools.Verdict, toolchain map[string]string, policy string, log *slog.Logger) runs.Verdict {
	v := runs.Verdict{
		Pass: tv.Pass, Class: string(tv.Class), Stage: tv.Stage, Diagnostic: tv.Diagnostic,
		Measurements: tv.Measurements, Toolchain: toolchain, Policy: policy,
	}
	if b, err := json.Marshal(tv.Stages); err == nil {
		v.Stages = b
	}
	if len(tv.Artifacts) > 0 {
		v.Artifacts = map[string]string{}
		for name, data := range tv.Artifacts {
			h, err := blobs.Put(data)
			if err != nil {
				log.Error("store artifact", "artifact", name, "err", err)
				continue
			}
			v.Artifacts[name] = h
		}
	}
	return v
}

func (r *runner) progressLoop(done <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	if r.e.Progress == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			n, err := r.e.Store.Counts(context.Background(), r.c.ID, -1)
			if err == nil {
				r.report(n)
			}
		}
	}
}

func (r *runner) report(n runs.Counts) {
	if r.e.Progress != nil {
		r.e.Progress(r.c, n)
	}
}

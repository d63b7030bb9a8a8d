// This file holds refinement rounds: after a round's tasks are all judged,
// the runner analyses the round (per-category statistics, long-tail
// selection), asks a synthesiser model for new tasks of the targeted
// categories, screens them (parse, dedupe, validate), and queues the next
// round: the corpus resampled with the categories re-weighted, plus the
// accepted synthesised tasks.
//
// # Where round state lives
//
// Everything is in the runs store, keyed by the round whose results were
// analysed:
//
//   - a draft round record (runs.SaveRoundDraft) grows while the next
//     round is prepared: after each synthesiser reply it records the
//     reply's blob hash (the prompt and the reply are blobs), so a process
//     killed during synthesis does not call the model again for the
//     categories already answered;
//   - runs.CloseRound writes the final record (choices and reasons,
//     weights, per-category synthesis with every accepted and rejected
//     candidate and why, what was drawn), queues the next round's tasks
//     and moves the campaign to the next round in one transaction: a
//     restart finds either the next round queued or the round still open
//     with its draft, never half a transition;
//   - a round whose final record has no next round is where the campaign
//     stopped (round count, plateau, budget, nothing to target), with the
//     reason.
//
// On every start the runner runs the queued tasks of the current round and
// only then looks at the round record, so a restart mid-round loses and
// repeats nothing: judged tasks stay judged (the store's leases guarantee
// it) and the transition is decided once.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// ErrValidatorBroken marks a validation that could not run (see
// refinement.ErrValidatorBroken).
var ErrValidatorBroken = refinement.ErrValidatorBroken

// Refine makes a campaign a refinement campaign (Plan.Refine). The fields
// up to FromCandidate are pure configuration (Decide needs only them, so a
// plan can be shown without a model); Synth and Validator do the work.
type Refine struct {
	// Rounds is the number of refinement rounds after round 0.
	Rounds int
	// Policy selects the categories to target.
	Policy refinement.Policy
	// Factor multiplies the sampling weight of each targeted category
	// (refinement.Mix).
	Factor float64
	// K is how many new tasks the synthesiser is asked for per targeted
	// category (refinement.DefaultK when <= 0).
	K int
	// Plateau stops refinement when no category improved its pass rate by
	// more than this between the last two rounds.
	Plateau float64
	// BaseWeights are the corpus sampling weights before refinement (nil:
	// every category 1).
	BaseWeights map[string]float64
	// Examples bounds the failing examples shown per category.
	Examples refinement.ExampleOptions
	// Lanes holds the lanes' refinement rules: the taxonomy and features
	// of the examples, the resynthesis prompts and parsers, task identity.
	Lanes *refinement.Lanes
	// Corpus holds one task per corpus item: synthesised tasks duplicating
	// one are dropped, and function names already used are listed to the
	// synthesiser.
	Corpus []runs.Task
	// Draw returns round's corpus tasks, sampled with weights. It must not
	// call a model (refine --plan uses it).
	Draw func(round int, weights map[string]float64) ([]runs.Task, error)
	// FromCandidate renders round's tasks for an accepted candidate (its
	// Category is the targeted category; when Validator is a
	// refinement.Preparer, the candidate as it prepared it).
	FromCandidate func(round int, c refinement.Candidate) ([]runs.Task, error)

	// Synth writes new tasks; SynthName names its endpoint in records.
	Synth         agent.Model
	SynthName     string
	SynthSampling agent.Sampling
	// Validator checks candidates (nil: parse and dedupe only); a
	// refinement.Preparer also completes them (see refinement.Screen).
	// Errors wrapping ErrValidatorBroken stop the transition.
	Validator refinement.Validator
	// ValidateParallel bounds concurrent validations (default 1).
	ValidateParallel int
}

func (rf *Refine) k() int {
	if rf.K > 0 {
		return rf.K
	}
	return refinement.DefaultK
}

// SynthPlan is one resynthesis request of a Decision.
type SynthPlan struct {
	Category string                 `json:"category"`
	K        int                    `json:"k"`
	Examples []refinement.Example   `json:"examples"`
	Prompt   refinement.SynthPrompt `json:"prompt"`
}

// Decision is what a round's results decide, before any model is called.
type Decision struct {
	// Round is the round analysed; the next round is Round+1.
	Round int                        `json:"round"`
	Stats []refinement.CategoryStats `json:"stats"`
	// Choices are the targeted categories with the reasons (empty when
	// Stop is set).
	Choices []refinement.Choice `json:"choices,omitempty"`
	// Weights are the next round's sampling weights.
	Weights  map[string]float64 `json:"weights,omitempty"`
	Requests []SynthPlan        `json:"requests,omitempty"`
	// Stop says why there is no next round ("" when there is one).
	Stop string `json:"stop,omitempty"`
}

// Decide computes what round's results (and the round before's, for the
// plateau rule) decide. tasks are the campaign's tasks (for the names the
// synthesiser must avoid). It calls no model.
func (rf *Refine) Decide(lane string, round int, results, prev []runs.Result, tasks []runs.Task) (Decision, error) {
	d := Decision{Round: round, Stats: refinement.Stats(results)}
	all, _ := refinement.Find(d.Stats, refinement.AllCategories)
	switch {
	case round >= rf.Rounds:
		d.Stop = fmt.Sprintf("round count reached: %d refinement round(s) after round 0", rf.Rounds)
		return d, nil
	case len(results) == 0:
		d.Stop = fmt.Sprintf("round %d has no judged task", round)
		return d, nil
	case !all.Rated():
		// Pending results and task faults are neither passes nor
		// failures: nothing to decide from.
		d.Stop = fmt.Sprintf("round %d has no judged result (%d pending, %d task faults)", round, all.Pending, all.TaskFaults)
		return d, nil
	case round > 0 && refinement.Plateau(refinement.Stats(prev), d.Stats, rf.Plateau):
		d.Stop = fmt.Sprintf("plateau: no category improved its pass rate by more than %.1f points from round %d to round %d",
			100*rf.Plateau, round-1, round)
		return d, nil
	}
	d.Choices = refinement.Select(d.Stats, rf.Policy)
	if len(d.Choices) == 0 {
		d.Stop = "no category to target: none is below the threshold with enough evidence, under-sampled or forced"
		d.Choices = nil
		return d, nil
	}
	d.Weights = refinement.Mix(d.Stats, d.Choices, rf.BaseWeights, rf.Factor)
	known := append(append([]runs.Task(nil), rf.Corpus...), tasks...)
	for _, ch := range d.Choices {
		var same []runs.Task
		for _, t := range known {
			if hasString(t.Categories, ch.Category) {
				same = append(same, t)
			}
		}
		exOpt := rf.Examples
		if exOpt.Lanes == nil {
			exOpt.Lanes = rf.Lanes
		}
		req := refinement.SynthRequest{Lane: lane, Category: ch.Category, K: rf.k(),
			Examples: refinement.ExamplesFor(results, ch.Category, exOpt),
			Avoid:    refinement.ExistingFunctions(same, 100)}
		p, err := rf.Lanes.BuildSynthPrompt(req)
		if err != nil {
			return d, fmt.Errorf("resynthesis prompt for %s: %w", ch.Category, err)
		}
		d.Requests = append(d.Requests, SynthPlan{Category: ch.Category, K: req.K, Examples: req.Examples, Prompt: p})
	}
	return d, nil
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RoundRecord is the JSON the engine stores per round (runs.RoundRecord's
// Record): the decision taken after the round and what came of it.
type RoundRecord struct {
	Round int `json:"round"`
	// Stop says why the campaign stopped after this round; NextRound is
	// Round+1 when it did not.
	Stop      string              `json:"stop,omitempty"`
	NextRound int                 `json:"next_round,omitempty"`
	Choices   []refinement.Choice `json:"choices,omitempty"`
	Weights   map[string]float64  `json:"weights,omitempty"`
	Factor    float64             `json:"factor,omitempty"`
	Synth     []SynthRecord       `json:"synthesis,omitempty"`
	// Drawn counts the next round's corpus tasks per category; DrawnTasks,
	// SynthTasks and Tasks are the next round's task counts.
	Drawn      map[string]int `json:"drawn,omitempty"`
	DrawnTasks int            `json:"drawn_tasks"`
	SynthTasks int            `json:"synth_tasks"`
	Tasks      int            `json:"tasks"`
	DecidedAt  time.Time      `json:"decided_at"`
	// Carried are the candidates the round before left pending
	// (SynthRecord.Pending, or Carried still pending), screened again at
	// this transition: on a host that runs the checks they waited for,
	// they are accepted (their tasks counted in SynthTasks) or rejected;
	// elsewhere they stay pending for the next transition.
	Carried []CarriedCandidate `json:"carried,omitempty"`
}

// CarriedCandidate is a pending candidate of an earlier round, screened
// again.
type CarriedCandidate struct {
	// FromRound is the round whose transition synthesised it; Category,
	// ReplyBlob and Index find its block in the synthesiser's reply.
	FromRound int    `json:"from_round"`
	Category  string `json:"category"`
	ReplyBlob string `json:"reply_blob"`
	Index     int    `json:"index"`
	Function  string `json:"function,omitempty"`
	// Stage is "accepted", RejectPending, RejectDuplicate or
	// RejectInvalid; Reason says why it is not accepted; Keys are the
	// tasks of an accepted one.
	Stage  string   `json:"stage"`
	Reason string   `json:"reason,omitempty"`
	Keys   []string `json:"keys,omitempty"`
}

// CarryAccepted is CarriedCandidate.Stage of an accepted candidate.
const CarryAccepted = "accepted"

// SynthRecord is one targeted category's resynthesis.
type SynthRecord struct {
	Category string `json:"category"`
	K        int    `json:"k"`
	// Examples are the task keys of the failing examples shown.
	Examples []string `json:"examples"`
	// PromptBlob and ReplyBlob are blob hashes: the prompt as JSON
	// {"system","user"} and the reply text.
	PromptBlob string `json:"prompt_blob,omitempty"`
	ReplyBlob  string `json:"reply_blob,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
	Model      string `json:"model,omitempty"`
	// Error is why the call gave no reply (a request the endpoint refused).
	Error            string        `json:"error,omitempty"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	ReasoningTokens  int           `json:"reasoning_tokens"`
	LatencyMS        int64         `json:"latency_ms"`
	Accepted         []SynthTask   `json:"accepted,omitempty"`
	Rejected         []SynthReject `json:"rejected,omitempty"`
	// Pending are candidates whose checks wait for another host (a GPU;
	// refinement.ErrPending): neither accepted nor rejected, no task
	// queued. Stage is RejectPending, Reason what waits.
	Pending []SynthReject `json:"pending,omitempty"`
}

// SynthTask is an accepted candidate and the keys of its tasks.
type SynthTask struct {
	Index       int      `json:"index"`
	Function    string   `json:"function"`
	Description string   `json:"description,omitempty"`
	Hash        string   `json:"hash"`
	Keys        []string `json:"keys"`
}

// Rejection stages of SynthReject.
const (
	RejectParse     = "parse"
	RejectDuplicate = "duplicate"
	RejectInvalid   = "invalid"
	// RejectPending is the stage of SynthRecord.Pending: not a rejection.
	RejectPending = "pending"
)

// SynthReject is a block of the reply that gave no task, and why.
type SynthReject struct {
	Index    int    `json:"index"`
	Function string `json:"function,omitempty"`
	Stage    string `json:"stage"`
	Reason   string `json:"reason"`
}

// DecodeRoundRecord reads a stored round record.
func DecodeRoundRecord(b []byte) (RoundRecord, error) {
	var r RoundRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("round record: %w", err)
	}
	return r, nil
}

// rounds runs the worker pool round after round: when a round's tasks are
// all judged and nothing stopped the campaign, it prepares the next round
// and goes on. It returns the workers' storage errors; a failed transition
// stops the campaign as failed (resumable: the draft keeps what was done).
func (r *runner) rounds(ctx context.Context) error {
	for {
		if err := r.workers(ctx); err != nil {
			return err
		}
		rf := r.plan.Refine
		if rf == nil || ctx.Err() != nil {
			return nil
		}
		r.mu.Lock()
		fatal := r.fatal
		r.mu.Unlock()
		if fatal != nil {
			return nil
		}
		n, err := r.e.Store.Counts(ctx, r.c.ID, -1)
		if err != nil {
			return fmt.Errorf("count tasks: %w", err)
		}
		if n.Queued > 0 || n.Leased > 0 {
			return nil
		}
		// The round is complete. A budget stops refinement here, whether a
		// worker or this check found it.
		if !r.claimsStopped() {
			r.budgetReached(ctx)
		}
		r.mu.Lock()
		budget := r.budget
		r.mu.Unlock()
		if budget != "" {
			if err := r.stopBudget(ctx, budget); err != nil {
				return err
			}
			r.setRefineDone()
			return nil
		}
		if r.claimsStopped() {
			return nil
		}
		next, err := r.advance(ctx, rf)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil:
			r.stopFatal(fmt.Errorf("round transition: %w", err))
			return nil
		case !next:
			r.setRefineDone()
			return nil
		}
	}
}

// advance closes the campaign's current round: it stops the campaign
// (false) or queues the next round (true).
func (r *runner) advance(ctx context.Context, rf *Refine) (bool, error) {
	c, err := r.e.Store.Campaign(ctx, r.c.ID)
	if err != nil {
		return false, err
	}
	round := c.Round
	stored, final, err := r.storedRound(ctx, c.ID, round)
	if err != nil {
		return false, err
	}
	if final {
		r.setDoneNote(stored.Stop)
		return false, nil
	}
	results, prev, tasks, err := r.roundInputs(ctx, c.ID, round)
	if err != nil {
		return false, err
	}
	d, err := rf.Decide(c.Lane, round, results, prev, tasks)
	if err != nil {
		return false, err
	}
	if d.Stop != "" {
		r.log.Info("refinement stops", "round", round, "why", d.Stop)
		r.setDoneNote(d.Stop)
		return false, r.closeRound(ctx, round, RoundRecord{Round: round, Stop: d.Stop, DecidedAt: time.Now().UTC()}, nil)
	}
	for _, ch := range d.Choices {
		r.log.Info("refinement target", "round", round, "category", ch.Category, "why", ch.Reason)
	}
	rec := RoundRecord{Round: round, NextRound: round + 1, Choices: d.Choices, Weights: d.Weights, Factor: rf.Factor,
		DecidedAt: time.Now().UTC()}
	// Synthesis: one call per targeted category, each reply made durable
	// before the next call.
	if err := r.synthesiseRequests(ctx, rf, c.ID, round, d.Requests, stored, &rec); err != nil {
		return false, err
	}
	r.note(ctx, fmt.Sprintf("round %d: validating synthesised tasks", round+1))
	carried, err := r.screenCarried(ctx, rf, c.ID, c.Lane, round, tasks, &rec)
	if err != nil {
		return false, err
	}
	synthTasks, err := r.screen(ctx, rf, c.Lane, round+1, rec.Synth, append(tasks, carried...))
	if err != nil {
		return false, err
	}
	synthTasks = append(carried, synthTasks...)
	drawn, err := rf.Draw(round+1, d.Weights)
	if err != nil {
		return false, fmt.Errorf("draw round %d: %w", round+1, err)
	}
	return r.queueNextRound(ctx, c, rec, drawn, synthTasks)
}

// storedRound reads the stored record of a campaign's round. final reports
// that the round is already closed (rec is then its final record);
// otherwise rec is the draft so far, empty when there is none.
func (r *runner) storedRound(ctx context.Context, campaignID string, round int) (rec RoundRecord, final bool, err error) {
	stored, err := r.e.Store.Round(ctx, campaignID, round)
	switch {
	case err == nil:
		if rec, err = DecodeRoundRecord(stored.Record); err != nil {
			return rec, false, err
		}
		return rec, stored.Final, nil
	case errors.Is(err, runs.ErrNotFound):
		return rec, false, nil
	}
	return rec, false, err
}

// roundInputs loads what Decide reads: the round's results, the results of
// the round before (none for round 0) and all the campaign's tasks.
func (r *runner) roundInputs(ctx context.Context, campaignID string, round int) (results, prev []runs.Result, tasks []runs.Task, err error) {
	st := r.e.Store
	if results, err = st.Results(ctx, campaignID, round); err != nil {
		return nil, nil, nil, err
	}
	if round > 0 {
		if prev, err = st.Results(ctx, campaignID, round-1); err != nil {
			return nil, nil, nil, err
		}
	}
	if tasks, err = st.Tasks(ctx, campaignID, -1); err != nil {
		return nil, nil, nil, err
	}
	return results, prev, tasks, nil
}

// synthesiseRequests appends to rec.Synth one synthesis per request: the
// draft's when it already holds the category's reply (or error), else a new
// call, after which rec is saved as the round's draft so the reply is
// durable before the next call.
func (r *runner) synthesiseRequests(ctx context.Context, rf *Refine, campaignID string, round int, requests []SynthPlan, draft RoundRecord, rec *RoundRecord) error {
	done := map[string]SynthRecord{}
	for _, s := range draft.Synth {
		if s.ReplyBlob != "" || s.Error != "" {
			done[s.Category] = s
		}
	}
	for _, req := range requests {
		if s, ok := done[req.Category]; ok {
			r.log.Info("resynthesis reply reused from the draft", "round", round, "category", req.Category)
			rec.Synth = append(rec.Synth, s)
			continue
		}
		r.note(ctx, fmt.Sprintf("round %d: synthesising %d %s tasks", round+1, req.K, req.Category))
		s, err := r.synthesise(ctx, rf, req)
		if err != nil {
			return fmt.Errorf("synthesise %s: %w", req.Category, err)
		}
		rec.Synth = append(rec.Synth, s)
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if err := r.e.Store.SaveRoundDraft(ctx, campaignID, round, b); err != nil {
			return err
		}
	}
	return nil
}

// queueNextRound completes rec with the next round's counts and closes
// campaign c's current round: with the drawn corpus tasks and the accepted
// synthesised ones queued as the next round (true), or, when there are
// none, as where the campaign stops (false).
func (r *runner) queueNextRound(ctx context.Context, c runs.Campaign, rec RoundRecord, drawn, synthTasks []runs.Task) (bool, error) {
	round := c.Round
	rec.Drawn = map[string]int{}
	for _, t := range drawn {
		for _, cat := range t.Categories {
			rec.Drawn[cat]++
		}
	}
	rec.DrawnTasks, rec.SynthTasks = len(drawn), len(synthTasks)
	next := append(drawn, synthTasks...)
	rec.Tasks = len(next)
	if len(next) == 0 {
		rec.NextRound = 0
		rec.Stop = fmt.Sprintf("round %d would have no task", round+1)
		r.setDoneNote(rec.Stop)
		return false, r.closeRound(ctx, round, rec, nil)
	}
	for i := range next {
		next[i].CampaignID = c.ID
		if next[i].Lane == "" {
			next[i].Lane = c.Lane
		}
	}
	if err := r.closeRound(ctx, round, rec, next); err != nil {
		return false, err
	}
	r.log.Info("next round queued", "round", round+1, "tasks", len(next), "drawn", len(drawn), "synthesised", len(synthTasks))
	r.note(ctx, fmt.Sprintf("round %d: %d tasks (%d synthesised)", round+1, len(next), len(synthTasks)))
	return true, nil
}

// stopBudget records that a budget stopped refinement after the current
// round (a round already closed keeps its record).
func (r *runner) stopBudget(ctx context.Context, budget string) error {
	c, err := r.e.Store.Campaign(ctx, r.c.ID)
	if err != nil {
		return fmt.Errorf("record budget stop: %w", err)
	}
	rec := RoundRecord{Round: c.Round, Stop: "budget reached: " + budget, DecidedAt: time.Now().UTC()}
	if err := r.closeRound(ctx, c.Round, rec, nil); err != nil {
		return fmt.Errorf("record budget stop: %w", err)
	}
	return nil
}

func (r *runner) closeRound(ctx context.Context, round int, rec RoundRecord, next []runs.Task) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = r.e.Store.CloseRound(ctx, r.c.ID, round, b, next)
	if errors.Is(err, runs.ErrRoundClosed) {
		// Another process closed it first; its decision stands.
		return nil
	}
	return err
}

// setRefineDone records that refinement reached its end (a stop was
// decided); until then a campaign whose tasks are all judged is not done.
func (r *runner) setRefineDone() {
	r.mu.Lock()
	r.refineDone = true
	r.mu.Unlock()
}

func (r *runner) setDoneNote(s string) {
	r.mu.Lock()
	r.doneNote = s
	r.mu.Unlock()
}

// note updates the campaign's note (best effort: it is for status displays).
func (r *runner) note(ctx context.Context, s string) {
	if err := r.e.Store.SetCampaignState(ctx, r.c.ID, runs.CampaignRunning, s); err != nil {
		r.log.Warn("campaign note", "err", err)
	}
}

// synthesise asks the synthesiser for req's tasks and stores the prompt
// and the reply as blobs. A request the endpoint refuses (bad request) is
// recorded as the category's error; other failures are returned.
func (r *runner) synthesise(ctx context.Context, rf *Refine, req SynthPlan) (SynthRecord, error) {
	s := SynthRecord{Category: req.Category, K: req.K, Endpoint: rf.SynthName}
	for _, e := range req.Examples {
		s.Examples = append(s.Examples, e.TaskKey)
	}
	if rf.Synth == nil {
		return s, errors.New("no synthesiser model")
	}
	blobs := r.e.Store.Blobs()
	pb, err := json.Marshal(req.Prompt)
	if err != nil {
		return s, err
	}
	if s.PromptBlob, err = blobs.Put(pb); err != nil {
		return s, fmt.Errorf("store prompt: %w", err)
	}
	resp, err := rf.Synth.Chat(ctx, agent.Request{
		Messages: []agent.Message{{Role: agent.RoleSystem, Content: req.Prompt.System}, {Role: agent.RoleUser, Content: req.Prompt.User}},
		Sampling: rf.SynthSampling,
	})
	if err != nil {
		if ctx.Err() == nil && agent.KindOf(err) == agent.KindBadRequest {
			s.Error = err.Error()
			r.log.Warn("synthesiser refused the request", "category", req.Category, "err", err)
			return s, nil
		}
		return s, err
	}
	if resp.Endpoint != "" {
		s.Endpoint = resp.Endpoint
	}
	s.Model = resp.Model
	u := resp.Usage
	s.PromptTokens, s.CompletionTokens, s.ReasoningTokens, s.LatencyMS = u.PromptTokens, u.CompletionTokens, u.ReasoningTokens, u.Latency.Milliseconds()
	if s.ReplyBlob, err = blobs.Put([]byte(resp.Message.Content)); err != nil {
		return s, fmt.Errorf("store reply: %w", err)
	}
	return s, nil
}

// screen parses the stored replies, drops duplicates and invalid
// candidates (recording why in synth), and returns the tasks of the
// accepted ones for round next.
func (r *runner) screen(ctx context.Context, rf *Refine, lane string, next int, synth []SynthRecord, tasks []runs.Task) ([]runs.Task, error) {
	where := map[string]int{}
	var cands []refinement.Candidate
	for i := range synth {
		s := &synth[i]
		s.Accepted, s.Rejected, s.Pending = nil, nil, nil
		where[s.Category] = i
		if s.ReplyBlob == "" {
			continue
		}
		reply, err := r.e.Store.Blobs().Get(s.ReplyBlob)
		if err != nil {
			return nil, fmt.Errorf("read synthesiser reply: %w", err)
		}
		cs, errs := rf.Lanes.ParseSynthesized(lane, string(reply))
		for _, e := range errs {
			rej := SynthReject{Stage: RejectParse, Reason: e.Error()}
			var be *refinement.BlockError
			if errors.As(e, &be) {
				rej.Index, rej.Reason = be.Index, be.Reason
			}
			s.Rejected = append(s.Rejected, rej)
		}
		for _, c := range cs {
			c.Category = s.Category // the targeted category is authoritative
			cands = append(cands, c)
		}
	}
	existing := append(append([]runs.Task(nil), rf.Corpus...), tasks...)
	accepted, rejected, err := refinement.Screen(ctx, cands, refinement.ScreenOptions{
		Existing: existing, Validator: rf.Validator, Parallel: rf.ValidateParallel, Lanes: rf.Lanes})
	if err != nil {
		return nil, err
	}
	for _, rj := range rejected {
		if errors.Is(rj.Err, ErrValidatorBroken) {
			return nil, rj.Err
		}
		s := &synth[where[rj.Candidate.Category]]
		if errors.Is(rj.Err, refinement.ErrPending) {
			s.Pending = append(s.Pending, SynthReject{Index: rj.Candidate.Index, Function: rj.Candidate.Function,
				Stage: RejectPending, Reason: oneLine(rj.Err.Error(), 600)})
			continue
		}
		stage := RejectInvalid
		if errors.Is(rj.Err, refinement.ErrDuplicate) {
			stage = RejectDuplicate
		}
		s.Rejected = append(s.Rejected, SynthReject{Index: rj.Candidate.Index, Function: rj.Candidate.Function,
			Stage: stage, Reason: oneLine(rj.Err.Error(), 600)})
	}
	var out []runs.Task
	for _, c := range accepted {
		ts, err := rf.FromCandidate(next, c)
		if err != nil {
			return nil, fmt.Errorf("tasks of synthesised %s %d: %w", c.Category, c.Index, err)
		}
		st := SynthTask{Index: c.Index, Function: c.Function, Description: c.Description, Hash: c.Hash}
		for _, t := range ts {
			st.Keys = append(st.Keys, t.Key)
		}
		s := &synth[where[c.Category]]
		s.Accepted = append(s.Accepted, st)
		out = append(out, ts...)
	}
	for i := range synth {
		sort.Slice(synth[i].Rejected, func(a, b int) bool { return synth[i].Rejected[a].Index < synth[i].Rejected[b].Index })
	}
	return out, nil
}

// screenCarried screens again the candidates round-1's record left
// pending, recording each outcome in rec.Carried, and returns the tasks of
// the accepted ones for round+1 (none for round 0).
func (r *runner) screenCarried(ctx context.Context, rf *Refine, campaignID, lane string, round int, tasks []runs.Task,
	rec *RoundRecord) ([]runs.Task, error) {
	rec.Carried = nil
	if round == 0 {
		return nil, nil
	}
	prev, _, err := r.storedRound(ctx, campaignID, round-1)
	if err != nil {
		return nil, err
	}
	for _, s := range prev.Synth {
		for _, p := range s.Pending {
			rec.Carried = append(rec.Carried, CarriedCandidate{FromRound: round - 1, Category: s.Category, ReplyBlob: s.ReplyBlob,
				Index: p.Index, Function: p.Function})
		}
	}
	for _, cc := range prev.Carried {
		if cc.Stage == RejectPending {
			rec.Carried = append(rec.Carried, CarriedCandidate{FromRound: cc.FromRound, Category: cc.Category,
				ReplyBlob: cc.ReplyBlob, Index: cc.Index, Function: cc.Function})
		}
	}
	if len(rec.Carried) == 0 {
		return nil, nil
	}
	cands, err := r.carriedCandidates(rf, lane, rec.Carried)
	if err != nil {
		return nil, err
	}
	existing := append(append([]runs.Task(nil), rf.Corpus...), tasks...)
	accepted, rejected, err := refinement.Screen(ctx, cands, refinement.ScreenOptions{
		Existing: existing, Validator: rf.Validator, Parallel: rf.ValidateParallel, Lanes: rf.Lanes})
	if err != nil {
		return nil, err
	}
	for _, rj := range rejected {
		cc := &rec.Carried[rj.Candidate.Index]
		switch {
		case errors.Is(rj.Err, ErrValidatorBroken):
			return nil, rj.Err
		case errors.Is(rj.Err, refinement.ErrPending):
			cc.Stage = RejectPending
		case errors.Is(rj.Err, refinement.ErrDuplicate):
			cc.Stage = RejectDuplicate
		default:
			cc.Stage = RejectInvalid
		}
		cc.Reason = oneLine(rj.Err.Error(), 600)
	}
	var out []runs.Task
	for _, c := range accepted {
		cc := &rec.Carried[c.Index]
		c.Index = cc.Index
		ts, err := rf.FromCandidate(round+1, c)
		if err != nil {
			return nil, fmt.Errorf("tasks of carried %s %d: %w", c.Category, c.Index, err)
		}
		cc.Stage = CarryAccepted
		for _, t := range ts {
			cc.Keys = append(cc.Keys, t.Key)
		}
		out = append(out, ts...)
	}
	return out, nil
}

// carriedCandidates parses the carried candidates out of their replies;
// each candidate's Index is its position in carried (Screen reports by
// candidate). A block that no longer parses is an error: the lane changed
// under a stored reply.
func (r *runner) carriedCandidates(rf *Refine, lane string, carried []CarriedCandidate) ([]refinement.Candidate, error) {
	replies := map[string][]refinement.Candidate{}
	var out []refinement.Candidate
	for i, cc := range carried {
		cs, ok := replies[cc.ReplyBlob]
		if !ok {
			reply, err := r.e.Store.Blobs().Get(cc.ReplyBlob)
			if err != nil {
				return nil, fmt.Errorf("read synthesiser reply: %w", err)
			}
			cs, _ = rf.Lanes.ParseSynthesized(lane, string(reply))
			replies[cc.ReplyBlob] = cs
		}
		found := false
		for _, c := range cs {
			if c.Index == cc.Index {
				c.Category, c.Index, found = cc.Category, i, true
				out = append(out, c)
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("carried candidate %d of round %d (%s): its block no longer parses", cc.Index, cc.FromRound, cc.Category)
		}
	}
	return out, nil
}

// oneLine flattens s to one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

package refinement

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
)

// Validator checks that a candidate is a usable task (for c2x86: both
// files compile, the reference program runs and is deterministic). The
// engine supplies one that runs the lane's toolchain in a sandbox. An
// error rejects the candidate; it should say why in a line.
type Validator interface {
	Validate(ctx context.Context, c Candidate) error
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(ctx context.Context, c Candidate) error

// Validate calls f.
func (f ValidatorFunc) Validate(ctx context.Context, c Candidate) error { return f(ctx, c) }

var _ Validator = ValidatorFunc(nil)

// Preparer is a Validator that also completes a candidate with what only
// its tools can give: ptx2cuda compiles the synthesised kernel and adds
// its PTX and resolved harness to the candidate's Files, which the lane's
// task set then turns into tasks without a compiler. Screen calls Prepare
// instead of Validate and accepts the candidate Prepare returns (its Lane,
// Index and Category are kept as they were); the engine passes that
// candidate to the lane's FromCandidate and stores the tasks it makes, so
// a resumed campaign or a rescore never prepares it again. A Preparer's
// Validate must accept exactly what Prepare accepts. Errors are as
// Validate's (ErrValidatorBroken for a check that could not run).
//
// A prepared candidate's identity (Lanes.SourceHash) may depend on what
// Prepare added (ptx2cuda: a task is its PTX), so Screen drops duplicates
// of a Preparer's candidates after preparing them: before, only
// candidates whose every file and prompt are the same are dropped.
type Preparer interface {
	Validator
	Prepare(ctx context.Context, c Candidate) (Candidate, error)
}

// PrepareFunc adapts a function to Preparer (its Validate prepares and
// drops the result).
type PrepareFunc func(ctx context.Context, c Candidate) (Candidate, error)

// Prepare calls f.
func (f PrepareFunc) Prepare(ctx context.Context, c Candidate) (Candidate, error) { return f(ctx, c) }

// Validate calls f and keeps its error only.
func (f PrepareFunc) Validate(ctx context.Context, c Candidate) error {
	_, err := f(ctx, c)
	return err
}

var _ Preparer = PrepareFunc(nil)

// ErrValidatorBroken marks a validation that could not run (sandbox or
// toolchain failure), not a bad candidate: a Validator wraps it, and the
// engine then stops the round's transition instead of rejecting the
// candidate (it is retried when the campaign resumes).
var ErrValidatorBroken = errors.New("validator could not run")

// ErrPending marks a candidate that passed every check this host can
// make while the rest need another host (a GPU): a Validator wraps it, and
// Screen returns the candidate among the rejections with that error, not
// wrapped in ErrInvalid: it is neither accepted nor invalid, it waits, as
// a pending verdict does.
var ErrPending = errors.New("validation pending")

// Sentinel errors of Screen's rejections.
var (
	// ErrDuplicate: the candidate's normalised source equals an existing
	// task's or an earlier candidate's.
	ErrDuplicate = errors.New("refinement: duplicate task")
	// ErrInvalid: the validator rejected the candidate.
	ErrInvalid = errors.New("refinement: candidate failed validation")
)

// Rejection is a candidate Screen turned down, and why.
type Rejection struct {
	Candidate Candidate
	Err       error
}

// ScreenOptions tune Screen.
type ScreenOptions struct {
	// Existing tasks: candidates duplicating one of them are dropped.
	Existing []runs.Task
	// Validator checks the candidates that are not duplicates; nil skips
	// validation.
	Validator Validator
	// Parallel bounds concurrent validations (default 1).
	Parallel int
	// Lanes says what identifies a task (Lanes.SourceHash); nil: every
	// file and the prompt.
	Lanes *Lanes
}

// Screen drops duplicates (by Lanes.SourceHash, against opt.Existing and earlier
// candidates, in order; near ones too for a lane with Identity.Near) and validates the rest with at most opt.Parallel
// validations at a time. Accepted candidates keep their input order. When
// ctx ends, candidates not yet validated are rejected with ctx's error and
// Screen returns it too; accepted ones are still returned.
//
// A candidate whose validation is pending (ErrPending) is among the
// rejections with its error as the validator gave it.
//
// When opt.Validator is a Preparer, the accepted candidates are the
// prepared ones, with Hash recomputed from their prepared files, and the
// duplicates by that hash are dropped after preparation (see Preparer).
func Screen(ctx context.Context, cands []Candidate, opt ScreenOptions) (accepted []Candidate, rejected []Rejection, err error) {
	lanes := opt.Lanes.orGeneric()
	seen := existingHashes(lanes, opt.Existing) // hash -> what it is
	near, err := newNearIndex(lanes, opt.Existing)
	if err != nil {
		return nil, nil, err
	}
	prep, preparing := opt.Validator.(Preparer)
	var fresh []Candidate
	sameFiles := map[string]int{} // every file and the prompt -> candidate (preparers)
	for _, c := range cands {
		if c.Hash == "" {
			c.Hash = lanes.SourceHash(c.Lane, c.Files, c.Prompt)
		}
		if preparing {
			// The identity is known once prepared; identical candidates
			// are duplicates whatever it is.
			all := Generic().SourceHash(c.Lane, c.Files, c.Prompt)
			if i, dup := sameFiles[all]; dup {
				rejected = append(rejected, Rejection{c, fmt.Errorf("%w: same source as candidate %d", ErrDuplicate, i)})
				continue
			}
			sameFiles[all] = c.Index
			fresh = append(fresh, c)
			continue
		}
		if what := duplicateOf(seen, near, c); what != "" {
			rejected = append(rejected, Rejection{c, fmt.Errorf("%w: %s", ErrDuplicate, what)})
			continue
		}
		seen[c.Hash] = fmt.Sprintf("candidate %d", c.Index)
		fresh = append(fresh, c)
	}
	if opt.Validator == nil {
		return fresh, rejected, nil
	}
	par := max(opt.Parallel, 1)
	errs := make([]error, len(fresh))
	prepared := make([]Candidate, len(fresh))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range fresh {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if !preparing {
				errs[i] = opt.Validator.Validate(ctx, fresh[i])
				return
			}
			p, err := prep.Prepare(ctx, fresh[i])
			if err == nil {
				p.Lane, p.Index, p.Category = fresh[i].Lane, fresh[i].Index, fresh[i].Category
				p.Hash = lanes.SourceHash(p.Lane, p.Files, p.Prompt)
				prepared[i] = p
			}
			errs[i] = err
		}(i)
	}
	wg.Wait()
	for i, c := range fresh {
		switch e := errs[i]; {
		case e == nil && preparing:
			p := prepared[i]
			if what, dup := seen[p.Hash]; dup {
				rejected = append(rejected, Rejection{p, fmt.Errorf("%w: same normalised source as %s", ErrDuplicate, what)})
				continue
			}
			seen[p.Hash] = fmt.Sprintf("candidate %d", p.Index)
			accepted = append(accepted, p)
		case e == nil:
			accepted = append(accepted, c)
		case errors.Is(e, context.Canceled) || errors.Is(e, context.DeadlineExceeded) || errors.Is(e, ErrPending):
			rejected = append(rejected, Rejection{c, e})
		default:
			rejected = append(rejected, Rejection{c, fmt.Errorf("%w: %w", ErrInvalid, e)})
		}
	}
	return accepted, rejected, ctx.Err()
}

// existingHashes maps the identity hash of every existing task to what
// it is ("existing task KEY", the first one).
func existingHashes(lanes *Lanes, existing []runs.Task) map[string]string {
	seen := map[string]string{}
	for _, t := range existing {
		h := lanes.TaskHash(t)
		if _, ok := seen[h]; !ok {
			seen[h] = "existing task " + t.Key
		}
	}
	return seen
}

// duplicateOf says what c duplicates, exactly (seen) or nearly (near,
// which then keeps c for the candidates after it); "" when nothing.
func duplicateOf(seen map[string]string, near *nearIndex, c Candidate) string {
	if what, dup := seen[c.Hash]; dup {
		return "same normalised source as " + what
	}
	return near.offer(c)
}

// nearIndex finds near duplicates (Identity.Near) among the existing
// tasks and the candidates offered, per lane.
type nearIndex struct {
	lanes    *Lanes
	existing []runs.Task
	h        *curate.Hasher
	byLane   map[string]*curate.Deduper
}

func newNearIndex(lanes *Lanes, existing []runs.Task) (*nearIndex, error) {
	h, err := curate.NewHasher(curate.DefaultParams())
	if err != nil {
		return nil, fmt.Errorf("refinement: %w", err)
	}
	return &nearIndex{lanes: lanes, existing: existing, h: h, byLane: map[string]*curate.Deduper{}}, nil
}

// offer says what c nearly duplicates ("" when nothing: c is then kept
// for the candidates after it).
func (n *nearIndex) offer(c Candidate) string {
	tokens := n.lanes.NearTokens(c.Lane, c.Files)
	if tokens == nil {
		return ""
	}
	dd, ok := n.byLane[c.Lane]
	if !ok {
		dd, _ = curate.NewDeduper(n.h.Params()) // the default parameters are valid
		signed := map[string]bool{}             // samples of one task are signed once
		for _, t := range n.existing {
			if h := n.lanes.TaskHash(t); t.Lane == c.Lane && !signed[h] {
				signed[h] = true
				dd.Offer(n.h.Doc("existing task "+t.Key, n.lanes.NearTokens(t.Lane, t.Files)))
			}
		}
		n.byLane[c.Lane] = dd
	}
	if dup, sim := dd.Offer(n.h.Doc(fmt.Sprintf("candidate %d", c.Index), tokens)); dup != "" {
		return fmt.Sprintf("near duplicate (estimated similarity %.2f) of %s", sim, dup)
	}
	return ""
}

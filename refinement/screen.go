package refinement

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kiln-dev/kiln/runs"
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

// ErrValidatorBroken marks a validation that could not run (sandbox or
// toolchain failure), not a bad candidate: a Validator wraps it, and the
// engine then stops the round's transition instead of rejecting the
// candidate (it is retried when the campaign resumes).
var ErrValidatorBroken = errors.New("validator could not run")

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
// candidates, in order) and validates the rest with at most opt.Parallel
// validations at a time. Accepted candidates keep their input order. When
// ctx ends, candidates not yet validated are rejected with ctx's error and
// Screen returns it too; accepted ones are still returned.
func Screen(ctx context.Context, cands []Candidate, opt ScreenOptions) (accepted []Candidate, rejected []Rejection, err error) {
	seen := map[string]string{} // hash -> what it is
	for _, t := range opt.Existing {
		h := opt.Lanes.orGeneric().TaskHash(t)
		if _, ok := seen[h]; !ok {
			seen[h] = "existing task " + t.Key
		}
	}
	var fresh []Candidate
	for _, c := range cands {
		if c.Hash == "" {
			c.Hash = opt.Lanes.orGeneric().SourceHash(c.Lane, c.Files, c.Prompt)
		}
		if what, dup := seen[c.Hash]; dup {
			rejected = append(rejected, Rejection{c, fmt.Errorf("%w: same normalised source as %s", ErrDuplicate, what)})
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
			errs[i] = opt.Validator.Validate(ctx, fresh[i])
		}(i)
	}
	wg.Wait()
	for i, c := range fresh {
		switch e := errs[i]; {
		case e == nil:
			accepted = append(accepted, c)
		case errors.Is(e, context.Canceled) || errors.Is(e, context.DeadlineExceeded):
			rejected = append(rejected, Rejection{c, e})
		default:
			rejected = append(rejected, Rejection{c, fmt.Errorf("%w: %w", ErrInvalid, e)})
		}
	}
	return accepted, rejected, ctx.Err()
}

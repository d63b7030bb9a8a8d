package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how patiently a failed model call is tried
// again. Zero fields take the defaults of DefaultRetryPolicy.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries, the first included.
	MaxAttempts int `json:"max_attempts" yaml:"max_attempts"`
	// BaseDelay is the backoff before the first retry; it doubles per retry.
	BaseDelay time.Duration `json:"base_delay" yaml:"base_delay"`
	// MaxDelay caps the computed backoff. A server's Retry-After
	// (Error.RetryIn) longer than the backoff is honoured even above it.
	MaxDelay time.Duration `json:"max_delay" yaml:"max_delay"`

	// Sleep waits d or until ctx ends, returning ctx's error then. Nil uses
	// a timer; tests inject a fake.
	Sleep func(ctx context.Context, d time.Duration) error `json:"-" yaml:"-"`
	// Rand returns a number in [0, 1) for jitter. Nil uses math/rand/v2.
	Rand func() float64 `json:"-" yaml:"-"`
}

// DefaultRetryPolicy is 4 tries with backoff from 1 s, capped at 30 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second}
}

// Validate reports a policy that cannot be used as given.
func (p RetryPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 0:
		return fmt.Errorf("retry policy: max_attempts %d is negative", p.MaxAttempts)
	case p.BaseDelay < 0 || p.MaxDelay < 0:
		return errors.New("retry policy: negative delay")
	case p.MaxDelay > 0 && p.BaseDelay > p.MaxDelay:
		return fmt.Errorf("retry policy: base_delay %v above max_delay %v", p.BaseDelay, p.MaxDelay)
	}
	return nil
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = max(d.MaxDelay, p.BaseDelay)
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Backoff returns the wait before retry number n (1 for the first retry):
// "equal jitter" over min(MaxDelay, BaseDelay * 2^(n-1)), that is a uniform
// pick between half of that and all of it.
func (p RetryPolicy) Backoff(n int) time.Duration {
	p = p.withDefaults()
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	return half + time.Duration(p.Rand()*float64(d-half))
}

// RetryError is what Retry returns when a call failed for good. It unwraps to
// the last call's error (so KindOf and Retryable still see its *Error) and,
// when the caller's context ended, to that context's error as well.
type RetryError struct {
	Attempts int   // tries made
	Err      error // the last try's error
	Ctx      error // ctx.Err() when the caller's context ended, else nil
}

func (e *RetryError) Error() string {
	s := e.Err.Error()
	if e.Attempts > 1 {
		s = fmt.Sprintf("%d attempts: %s", e.Attempts, s)
	}
	if e.Ctx != nil && !errors.Is(e.Err, e.Ctx) {
		s += " (" + e.Ctx.Error() + ")"
	}
	return s
}

func (e *RetryError) Unwrap() []error {
	if e.Ctx != nil {
		return []error{e.Err, e.Ctx}
	}
	return []error{e.Err}
}

// Retry wraps m so that calls failing with a Retryable error are tried again
// with jittered exponential backoff, up to p.MaxAttempts tries in all. A
// server's Retry-After (Error.RetryIn) stretches the wait when it is longer.
//
// Retry never retries once the caller's context has ended, nor an error that
// is context.Canceled. A context.DeadlineExceeded while the caller's context
// is still live is an adapter's own per-call timeout and is retried only if
// the adapter classified it as retryable. The successful Response records the
// number of tries in Response.Attempts; a final failure is a *RetryError.
// Every failed try is reported to the context's fault observer (see
// WithFaultObserver).
// name labels log lines; log may be nil.
func Retry(m Model, p RetryPolicy, name string, log *slog.Logger) Model {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &retryModel{inner: m, p: p.withDefaults(), name: name, log: log}
}

type retryModel struct {
	inner Model
	p     RetryPolicy
	name  string
	log   *slog.Logger
}

var _ Model = (*retryModel)(nil)

func (r *retryModel) Chat(ctx context.Context, req Request) (*Response, error) {
	for n := 1; ; n++ {
		resp, err := r.inner.Chat(ctx, req)
		if err == nil {
			if resp != nil {
				resp.Attempts = n
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, &RetryError{Attempts: n, Err: err, Ctx: ctx.Err()}
		}
		observeFault(ctx, err)
		if errors.Is(err, context.Canceled) || !Retryable(err) || n >= r.p.MaxAttempts {
			return nil, &RetryError{Attempts: n, Err: err}
		}
		wait := r.p.Backoff(n)
		var e *Error
		if errors.As(err, &e) && e.RetryIn > wait {
			wait = e.RetryIn
		}
		r.log.Warn("model call failed, retrying", "endpoint", r.name, "attempt", n,
			"kind", string(KindOf(err)), "wait", wait, "err", err)
		if serr := r.p.Sleep(ctx, wait); serr != nil {
			return nil, &RetryError{Attempts: n, Err: err, Ctx: serr}
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

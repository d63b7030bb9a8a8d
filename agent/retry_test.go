package agent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-dev/kiln/agent"
)

// sleepRecorder is a RetryPolicy.Sleep that records waits without waiting.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func TestRetry(t *testing.T) {
	t.Parallel()
	policy := agent.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: 8 * time.Second,
		Rand: func() float64 { return 0 }} // waits are exactly half the backoff
	tests := []struct {
		name      string
		errs      []error // errors of the first calls; then success
		wantCalls int
		wantKind  agent.ErrorKind // "" means success
		wantTries int             // Response.Attempts or RetryError.Attempts
		wantWaits []time.Duration
	}{
		{name: "ok at once", wantCalls: 1, wantTries: 1},
		{
			name:      "429 then ok, Retry-After honoured",
			errs:      []error{&agent.Error{Kind: agent.KindRetryable, Status: 429, RetryIn: 5 * time.Second}},
			wantCalls: 2, wantTries: 2, wantWaits: []time.Duration{5 * time.Second},
		},
		{
			name:      "short Retry-After does not shorten the backoff",
			errs:      []error{&agent.Error{Kind: agent.KindRetryable, Status: 429, RetryIn: time.Millisecond}},
			wantCalls: 2, wantTries: 2, wantWaits: []time.Duration{500 * time.Millisecond},
		},
		{
			name:      "truncated then ok",
			errs:      []error{modelErr(agent.KindTruncated)},
			wantCalls: 2, wantTries: 2, wantWaits: []time.Duration{500 * time.Millisecond},
		},
		{
			name:      "bad response twice then ok",
			errs:      []error{modelErr(agent.KindBadResponse), modelErr(agent.KindBadResponse)},
			wantCalls: 3, wantTries: 3, wantWaits: []time.Duration{500 * time.Millisecond, time.Second},
		},
		{
			name:      "model not found is not retried",
			errs:      []error{modelErr(agent.KindModelNotFound)},
			wantCalls: 1, wantKind: agent.KindModelNotFound, wantTries: 1,
		},
		{
			name:      "auth is not retried",
			errs:      []error{modelErr(agent.KindAuth)},
			wantCalls: 1, wantKind: agent.KindAuth, wantTries: 1,
		},
		{
			name:      "bad request is not retried",
			errs:      []error{modelErr(agent.KindBadRequest)},
			wantCalls: 1, wantKind: agent.KindBadRequest, wantTries: 1,
		},
		{
			name:      "unclassified error is not retried",
			errs:      []error{errors.New("boom")},
			wantCalls: 1, wantKind: "", wantTries: 1,
		},
		{
			name:      "context.Canceled from the adapter is not retried",
			errs:      []error{&agent.Error{Kind: agent.KindRetryable, Err: context.Canceled}},
			wantCalls: 1, wantKind: agent.KindRetryable, wantTries: 1,
		},
		{
			name:      "adapter's own deadline classified retryable is retried",
			errs:      []error{&agent.Error{Kind: agent.KindRetryable, Err: context.DeadlineExceeded}},
			wantCalls: 2, wantTries: 2, wantWaits: []time.Duration{500 * time.Millisecond},
		},
		{
			name: "gives up after max attempts",
			errs: []error{modelErr(agent.KindRetryable), modelErr(agent.KindRetryable),
				modelErr(agent.KindRetryable), modelErr(agent.KindRetryable)},
			wantCalls: 3, wantKind: agent.KindRetryable, wantTries: 3,
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fm := &fakeModel{chat: func(_ context.Context, _ agent.Request, n int) (*agent.Response, error) {
				if n <= len(tt.errs) {
					return nil, tt.errs[n-1]
				}
				return reply("ok"), nil
			}}
			rec := &sleepRecorder{}
			p := policy
			p.Sleep = rec.sleep
			resp, err := agent.Retry(fm, p, "ep", nil).Chat(context.Background(), agent.Request{})
			if got := int(fm.calls.Load()); got != tt.wantCalls {
				t.Errorf("calls = %d, want %d", got, tt.wantCalls)
			}
			if fmt.Sprint(rec.waits) != fmt.Sprint(tt.wantWaits) {
				t.Errorf("waits = %v, want %v", rec.waits, tt.wantWaits)
			}
			failed := tt.wantKind != "" || tt.wantCalls <= len(tt.errs)
			if !failed {
				if err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				if resp.Attempts != tt.wantTries || resp.Message.Content != "ok" {
					t.Errorf("resp = %+v, want attempts %d", resp, tt.wantTries)
				}
				return
			}
			var re *agent.RetryError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v (%T), want *RetryError", err, err)
			}
			if re.Attempts != tt.wantTries {
				t.Errorf("RetryError.Attempts = %d, want %d", re.Attempts, tt.wantTries)
			}
			if got := agent.KindOf(err); got != tt.wantKind {
				t.Errorf("KindOf = %q, want %q", got, tt.wantKind)
			}
		})
	}
}

func TestRetryContextCancelledDuringBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		fm := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
			return nil, modelErr(agent.KindRetryable)
		}}
		// Real timer sleep (fake time inside the bubble): a one-hour backoff
		// must end as soon as the context is cancelled.
		m := agent.Retry(fm, agent.RetryPolicy{MaxAttempts: 5, BaseDelay: time.Hour, MaxDelay: time.Hour}, "ep", nil)
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := m.Chat(ctx, agent.Request{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if agent.KindOf(err) != agent.KindRetryable {
			t.Errorf("KindOf = %q, want the last call's kind", agent.KindOf(err))
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %v, want 1s (the cancel)", d)
		}
		if fm.calls.Load() != 1 {
			t.Errorf("calls = %d, want 1", fm.calls.Load())
		}
	})
}

func TestRetryNeverRetriesAfterCallerContextEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	fm := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		cancel() // the caller gives up while the call is in flight
		return nil, modelErr(agent.KindRetryable)
	}}
	rec := &sleepRecorder{}
	_, err := agent.Retry(fm, agent.RetryPolicy{MaxAttempts: 5, Sleep: rec.sleep}, "ep", nil).Chat(ctx, agent.Request{})
	if !errors.Is(err, context.Canceled) || fm.calls.Load() != 1 || len(rec.waits) != 0 {
		t.Errorf("err = %v, calls = %d, waits = %v; want context.Canceled after 1 call, no wait",
			err, fm.calls.Load(), rec.waits)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		rand     float64
		n        int
		min, max time.Duration
	}{
		{"first retry, low jitter", 0, 1, 50 * time.Millisecond, 50 * time.Millisecond},
		{"first retry, high jitter", 0.999, 1, 99 * time.Millisecond, 100 * time.Millisecond},
		{"third retry doubles twice", 0, 3, 200 * time.Millisecond, 200 * time.Millisecond},
		{"capped at max", 0.999, 10, 990 * time.Millisecond, time.Second},
		{"huge n does not overflow", 0, 1000, 500 * time.Millisecond, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := agent.RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second,
				Rand: func() float64 { return tt.rand }}
			if d := p.Backoff(tt.n); d < tt.min || d > tt.max {
				t.Errorf("Backoff(%d) = %v, want in [%v, %v]", tt.n, d, tt.min, tt.max)
			}
		})
	}
}

func TestRetryPolicyValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p  agent.RetryPolicy
		ok bool
	}{
		{agent.DefaultRetryPolicy(), true},
		{agent.RetryPolicy{}, true},
		{agent.RetryPolicy{MaxAttempts: -1}, false},
		{agent.RetryPolicy{BaseDelay: time.Minute, MaxDelay: time.Second}, false},
		{agent.RetryPolicy{BaseDelay: -time.Second}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.p, err, tt.ok)
		}
	}
}

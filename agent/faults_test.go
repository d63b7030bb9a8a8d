package agent_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent"
)

func TestFaultClass(t *testing.T) {
	t.Parallel()
	e := func(kind agent.ErrorKind, status int, err error) error {
		return &agent.Error{Kind: kind, Status: status, Err: err}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"429", e(agent.KindRetryable, 429, nil), agent.FaultRateLimited},
		{"502 wrapped by Retry", &agent.RetryError{Attempts: 3, Err: e(agent.KindRetryable, 502, nil)}, agent.FaultServerError},
		{"per-call timeout", e(agent.KindRetryable, 0, fmt.Errorf("%w after 1s: read: %w", agent.ErrCallTimeout, errors.New("x"))), agent.FaultTimeout},
		{"deadline from the transport", e(agent.KindRetryable, 0, fmt.Errorf("post: %w", context.DeadlineExceeded)), agent.FaultTimeout},
		{"408", e(agent.KindRetryable, 408, nil), agent.FaultTimeout},
		{"error event in a 200 stream", e(agent.KindRetryable, 200, nil), agent.FaultStreamError},
		{"connection refused", e(agent.KindRetryable, 0, errors.New("connect: connection refused")), agent.FaultConnection},
		{"truncated", e(agent.KindTruncated, 200, nil), agent.FaultTruncated},
		{"bad response", e(agent.KindBadResponse, 200, nil), agent.FaultBadResponse},
		{"model not found", e(agent.KindModelNotFound, 404, nil), "model_not_found"},
		{"not an agent error", errors.New("boom"), agent.FaultOther},
	}
	for _, tt := range tests {
		if got := agent.FaultClass(tt.err); got != tt.want {
			t.Errorf("%s: FaultClass = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRetryReportsFaults: every failed try, the recovered ones too, reaches
// the context's observer; a call that succeeds at once reports nothing.
func TestRetryReportsFaults(t *testing.T) {
	t.Parallel()
	fails := []error{
		&agent.Error{Kind: agent.KindRetryable, Status: 429},
		&agent.Error{Kind: agent.KindTruncated, Status: 200},
	}
	m := &fakeModel{chat: func(_ context.Context, _ agent.Request, n int) (*agent.Response, error) {
		if n <= len(fails) {
			return nil, fails[n-1]
		}
		return reply("ok"), nil
	}}
	r := agent.Retry(m, agent.RetryPolicy{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}, "fake", nil)
	var (
		mu  sync.Mutex
		got []string
	)
	ctx := agent.WithFaultObserver(context.Background(), func(err error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, agent.FaultClass(err))
	})
	resp, err := r.Chat(ctx, agent.Request{})
	if err != nil || resp.Attempts != 3 {
		t.Fatalf("Chat: %v, %+v", err, resp)
	}
	if want := []string{agent.FaultRateLimited, agent.FaultTruncated}; !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
	got = nil
	if _, err := r.Chat(ctx, agent.Request{}); err != nil || len(got) != 0 {
		t.Errorf("a clean call: err %v, observed %v", err, got)
	}
	// A try cut short by the caller's context is no fault of the server.
	cctx, cancel := context.WithCancel(ctx)
	stop := &fakeModel{chat: func(ctx context.Context, _ agent.Request, _ int) (*agent.Response, error) {
		cancel()
		return nil, fmt.Errorf("fake: %w", ctx.Err())
	}}
	if _, err := agent.Retry(stop, agent.RetryPolicy{}, "fake", nil).Chat(cctx, agent.Request{}); err == nil || len(got) != 0 {
		t.Errorf("cancelled call: err %v, observed %v", err, got)
	}
}

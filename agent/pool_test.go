package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kiln-dev/kiln/agent"
)

// gauge tracks calls in flight and their peak.
type gauge struct {
	mu        sync.Mutex
	cur, peak int
}

func (g *gauge) enter() {
	g.mu.Lock()
	g.cur++
	g.peak = max(g.peak, g.cur)
	g.mu.Unlock()
}

func (g *gauge) leave() {
	g.mu.Lock()
	g.cur--
	g.mu.Unlock()
}

// slowModel takes d (fake time inside a synctest bubble) per call.
func slowModel(g *gauge, d time.Duration) *fakeModel {
	return &fakeModel{chat: func(ctx context.Context, _ agent.Request, _ int) (*agent.Response, error) {
		g.enter()
		defer g.leave()
		select {
		case <-time.After(d):
			return reply("ok"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

// TestPoolConcurrencyLimit runs in a synctest bubble: time is fake, and the
// bubble fails the test if any goroutine is left blocked (a leak check).
func TestPoolConcurrencyLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var ga, gb gauge
		a, b := slowModel(&ga, time.Second), slowModel(&gb, time.Second)
		p, err := agent.NewPool([]agent.Endpoint{
			{Name: "a", Model: a, Concurrency: 2},
			{Name: "b", Model: b, Concurrency: 3},
		}, agent.PoolConfig{})
		if err != nil {
			t.Fatal(err)
		}
		const calls = 25
		var wg sync.WaitGroup
		var mu sync.Mutex
		served := map[string]int{}
		start := time.Now()
		for range calls {
			wg.Go(func() {
				resp, err := p.Chat(context.Background(), agent.Request{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				served[resp.Endpoint]++
				mu.Unlock()
			})
		}
		synctest.Wait()
		if st := p.Status(); st[0].InFlight != 2 || st[1].InFlight != 3 {
			t.Errorf("in flight = %d, %d; want both endpoints full (2, 3)", st[0].InFlight, st[1].InFlight)
		}
		wg.Wait()
		if ga.peak != 2 || gb.peak != 3 {
			t.Errorf("peak in flight a=%d b=%d, want 2 and 3", ga.peak, gb.peak)
		}
		if served["a"]+served["b"] != calls {
			t.Errorf("served %v, want %d in all", served, calls)
		}
		// 25 calls through 5 slots of 1 s each: 5 s, not more.
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("took %v, want 5s", d)
		}
		for _, s := range p.Status() {
			if s.InFlight != 0 || !s.Healthy {
				t.Errorf("after the run: %+v", s)
			}
		}
	})
}

func TestPoolPrefersFirstEndpoint(t *testing.T) {
	t.Parallel()
	a := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) { return reply("a"), nil }}
	b := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) { return reply("b"), nil }}
	p, err := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a, Concurrency: 4}, {Name: "b", Model: b}}, agent.PoolConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		resp, err := p.Chat(context.Background(), agent.Request{})
		if err != nil || resp.Endpoint != "a" {
			t.Fatalf("resp %+v, err %v; want served by a", resp, err)
		}
	}
	if b.calls.Load() != 0 {
		t.Errorf("b got %d calls while a had capacity", b.calls.Load())
	}
}

func TestPoolFailover(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }

	var aDown sync.Mutex
	down := true
	a := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		aDown.Lock()
		defer aDown.Unlock()
		if down {
			return nil, &agent.Error{Kind: agent.KindRetryable, Endpoint: "a", Status: 503}
		}
		return reply("a"), nil
	}}
	b := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) { return reply("b"), nil }}
	p, err := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a}, {Name: "b", Model: b}},
		agent.PoolConfig{FailThreshold: 2, CoolDown: time.Minute, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	chat := func() string {
		t.Helper()
		resp, err := p.Chat(context.Background(), agent.Request{})
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		return resp.Endpoint
	}
	// a fails, b serves; after 2 failures a is passed over.
	for i := range 4 {
		if ep := chat(); ep != "b" {
			t.Fatalf("call %d served by %s, want b", i, ep)
		}
	}
	if got := a.calls.Load(); got != 2 {
		t.Errorf("a called %d times, want 2 (then cooling down)", got)
	}
	if st := p.Status()[0]; st.Healthy || st.ConsecutiveFailures != 2 || st.Failed != 2 {
		t.Errorf("a status %+v, want unhealthy after 2 failures", st)
	}
	// After the cool-down a (now recovered) is tried first again.
	aDown.Lock()
	down = false
	aDown.Unlock()
	advance(61 * time.Second)
	if ep := chat(); ep != "a" {
		t.Errorf("after cool-down served by %s, want a", ep)
	}
	if st := p.Status()[0]; !st.Healthy || st.ConsecutiveFailures != 0 || st.Served != 1 {
		t.Errorf("a status %+v, want healthy again", st)
	}
}

func TestPoolMarksModelNotFoundDownAtOnce(t *testing.T) {
	t.Parallel()
	a := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return nil, modelErr(agent.KindModelNotFound)
	}}
	b := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) { return reply("b"), nil }}
	p, err := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a}, {Name: "b", Model: b}}, agent.PoolConfig{FailThreshold: 5})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if resp, err := p.Chat(context.Background(), agent.Request{}); err != nil || resp.Endpoint != "b" {
			t.Fatalf("resp %+v err %v, want b", resp, err)
		}
	}
	if a.calls.Load() != 1 {
		t.Errorf("a called %d times, want 1", a.calls.Load())
	}
}

func TestPoolBadRequestFailsOverWithoutHurtingHealth(t *testing.T) {
	t.Parallel()
	a := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return nil, modelErr(agent.KindBadRequest)
	}}
	b := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) { return reply("b"), nil }}
	p, _ := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a}, {Name: "b", Model: b}}, agent.PoolConfig{FailThreshold: 1})
	for range 3 {
		if resp, err := p.Chat(context.Background(), agent.Request{}); err != nil || resp.Endpoint != "b" {
			t.Fatalf("resp %+v err %v, want b", resp, err)
		}
	}
	if st := p.Status()[0]; !st.Healthy || a.calls.Load() != 3 {
		t.Errorf("a: %+v after %d calls, want healthy and tried every time", st, a.calls.Load())
	}
}

func TestPoolAllDown(t *testing.T) {
	t.Parallel()
	a := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return nil, modelErr(agent.KindRetryable)
	}}
	b := &fakeModel{chat: func(context.Context, agent.Request, int) (*agent.Response, error) {
		return nil, modelErr(agent.KindAuth)
	}}
	p, _ := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a}, {Name: "b", Model: b}}, agent.PoolConfig{FailThreshold: 1})
	for i := range 3 {
		_, err := p.Chat(context.Background(), agent.Request{})
		if err == nil || !strings.Contains(err.Error(), "all 2 endpoints failed") {
			t.Fatalf("call %d: err = %v, want all endpoints failed", i, err)
		}
		if agent.KindOf(err) != agent.KindAuth {
			t.Errorf("KindOf = %q, want the last error's kind (auth)", agent.KindOf(err))
		}
	}
	// Both unhealthy, yet still tried as a last resort on every call.
	if a.calls.Load() != 3 || b.calls.Load() != 3 {
		t.Errorf("calls a=%d b=%d, want 3 each", a.calls.Load(), b.calls.Load())
	}
}

func TestPoolContextEndsWhileWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := &fakeModel{chat: func(ctx context.Context, _ agent.Request, _ int) (*agent.Response, error) {
			select {
			case <-release:
				return reply("a"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
		p, _ := agent.NewPool([]agent.Endpoint{{Name: "a", Model: a, Concurrency: 1}}, agent.PoolConfig{})
		done := make(chan error, 1)
		go func() {
			_, err := p.Chat(context.Background(), agent.Request{})
			done <- err
		}()
		synctest.Wait() // the first call holds the only slot
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Chat(ctx, agent.Request{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("waiting call: err = %v, want deadline exceeded", err)
		}
		if a.calls.Load() != 1 {
			t.Errorf("calls = %d, want 1 (the waiter never got a slot)", a.calls.Load())
		}
		close(release)
		if err := <-done; err != nil {
			t.Errorf("first call: %v", err)
		}
		if st := p.Status()[0]; st.InFlight != 0 || !st.Healthy || st.Failed != 0 {
			t.Errorf("status %+v, want idle and healthy", st)
		}
	})
}

func TestNewPoolValidates(t *testing.T) {
	t.Parallel()
	m := &fakeModel{}
	tests := []struct {
		name string
		eps  []agent.Endpoint
	}{
		{"none", nil},
		{"no name", []agent.Endpoint{{Model: m}}},
		{"no model", []agent.Endpoint{{Name: "a"}}},
		{"duplicate", []agent.Endpoint{{Name: "a", Model: m}, {Name: "a", Model: m}}},
	}
	for _, tt := range tests {
		if _, err := agent.NewPool(tt.eps, agent.PoolConfig{}); err == nil {
			t.Errorf("%s: NewPool succeeded, want error", tt.name)
		}
	}
}

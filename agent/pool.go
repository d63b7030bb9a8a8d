package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Endpoint is one named model server in a Pool.
type Endpoint struct {
	Name string
	// Model serves the calls; wrap it in Retry first so that the pool fails
	// over only after the endpoint's own retries.
	Model Model
	// Concurrency is the most calls in flight at once; <= 0 means 1.
	Concurrency int
}

// PoolConfig tunes a Pool's health tracking. Zero fields take defaults.
type PoolConfig struct {
	// FailThreshold is how many failed calls in a row mark an endpoint
	// unhealthy (default 3). Model-not-found and auth errors mark it at once.
	FailThreshold int
	// CoolDown is how long an unhealthy endpoint is passed over (default 30 s).
	CoolDown time.Duration
	// Now is the clock; nil uses time.Now.
	Now func() time.Time
	// Log may be nil.
	Log *slog.Logger
}

// Pool is a Model spreading calls over several endpoints, each with its own
// concurrency limit. A call goes to the first endpoint, in the order given,
// that is healthy and has free capacity, waiting for capacity when every
// healthy one is busy. When the endpoint fails (after its own retries) the
// call fails over to the next untried endpoint; unhealthy endpoints are used
// only when no healthy untried one is left. A call ends with the last error
// when every endpoint failed it. The caller's context ending stops the call
// at once, and is never counted against an endpoint.
//
// Pool starts no goroutines; it is safe for concurrent use.
type Pool struct {
	cfg PoolConfig
	eps []*poolEndpoint

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever capacity frees up
}

type poolEndpoint struct {
	Endpoint
	idx int
	// guarded by Pool.mu
	inflight  int
	fails     int
	downUntil time.Time
	served    int64
	failed    int64
}

// EndpointStatus is a snapshot of one endpoint's state.
type EndpointStatus struct {
	Name                string    `json:"name"`
	InFlight            int       `json:"in_flight"`
	Concurrency         int       `json:"concurrency"`
	Healthy             bool      `json:"healthy"`
	DownUntil           time.Time `json:"down_until,omitzero"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	Served              int64     `json:"served"`
	Failed              int64     `json:"failed"`
}

var _ Model = (*Pool)(nil)

// NewPool returns a pool over eps. Names must be unique and non-empty, and
// every endpoint needs a Model.
func NewPool(eps []Endpoint, cfg PoolConfig) (*Pool, error) {
	if len(eps) == 0 {
		return nil, errors.New("pool: no endpoints")
	}
	if cfg.FailThreshold <= 0 {
		cfg.FailThreshold = 3
	}
	if cfg.CoolDown <= 0 {
		cfg.CoolDown = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{cfg: cfg, changed: make(chan struct{})}
	seen := map[string]bool{}
	for i, e := range eps {
		switch {
		case e.Name == "":
			return nil, fmt.Errorf("pool: endpoint %d has no name", i)
		case seen[e.Name]:
			return nil, fmt.Errorf("pool: duplicate endpoint name %q", e.Name)
		case e.Model == nil:
			return nil, fmt.Errorf("pool: endpoint %q has no model", e.Name)
		}
		seen[e.Name] = true
		if e.Concurrency <= 0 {
			e.Concurrency = 1
		}
		p.eps = append(p.eps, &poolEndpoint{Endpoint: e, idx: i})
	}
	return p, nil
}

// Chat sends req to an endpoint as described on Pool. The Response names the
// endpoint that served it in Response.Endpoint.
func (p *Pool) Chat(ctx context.Context, req Request) (*Response, error) {
	tried := make([]bool, len(p.eps))
	var last error
	for {
		e, err := p.acquire(ctx, tried)
		if err != nil {
			if last != nil {
				return nil, fmt.Errorf("pool: %w (after: %w)", err, last)
			}
			return nil, fmt.Errorf("pool: %w", err)
		}
		if e == nil {
			return nil, fmt.Errorf("pool: all %d endpoints failed, last: %w", len(p.eps), last)
		}
		tried[e.idx] = true
		resp, err := e.Model.Chat(ctx, req)
		p.release(ctx, e, err)
		if err == nil {
			resp.Endpoint = e.Name
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pool endpoint %s: %w", e.Name, err)
		}
		last = fmt.Errorf("endpoint %s: %w", e.Name, err)
		p.cfg.Log.Warn("endpoint failed, failing over", "endpoint", e.Name,
			"kind", string(KindOf(err)), "err", err)
	}
}

// acquire takes a slot on the best untried endpoint, waiting for one to free
// up. It returns nil, nil when every endpoint has been tried.
func (p *Pool) acquire(ctx context.Context, tried []bool) (*poolEndpoint, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p.mu.Lock()
		now := p.cfg.Now()
		untried, healthyUntried := false, false
		for _, e := range p.eps {
			if !tried[e.idx] {
				untried = true
				if !now.Before(e.downUntil) {
					healthyUntried = true
					break
				}
			}
		}
		if !untried {
			p.mu.Unlock()
			return nil, nil
		}
		for _, e := range p.eps {
			if tried[e.idx] || (healthyUntried && now.Before(e.downUntil)) {
				continue
			}
			if e.inflight < e.Concurrency {
				e.inflight++
				p.mu.Unlock()
				return e, nil
			}
		}
		ch := p.changed
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release frees e's slot and records the call's outcome.
func (p *Pool) release(ctx context.Context, e *poolEndpoint, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.inflight--
	close(p.changed)
	p.changed = make(chan struct{})
	switch {
	case err == nil:
		e.served++
		e.fails = 0
		e.downUntil = time.Time{}
		return
	case ctx.Err() != nil, errors.Is(err, context.Canceled), KindOf(err) == KindBadRequest:
		// Not the endpoint's fault.
		return
	}
	e.failed++
	e.fails++
	if k := KindOf(err); k == KindModelNotFound || k == KindAuth {
		e.fails = max(e.fails, p.cfg.FailThreshold)
	}
	if e.fails >= p.cfg.FailThreshold {
		e.downUntil = p.cfg.Now().Add(p.cfg.CoolDown)
		p.cfg.Log.Warn("endpoint marked unhealthy", "endpoint", e.Name,
			"consecutive_failures", e.fails, "cool_down", p.cfg.CoolDown)
	}
}

// Status returns a snapshot of every endpoint, in pool order.
func (p *Pool) Status() []EndpointStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	out := make([]EndpointStatus, len(p.eps))
	for i, e := range p.eps {
		s := EndpointStatus{
			Name: e.Name, InFlight: e.inflight, Concurrency: e.Concurrency,
			Healthy: !now.Before(e.downUntil), ConsecutiveFailures: e.fails,
			Served: e.served, Failed: e.failed,
		}
		if !s.Healthy {
			s.DownUntil = e.downUntil
		}
		out[i] = s
	}
	return out
}

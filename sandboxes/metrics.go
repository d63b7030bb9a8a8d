package sandboxes

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Metrics is told about what the lanes of a process share on its host:
// their content-hash compile caches and their GPU run slots. Config.Metrics
// sets it for a Runner and lanes reach it through [Runner.Metrics]; cmd/kiln
// implements it with Prometheus. Methods must be quick and safe for
// concurrent use.
type Metrics interface {
	// CompileCache counts one compile of lane that its cache answered
	// (hit) or that had to run (miss).
	CompileCache(lane string, hit bool)
	// GPUSlots adds delta (negative to take away) to the number of lane's
	// GPU run slots in state (SlotIdle, SlotBusy or SlotQuarantined).
	GPUSlots(lane, state string, delta int)
}

// GPU run slot states, as reported to Metrics.GPUSlots.
const (
	SlotIdle        = "idle"        // free to take a program
	SlotBusy        = "busy"        // running a program (or a health probe)
	SlotQuarantined = "quarantined" // its GPU failed a health probe
)

// nopMetrics is the Metrics of a Runner without one.
type nopMetrics struct{}

func (nopMetrics) CompileCache(string, bool)    {}
func (nopMetrics) GPUSlots(string, string, int) {}

var _ Metrics = nopMetrics{}

// Metrics returns the Runner's metrics hook (Config.Metrics); without one,
// a hook that does nothing. It is never nil.
func (r *Runner) Metrics() Metrics {
	if r == nil || r.cfg.Metrics == nil {
		return nopMetrics{}
	}
	return r.cfg.Metrics
}

// SlotGauge reports the slot states of one pool of GPU run slots to a
// Metrics hook, as differences from what it reported before, so that the
// pools of several campaigns of one lane add up. Close takes back all it
// reported. It is safe for concurrent use.
type SlotGauge struct {
	m    Metrics
	lane string

	mu  sync.Mutex
	cur [3]int // idle, busy, quarantined, as reported
}

// NewSlotGauge returns a gauge reporting lane's slots to m (nil: nowhere).
func NewSlotGauge(m Metrics, lane string) *SlotGauge {
	if m == nil {
		m = nopMetrics{}
	}
	return &SlotGauge{m: m, lane: lane}
}

var slotStates = [3]string{SlotIdle, SlotBusy, SlotQuarantined}

// Set reports that the pool now has idle, busy and quarantined slots.
func (g *SlotGauge) Set(idle, busy, quarantined int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next := [3]int{idle, busy, quarantined}
	for i, st := range slotStates {
		if d := next[i] - g.cur[i]; d != 0 {
			g.m.GPUSlots(g.lane, st, d)
		}
	}
	g.cur = next
}

// Close takes back every slot the gauge reported. A later Set reports
// again.
func (g *SlotGauge) Close() { g.Set(0, 0, 0) }

// GPUSlots bounds how many programs of a lane run on GPUs at once: a
// counting semaphore of n slots whose states (idle, busy) go to a
// SlotGauge. The slots are reported from the first Acquire until Close, so
// a lane opened only to check a spec reports none, and a closed one stops
// counting. It is safe for concurrent use.
type GPUSlots struct {
	sem   chan struct{}
	gauge *SlotGauge

	mu   sync.Mutex
	busy int
	live bool // reported: acquired since New or the last Close
}

// NewGPUSlots returns n slots (at least 1) of lane, reported to m (nil:
// nowhere).
func NewGPUSlots(n int, lane string, m Metrics) *GPUSlots {
	return &GPUSlots{sem: make(chan struct{}, max(n, 1)), gauge: NewSlotGauge(m, lane)}
}

// ErrSlotsReleased reports a Release without a matching Acquire.
var ErrSlotsReleased = errors.New("gpu slots: release without acquire")

// Acquire takes a slot, waiting until one is free or ctx ends.
func (s *GPUSlots) Acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("gpu slot: %w", context.Cause(ctx))
	}
	s.mu.Lock()
	s.busy++
	s.live = true
	s.reportLocked()
	s.mu.Unlock()
	return nil
}

// Release gives back a slot taken by Acquire. It panics on a Release
// without an Acquire, like sync.Mutex.Unlock.
func (s *GPUSlots) Release() {
	s.mu.Lock()
	if s.busy == 0 {
		s.mu.Unlock()
		panic(ErrSlotsReleased)
	}
	s.busy--
	s.reportLocked()
	s.mu.Unlock()
	<-s.sem
}

// Close stops reporting the slots (the lane is done with them); slots in
// use keep working, and a later Acquire reports them again. Idempotent.
func (s *GPUSlots) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live = false
	s.gauge.Close()
}

// reportLocked reports the slots' states while they are live.
func (s *GPUSlots) reportLocked() {
	if s.live {
		s.gauge.Set(cap(s.sem)-s.busy, s.busy, 0)
	}
}

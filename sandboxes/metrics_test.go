package sandboxes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// slotRecorder is a Metrics that sums what it is told, like a gauge.
type slotRecorder struct {
	mu     sync.Mutex
	slots  map[string]int // lane/state
	hits   map[string]int // lane/hit|miss
	deltas int            // GPUSlots calls
}

func newSlotRecorder() *slotRecorder {
	return &slotRecorder{slots: map[string]int{}, hits: map[string]int{}}
}

func (r *slotRecorder) CompileCache(lane string, hit bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := lane + "/miss"
	if hit {
		k = lane + "/hit"
	}
	r.hits[k]++
}

func (r *slotRecorder) GPUSlots(lane, state string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slots[lane+"/"+state] += delta
	r.deltas++
}

func (r *slotRecorder) get(lane, state string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots[lane+"/"+state]
}

func (r *slotRecorder) check(t *testing.T, lane string, idle, busy, quarantined int) {
	t.Helper()
	if i, b, q := r.get(lane, SlotIdle), r.get(lane, SlotBusy), r.get(lane, SlotQuarantined); i != idle || b != busy || q != quarantined {
		t.Fatalf("%s slots idle %d busy %d quarantined %d, want %d %d %d", lane, i, b, q, idle, busy, quarantined)
	}
}

// TestGPUSlots: slots are reported from the first Acquire, busy and idle
// follow Acquire and Release, a full pool makes Acquire wait (and give up
// with its context), two pools of one lane add up, and Close takes a
// pool's slots back.
func TestGPUSlots(t *testing.T) {
	t.Parallel()
	rec := newSlotRecorder()
	s := NewGPUSlots(2, "cuda-synth", rec)
	rec.check(t, "cuda-synth", 0, 0, 0) // not used yet: nothing reported
	ctx := context.Background()
	if err := s.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	rec.check(t, "cuda-synth", 1, 1, 0)
	if err := s.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	rec.check(t, "cuda-synth", 0, 2, 0)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire on a full pool: %v", err)
	}
	rec.check(t, "cuda-synth", 0, 2, 0)

	other := NewGPUSlots(1, "cuda-synth", rec)
	if err := other.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	rec.check(t, "cuda-synth", 0, 3, 0)
	other.Release()
	rec.check(t, "cuda-synth", 1, 2, 0)
	other.Close()
	other.Close() // idempotent
	rec.check(t, "cuda-synth", 0, 2, 0)

	s.Release()
	rec.check(t, "cuda-synth", 1, 1, 0)
	s.Close()
	rec.check(t, "cuda-synth", 0, 0, 0)
	s.Release() // a slot taken before Close still goes back, unreported
	rec.check(t, "cuda-synth", 0, 0, 0)
	if err := s.Acquire(ctx); err != nil { // used again: reported again
		t.Fatal(err)
	}
	rec.check(t, "cuda-synth", 1, 1, 0)
	s.Release()
	func() {
		defer func() {
			if r := recover(); r != ErrSlotsReleased {
				t.Fatalf("release without acquire: recovered %v", r)
			}
		}()
		s.Release()
	}()
}

// TestSlotGauge: Set reports differences only, Close withdraws all.
func TestSlotGauge(t *testing.T) {
	t.Parallel()
	rec := newSlotRecorder()
	g := NewSlotGauge(rec, "torch2cuda")
	g.Set(3, 1, 0)
	rec.check(t, "torch2cuda", 3, 1, 0)
	rec.mu.Lock()
	calls := rec.deltas
	rec.mu.Unlock()
	g.Set(3, 1, 0) // unchanged: no call
	rec.mu.Lock()
	if rec.deltas != calls {
		t.Fatalf("an unchanged Set made %d calls", rec.deltas-calls)
	}
	rec.mu.Unlock()
	g.Set(0, 2, 2)
	rec.check(t, "torch2cuda", 0, 2, 2)
	g.Close()
	rec.check(t, "torch2cuda", 0, 0, 0)
	NewSlotGauge(nil, "x").Set(1, 1, 1) // nil hook: no-op
}

// TestRunnerMetrics: a Runner's Metrics is its Config's, else a no-op.
func TestRunnerMetrics(t *testing.T) {
	t.Parallel()
	rec := newSlotRecorder()
	r := &Runner{cfg: Config{Metrics: rec}}
	r.Metrics().CompileCache("c2x86", true)
	if rec.hits["c2x86/hit"] != 1 {
		t.Fatalf("hits %v", rec.hits)
	}
	var none *Runner
	none.Metrics().CompileCache("c2x86", false) // must not panic
	(&Runner{}).Metrics().GPUSlots("c2x86", SlotBusy, 1)
}

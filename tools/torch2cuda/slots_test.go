package torch2cuda

import (
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// slotSums is a sandboxes.Metrics summing GPU slot deltas like a gauge.
type slotSums struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *slotSums) CompileCache(string, bool) {}

func (s *slotSums) GPUSlots(lane, state string, delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n[lane+"/"+state] += delta
}

func (s *slotSums) get() (idle, busy, quarantined int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n["torch2cuda/idle"], s.n["torch2cuda/busy"], s.n["torch2cuda/quarantined"]
}

// TestGPUSlotMetrics: the judge's slots are reported busy while a batch
// or probe holds them, quarantined while their GPU is out, idle
// otherwise; nothing before the first evaluation, nothing after Close.
func TestGPUSlotMetrics(t *testing.T) {
	t.Parallel()
	f := newFakeGPUs()
	b := newTestBatcher(t, f, 2, 2, time.Hour)
	sums := &slotSums{n: map[string]int{}}
	b.slots = sandboxes.NewSlotGauge(sums, LaneName)
	want := func(what string, idle, busy, quarantined int) {
		t.Helper()
		waitFor(t, what, func() bool {
			i, bz, q := sums.get()
			return i == idle && bz == busy && q == quarantined
		})
	}
	want("nothing before the first evaluation", 0, 0, 0)

	hold := make(chan struct{})
	f.set(func() { f.hold[0] = hold })
	a := submitJob(b, "a")
	<-f.started
	want("one busy slot", 1, 1, 0)
	close(hold)
	waitOut(t, a)
	want("both idle", 2, 0, 0)

	// GPU 1 fails a batch and its probe: its slot is quarantined.
	a, jobs := quarantineGPU1(t, b, f, "b")
	for _, j := range append(jobs, a) {
		waitOut(t, j)
	}
	want("GPU 1's slot quarantined", 1, 0, 1)

	l := &Lane{batches: b}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	want("withdrawn at close", 0, 0, 0)
	waitOut(t, submitJob(b, "c")) // used again: reported again
	want("reported again", 1, 0, 1)
}

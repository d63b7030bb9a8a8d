package toolchain

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lookups counts CompileCache calls by name and result.
type lookups struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *lookups) CompileCache(name string, hit bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := name + "/miss"
	if hit {
		k = name + "/hit"
	}
	l.n[k]++
}

func (l *lookups) get(k string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[k]
}

// TestCacheMetrics: Do reports a miss for each compile it runs and a hit
// for each answer from memory or disk; callers that share another's
// compile count as neither.
func TestCacheMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := &lookups{n: map[string]int{}}
	c, err := NewCache(CacheConfig{Dir: dir, Metrics: m, Name: "cuda-synth"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var compiles atomic.Int32
	release := make(chan struct{})
	compute := func(context.Context) (*Entry, bool, error) {
		compiles.Add(1)
		<-release
		return &Entry{Files: map[string][]byte{"a.out": []byte("x")}}, true, nil
	}
	// Three callers at once: one compile, the others wait for it.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Do(ctx, Key("k1"), compute); err != nil {
				t.Error(err)
			}
		}()
	}
	for compiles.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the others join the flight
	close(release)
	wg.Wait()
	if compiles.Load() != 1 || m.get("cuda-synth/miss") != 1 {
		t.Fatalf("%d compiles, %d misses", compiles.Load(), m.get("cuda-synth/miss"))
	}
	hitsBefore := m.get("cuda-synth/hit")
	if _, hit, err := c.Do(ctx, Key("k1"), compute); err != nil || !hit {
		t.Fatalf("second Do: hit %v err %v", hit, err)
	}
	if m.get("cuda-synth/hit") != hitsBefore+1 {
		t.Fatalf("memory hit not counted: %d -> %d", hitsBefore, m.get("cuda-synth/hit"))
	}
	// A new cache over the same folder answers from disk.
	c2, err := NewCache(CacheConfig{Dir: dir, Metrics: m, Name: "cuda-synth"})
	if err != nil {
		t.Fatal(err)
	}
	if _, hit, err := c2.Do(ctx, Key("k1"), compute); err != nil || !hit {
		t.Fatalf("disk Do: hit %v err %v", hit, err)
	}
	if m.get("cuda-synth/hit") != hitsBefore+2 || m.get("cuda-synth/miss") != 1 || compiles.Load() != 1 {
		t.Fatalf("after a disk hit: %v, %d compiles", m.n, compiles.Load())
	}
	// Without Metrics nothing is reported and nothing breaks.
	c3, err := NewCache(CacheConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c3.Do(ctx, Key("k2"), func(context.Context) (*Entry, bool, error) { return &Entry{}, true, nil }); err != nil {
		t.Fatal(err)
	}
}

package toolchain

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	t.Parallel()
	if Key("a", "bc") == Key("ab", "c") {
		t.Error("Key does not separate its parts")
	}
	if Key("x") != Key("x") || len(Key("x")) != 64 {
		t.Error("Key is not a stable hex SHA-256")
	}
	v := map[string]string{NVCC: "11.8", HIPCC: "5.2"}
	if VersionsPart(v, NVCC, HIPCC) != VersionsPart(v, HIPCC, NVCC) {
		t.Error("VersionsPart depends on name order")
	}
	if VersionsPart(v, NVCC) == VersionsPart(map[string]string{NVCC: "13.0"}, NVCC) {
		t.Error("VersionsPart ignores the version")
	}
	if VersionsPart(v, Clang) != "clang=<absent>\n" {
		t.Errorf("absent tool: %q", VersionsPart(v, Clang))
	}
}

func testEntry(key string) *Entry {
	return &Entry{Key: key, Files: map[string][]byte{"program": []byte("\x7fELF binary " + key), "program.s": []byte("main:\n")},
		Stdout: []byte("out"), Stderr: []byte("warning"), ExitCode: 0, Wall: 1500 * time.Millisecond,
		Meta: map[string]string{"outcome": "exited"}}
}

func TestCacheMemoryAndDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := NewCache(CacheConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	key := Key("k1")
	if _, ok := c.Get(key); ok {
		t.Fatal("hit in an empty cache")
	}
	if err := c.Put(testEntry(key)); err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Get(key); !ok || string(e.Files["program.s"]) != "main:\n" {
		t.Fatalf("memory get = %v, %v", e, ok)
	}
	// A second cache on the same folder reads it from disk.
	c2, err := NewCache(CacheConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c2.Get(key)
	if !ok {
		t.Fatal("disk miss")
	}
	want := testEntry(key)
	if !bytes.Equal(e.Files["program"], want.Files["program"]) || string(e.Stderr) != "warning" ||
		e.Wall != want.Wall || e.Meta["outcome"] != "exited" {
		t.Errorf("disk entry = %+v", e)
	}
	if s := c2.Stats(); s.DiskHits != 1 || s.Misses != 0 {
		t.Errorf("stats %+v", s)
	}
	// Content addressing: equal blobs are stored once.
	other := testEntry(key)
	other.Key = Key("k2")
	other.Files = map[string][]byte{"copy.s": []byte("main:\n")}
	if err := c.Put(other); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "objects", "*", "*"))
	if len(objs) != 2 {
		t.Errorf("%d blobs for 3 files with 2 contents", len(objs))
	}
	// A corrupt blob is a miss, not wrong output.
	for _, o := range objs {
		if err := os.WriteFile(o, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c3, _ := NewCache(CacheConfig{Dir: dir})
	if _, ok := c3.Get(key); ok {
		t.Error("corrupt blob served")
	}
	if err := c.Put(&Entry{Key: Key("bad"), Files: map[string][]byte{"../x": nil}}); err == nil {
		t.Error("file name with a path accepted")
	}
}

func TestCacheEvictsByBytes(t *testing.T) {
	t.Parallel()
	c, err := NewCache(CacheConfig{MemoryBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		k := Key(string(rune('a' + i)))
		if err := c.Put(&Entry{Key: k, Files: map[string][]byte{"f": make([]byte, 1500)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.Get(Key("a")); ok {
		t.Error("oldest entry still in memory past the byte bound")
	}
	if _, ok := c.Get(Key("j")); !ok {
		t.Error("newest entry evicted")
	}
	if c.bytes > 8<<10 {
		t.Errorf("memory cache holds %d bytes, bound 8 KiB", c.bytes)
	}
	// Entries above a quarter of the bound are not kept in memory.
	if err := c.Put(&Entry{Key: Key("big"), Files: map[string][]byte{"f": make([]byte, 4<<10)}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(Key("big")); ok {
		t.Error("oversized entry kept in memory")
	}
}

func TestCacheDoComputesOnce(t *testing.T) {
	t.Parallel()
	c, _ := NewCache(CacheConfig{Dir: t.TempDir()})
	var calls atomic.Int32
	release := make(chan struct{})
	compute := func(ctx context.Context) (*Entry, bool, error) {
		calls.Add(1)
		<-release
		return &Entry{Stdout: []byte("built")}, true, nil
	}
	key := Key("once")
	var wg sync.WaitGroup
	hits := make([]bool, 8)
	for i := range hits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, hit, err := c.Do(context.Background(), key, compute)
			if err != nil || string(e.Stdout) != "built" {
				t.Errorf("Do = %v, %v", e, err)
			}
			hits[i] = hit
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("compute ran %d times for one key", calls.Load())
	}
	e, hit, err := c.Do(context.Background(), key, compute)
	if err != nil || !hit || string(e.Stdout) != "built" || calls.Load() != 1 {
		t.Errorf("later Do: hit=%v err=%v calls=%d", hit, err, calls.Load())
	}
}

func TestCacheDoNotStored(t *testing.T) {
	t.Parallel()
	c, _ := NewCache(CacheConfig{})
	var calls atomic.Int32
	compute := func(ctx context.Context) (*Entry, bool, error) {
		calls.Add(1)
		return &Entry{ExitCode: -1}, false, nil // a timeout: not a property of the inputs
	}
	for i := 0; i < 2; i++ {
		if _, hit, err := c.Do(context.Background(), Key("timeout"), compute); err != nil || hit {
			t.Fatalf("Do: hit=%v err=%v", hit, err)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("unstorable result reused: %d computations", calls.Load())
	}
	boom := errors.New("boom")
	if _, _, err := c.Do(context.Background(), Key("err"), func(context.Context) (*Entry, bool, error) {
		return nil, false, boom
	}); !errors.Is(err, boom) {
		t.Errorf("error not passed through: %v", err)
	}
}

// TestCacheDoLeaderCanceled: when the caller computing an entry is
// canceled, a waiting caller with a live context computes it itself.
func TestCacheDoLeaderCanceled(t *testing.T) {
	t.Parallel()
	c, _ := NewCache(CacheConfig{})
	key := Key("leader")
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	started := make(chan struct{})
	leaderDone := make(chan error, 1)
	go func() {
		_, _, err := c.Do(leaderCtx, key, func(ctx context.Context) (*Entry, bool, error) {
			close(started)
			<-ctx.Done()
			return nil, false, ctx.Err()
		})
		leaderDone <- err
	}()
	<-started
	waiterDone := make(chan *Entry, 1)
	go func() {
		e, _, err := c.Do(context.Background(), key, func(ctx context.Context) (*Entry, bool, error) {
			return &Entry{Stdout: []byte("mine")}, true, nil
		})
		if err != nil {
			t.Error(err)
		}
		waiterDone <- e
	}()
	time.Sleep(50 * time.Millisecond)
	cancelLeader()
	if err := <-leaderDone; !errors.Is(err, context.Canceled) {
		t.Errorf("leader error %v", err)
	}
	select {
	case e := <-waiterDone:
		if e == nil || string(e.Stdout) != "mine" {
			t.Errorf("waiter got %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter stuck after the leader was canceled")
	}
}

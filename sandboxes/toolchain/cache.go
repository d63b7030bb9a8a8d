package toolchain

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
)

// Key derives a cache key from its parts (sources, flags, toolchain
// versions, a schema version): the hex SHA-256 of the length-prefixed
// parts, so no two different part lists share a key.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// VersionsPart renders versions (as from [Registry.Versions]) of the named
// tools as one key part; an absent tool is recorded as absent.
func VersionsPart(versions map[string]string, names ...string) string {
	var b bytes.Buffer
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		v, ok := versions[n]
		if !ok {
			v = "<absent>"
		}
		fmt.Fprintf(&b, "%s=%s\n", n, v)
	}
	return b.String()
}

// Entry is one cached compile: the files it produced and how it ended.
type Entry struct {
	Key string `json:"key"`
	// Files are outputs by base name.
	Files map[string][]byte `json:"-"`
	// Stdout, Stderr and ExitCode are the compiler's.
	Stdout   []byte `json:"stdout,omitempty"`
	Stderr   []byte `json:"stderr,omitempty"`
	ExitCode int    `json:"exit_code"`
	// Wall is how long the original compile took.
	Wall time.Duration `json:"wall_ns"`
	// Meta is free-form detail the producer wants back.
	Meta    map[string]string `json:"meta,omitempty"`
	Created time.Time         `json:"created"`
}

// size is the entry's weight in the memory cache.
func (e *Entry) size() int64 {
	n := int64(len(e.Stdout) + len(e.Stderr) + 256)
	for k, v := range e.Files {
		n += int64(len(k) + len(v))
	}
	for k, v := range e.Meta {
		n += int64(len(k) + len(v))
	}
	return n
}

// manifest is an entry on disk: files name their blobs by SHA-256.
type manifest struct {
	Entry
	Blobs map[string]string `json:"files"`
}

// CacheConfig configures a Cache.
type CacheConfig struct {
	// Dir keeps entries across restarts ("" keeps them in memory only).
	// Blobs go to Dir/objects, manifests to Dir/entries. Nothing is ever
	// evicted from disk: prune the folder by age if it grows too large.
	Dir string
	// MemoryBytes bounds the in-memory LRU. Default 256 MiB; entries larger
	// than a quarter of it stay on disk only.
	MemoryBytes int64
	// Logger receives warnings about unreadable entries; nil discards.
	Logger *slog.Logger
	// Metrics, when set, counts the compiles Do answers from the cache
	// (hits) and those it runs (misses), under Name (the lane's name).
	// Callers that wait for another caller's compile count as neither.
	Metrics CacheMetrics
	Name    string
}

// CacheMetrics counts compile cache lookups (sandboxes.Metrics is one).
type CacheMetrics interface {
	CompileCache(name string, hit bool)
}

// CacheStats counts cache traffic.
type CacheStats struct {
	MemoryHits int64 `json:"memory_hits"`
	DiskHits   int64 `json:"disk_hits"`
	Misses     int64 `json:"misses"`
	Stores     int64 `json:"stores"`
	// Shared counts callers that waited for another caller's computation.
	Shared int64 `json:"shared"`
}

// Cache is a content-addressed compile cache. It is safe for concurrent
// use, also by several processes sharing Dir (writes are atomic renames).
type Cache struct {
	cfg    CacheConfig
	log    *slog.Logger
	flight singleflight.Group

	mu    sync.Mutex
	lru   *list.List
	byKey map[string]*list.Element
	bytes int64

	memHits, diskHits, misses, stores, shared atomic.Int64
}

// NewCache returns a cache.
func NewCache(cfg CacheConfig) (*Cache, error) {
	if cfg.Dir != "" && !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("toolchain cache: dir %q is not absolute", cfg.Dir)
	}
	if cfg.MemoryBytes < 0 {
		return nil, errors.New("toolchain cache: negative memory bound")
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = 256 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Dir != "" {
		for _, sub := range []string{"objects", "entries"} {
			if err := os.MkdirAll(filepath.Join(cfg.Dir, sub), 0o755); err != nil {
				return nil, fmt.Errorf("toolchain cache: %w", err)
			}
		}
	}
	return &Cache{cfg: cfg, log: cfg.Logger, lru: list.New(), byKey: map[string]*list.Element{}}, nil
}

// Stats returns the traffic counters.
func (c *Cache) Stats() CacheStats {
	return CacheStats{MemoryHits: c.memHits.Load(), DiskHits: c.diskHits.Load(), Misses: c.misses.Load(),
		Stores: c.stores.Load(), Shared: c.shared.Load()}
}

// Get returns the entry for key from memory or disk.
func (c *Cache) Get(key string) (*Entry, bool) {
	if e := c.memGet(key); e != nil {
		c.memHits.Add(1)
		return e, true
	}
	if e := c.diskGet(key); e != nil {
		c.diskHits.Add(1)
		c.memPut(e)
		return e, true
	}
	c.misses.Add(1)
	return nil, false
}

// Put stores e (its Key must be set). A disk failure is returned but the
// entry is kept in memory anyway.
func (c *Cache) Put(e *Entry) error {
	if e == nil || len(e.Key) < 8 {
		return errors.New("toolchain cache: entry without key")
	}
	for name := range e.Files {
		if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
			return fmt.Errorf("toolchain cache: bad file name %q", name)
		}
	}
	if e.Created.IsZero() {
		e.Created = time.Now()
	}
	c.stores.Add(1)
	c.memPut(e)
	if err := c.diskPut(e); err != nil {
		return fmt.Errorf("toolchain cache: %w", err)
	}
	return nil
}

// Do returns the entry for key, calling compute when there is none. One
// compute runs per key at a time; concurrent callers wait for it and share
// its result. compute's store result says whether the entry may be cached
// (a timeout is not a property of the inputs: do not store it). hit
// reports that the entry came from the cache. When the computing caller is
// canceled, waiting callers whose own context is live try again.
func (c *Cache) Do(ctx context.Context, key string, compute func(ctx context.Context) (e *Entry, store bool, err error)) (e *Entry, hit bool, err error) {
	for {
		if e, ok := c.Get(key); ok {
			c.count(true)
			return e, true, nil
		}
		ch := c.flight.DoChan(key, func() (any, error) {
			if e := c.memGet(key); e != nil { // stored while we queued
				c.count(true)
				return e, nil
			}
			c.count(false)
			e, store, err := compute(ctx)
			if err != nil {
				return nil, err
			}
			if e == nil {
				return nil, errors.New("toolchain cache: compute returned no entry")
			}
			e.Key = key
			if store {
				if err := c.Put(e); err != nil {
					c.log.Warn("compile cache write failed", "key", key, "err", err)
				}
			}
			return e, nil
		})
		select {
		case r := <-ch:
			if r.Err != nil {
				if r.Shared && ctx.Err() == nil &&
					(errors.Is(r.Err, context.Canceled) || errors.Is(r.Err, context.DeadlineExceeded)) {
					continue // the computing caller gave up; we have not
				}
				return nil, false, r.Err
			}
			if r.Shared {
				c.shared.Add(1)
			}
			return r.Val.(*Entry), false, nil
		case <-ctx.Done():
			return nil, false, fmt.Errorf("toolchain cache: %w", context.Cause(ctx))
		}
	}
}

// count reports one lookup of Do to the metrics hook, if any.
func (c *Cache) count(hit bool) {
	if c.cfg.Metrics != nil {
		c.cfg.Metrics.CompileCache(c.cfg.Name, hit)
	}
}

func (c *Cache) memGet(key string) *Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*Entry)
	}
	return nil
}

func (c *Cache) memPut(e *Entry) {
	sz := e.size()
	if sz > c.cfg.MemoryBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.Key]; ok {
		c.bytes -= el.Value.(*Entry).size()
		el.Value = e
		c.bytes += sz
		c.lru.MoveToFront(el)
	} else {
		c.byKey[e.Key] = c.lru.PushFront(e)
		c.bytes += sz
	}
	for c.bytes > c.cfg.MemoryBytes && c.lru.Len() > 1 {
		old := c.lru.Back()
		c.lru.Remove(old)
		oe := old.Value.(*Entry)
		delete(c.byKey, oe.Key)
		c.bytes -= oe.size()
	}
}

func (c *Cache) entryPath(key string) string {
	return filepath.Join(c.cfg.Dir, "entries", key[:2], key+".json")
}

func (c *Cache) objectPath(sum string) string {
	return filepath.Join(c.cfg.Dir, "objects", sum[:2], sum)
}

// diskGet loads an entry; anything unreadable or corrupt is a miss.
func (c *Cache) diskGet(key string) *Entry {
	if c.cfg.Dir == "" || len(key) < 8 {
		return nil
	}
	b, err := os.ReadFile(c.entryPath(key))
	if err != nil {
		return nil
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Key != key {
		c.log.Warn("compile cache entry unreadable", "key", key, "err", err)
		return nil
	}
	e := m.Entry
	e.Files = map[string][]byte{}
	for name, sum := range m.Blobs {
		if len(sum) != 64 {
			return nil
		}
		data, err := os.ReadFile(c.objectPath(sum))
		if err != nil {
			c.log.Warn("compile cache blob missing", "key", key, "file", name, "err", err)
			return nil
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			c.log.Warn("compile cache blob corrupt", "key", key, "file", name)
			return nil
		}
		e.Files[name] = data
	}
	return &e
}

// diskPut writes blobs first, then the manifest, each atomically.
func (c *Cache) diskPut(e *Entry) error {
	if c.cfg.Dir == "" {
		return nil
	}
	m := manifest{Entry: *e, Blobs: map[string]string{}}
	for name, data := range e.Files {
		sum := sha256.Sum256(data)
		hs := hex.EncodeToString(sum[:])
		m.Blobs[name] = hs
		p := c.objectPath(hs)
		if fi, err := os.Stat(p); err == nil && fi.Size() == int64(len(data)) {
			continue // content-addressed: already there
		}
		if err := writeFileAtomic(p, data, 0o644); err != nil {
			return err
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeFileAtomic(c.entryPath(e.Key), b, 0o644)
}

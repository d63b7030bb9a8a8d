package c2x86

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// memGet returns the cached reference for key, marking it recently used.
func (l *Lane) memGet(key string) *Reference {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[key]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*Reference)
	}
	return nil
}

// memPut caches ref, evicting the least recently used beyond the bound.
func (l *Lane) memPut(ref *Reference) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[ref.Key]; ok {
		e.Value = ref
		l.lru.MoveToFront(e)
		return
	}
	l.byKey[ref.Key] = l.lru.PushFront(ref)
	for l.lru.Len() > l.cfg.MemoryCacheEntries {
		old := l.lru.Back()
		l.lru.Remove(old)
		delete(l.byKey, old.Value.(*Reference).Key)
	}
}

func (l *Lane) diskPath(key string) string {
	return filepath.Join(l.cfg.CacheDir, key[:2], key+".json")
}

// diskGet loads a reference from the cache dir; a missing or unreadable
// entry is a miss.
func (l *Lane) diskGet(key string) *Reference {
	if l.cfg.CacheDir == "" {
		return nil
	}
	b, err := os.ReadFile(l.diskPath(key))
	if err != nil {
		return nil
	}
	var ref Reference
	if err := json.Unmarshal(b, &ref); err != nil || ref.Key != key {
		l.log.Warn("c2x86 reference cache entry unreadable, recomputing", "key", key, "err", err)
		return nil
	}
	return &ref
}

// diskPut stores ref atomically (temp file, fsync, rename). Failures only
// cost a recomputation later, so they are logged, not returned.
func (l *Lane) diskPut(ref *Reference) {
	if l.cfg.CacheDir == "" {
		return
	}
	path := l.diskPath(ref.Key)
	if err := l.writeAtomic(path, ref); err != nil {
		l.log.Warn("c2x86 reference cache write failed", "path", path, "err", err)
	}
}

func (l *Lane) writeAtomic(path string, ref *Reference) error {
	b, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Blobs is a content-addressed store of byte strings (binaries, outputs,
// large transcripts) under dir, named by the lowercase hex SHA-256 of their
// content: dir/ab/abcdef.... Writes are atomic and durable: a temp file in
// the same directory is written, fsynced, renamed into place, and the
// directory fsynced. A Blobs is safe for concurrent use, also across
// processes sharing the directory.
//
// Put holds a shared flock on dir/.lock and [Store.GC] an exclusive one
// while it deletes, so that a deletion never interleaves with a Put of the
// same content; and Put of content already stored refreshes the file's
// modification time, so that a blob about to be referenced again looks new
// to GC's grace period (see [Store.GC]).
type Blobs struct {
	dir string
	log *slog.Logger
}

const tmpPrefix = ".tmp-"

// lockFile is the name of the lock file in the blob directory.
const lockFile = ".lock"

// lock takes the blob store's lock, shared (Put) or exclusive (GC
// deleting), and returns its release. Each call opens the file anew: flock
// locks belong to the open file, so two holders in one process exclude each
// other as two processes do.
func (b *Blobs) lock(exclusive bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(b.dir, lockFile), os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("blob lock: %w", err)
	}
	if err := flock(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("blob lock: %w", err)
	}
	return func() { f.Close() }, nil // closing releases the lock
}

func newBlobs(dir string, log *slog.Logger) (*Blobs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("blobs: %w", err)
	}
	b := &Blobs{dir: dir, log: log}
	b.sweep(time.Hour)
	return b, nil
}

// sweep removes temp files older than age left by a crashed writer.
func (b *Blobs) sweep(age time.Duration) {
	cutoff := time.Now().Add(-age)
	_ = filepath.WalkDir(b.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().Before(cutoff) {
			if os.Remove(path) == nil {
				b.log.Debug("removed stale blob temp file", "path", path)
			}
		}
		return nil
	})
}

// validHash reports whether h is 64 lowercase hex digits.
func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Hash returns the blob name of data without storing it.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func (b *Blobs) path(hash string) string { return filepath.Join(b.dir, hash[:2], hash) }

// Put stores data and returns its hash. Storing content that is already
// present only refreshes the stored file's modification time (the caller is
// about to refer to it: GC must see it as new).
func (b *Blobs) Put(data []byte) (string, error) {
	hash := Hash(data)
	unlock, err := b.lock(false)
	if err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	defer unlock()
	final := b.path(hash)
	if _, err := os.Stat(final); err == nil {
		now := time.Now()
		if os.Chtimes(final, now, now) == nil {
			return hash, nil
		}
		// Not ours to touch (another user wrote it): store it again,
		// which replaces it with a new file of the same content.
	}
	shard := filepath.Dir(final)
	newShard := false
	if _, err := os.Stat(shard); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(shard, 0o755); err != nil {
			return "", fmt.Errorf("put blob: %w", err)
		}
		newShard = true
	}
	f, err := os.CreateTemp(shard, tmpPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	if err := os.Chmod(tmp, 0o444); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	ok = true
	if err := syncDir(shard); err != nil {
		return "", fmt.Errorf("put blob: %w", err)
	}
	if newShard {
		if err := syncDir(b.dir); err != nil {
			return "", fmt.Errorf("put blob: %w", err)
		}
	}
	return hash, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Get returns the blob named hash. ErrBadHash if hash is not a blob name,
// ErrNotFound if absent, ErrCorrupt if the stored bytes no longer match.
func (b *Blobs) Get(hash string) ([]byte, error) {
	if !validHash(hash) {
		return nil, fmt.Errorf("get blob %q: %w", hash, ErrBadHash)
	}
	data, err := os.ReadFile(b.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("get blob %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	if Hash(data) != hash {
		return nil, fmt.Errorf("get blob %s: %w", hash, ErrCorrupt)
	}
	return data, nil
}

// Has reports whether the blob named hash is stored.
func (b *Blobs) Has(hash string) bool {
	if !validHash(hash) {
		return false
	}
	_, err := os.Stat(b.path(hash))
	return err == nil
}

package sandboxes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
)

// ErrTreeTooLarge means a tree holds more bytes or files than asked for.
var ErrTreeTooLarge = errors.New("tree too large")

// ReadTree reads every regular file under dir in the box (a relative
// path), by slash path relative to dir. Links, devices and other special
// files are skipped, never followed; more than maxBytes in all, or more
// than maxFiles files, is ErrTreeTooLarge. A missing dir gives an empty
// map.
func (b *Box) ReadTree(dir string, maxBytes int64, maxFiles int) (map[string][]byte, error) {
	if err := checkName(dir); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	var names []string
	err := fs.WalkDir(b.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			names = append(names, p)
			if len(names) > maxFiles {
				return fmt.Errorf("%w: over %d files under %s", ErrTreeTooLarge, maxFiles, dir)
			}
		}
		return nil
	})
	b.mu.Unlock()
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", dir, err)
	}
	out := map[string][]byte{}
	left := maxBytes
	for _, p := range names {
		data, err := b.ReadFile(p, left)
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("%w: over %d bytes under %s", ErrTreeTooLarge, maxBytes, dir)
		}
		if errors.Is(err, ErrNotRegular) {
			continue // replaced by a link since the walk
		}
		if err != nil {
			return nil, err
		}
		left -= int64(len(data))
		rel := p[len(dir):]
		if len(rel) > 0 && rel[0] == '/' {
			rel = rel[1:]
		}
		out[rel] = data
	}
	return out, nil
}

// WriteTree writes files (slash paths relative to dir) into the box under
// dir, making the folders on the way (mode 0755, the box's uid), in name
// order.
func (b *Box) WriteTree(dir string, files map[string][]byte) error {
	if err := checkName(dir); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	made := map[string]bool{}
	for _, n := range names {
		p := path.Join(dir, n)
		if err := checkName(p); err != nil {
			return err
		}
		if err := b.mkdirAll(path.Dir(p), made); err != nil {
			return err
		}
		if err := b.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// mkdirAll makes dir and its parents inside the box (not following links).
func (b *Box) mkdirAll(dir string, made map[string]bool) error {
	if dir == "." || made[dir] {
		return nil
	}
	if err := b.mkdirAll(path.Dir(dir), made); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if fi, err := b.root.Lstat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("mkdir %s: %w (%s)", dir, ErrNotRegular, fi.Mode().Type())
		}
		made[dir] = true
		return nil
	}
	if err := b.root.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	if b.r.root {
		if err := b.root.Lchown(dir, int(b.uid), int(b.uid)); err != nil {
			return fmt.Errorf("mkdir %s: %w", dir, err)
		}
	}
	made[dir] = true
	return nil
}

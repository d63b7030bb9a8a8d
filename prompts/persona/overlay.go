package persona

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// Overlay returns a read-only file system that lays the given layers over
// each other, later layers on top: a path is looked up from the top layer
// down, and a directory present in several layers lists the union of their
// entries (the topmost entry wins on equal names). Nil layers are skipped.
//
// Overlay(Builtin(), os.DirFS(dir)) adds a user's templates and pools to
// the builtin library; a user file at the same path as a builtin one (say
// pools/size.txt) replaces it.
func Overlay(layers ...fs.FS) fs.FS {
	var ls []fs.FS
	for _, l := range layers {
		if l != nil {
			ls = append(ls, l)
		}
	}
	return overlayFS{layers: ls}
}

type overlayFS struct{ layers []fs.FS } // bottom first

var (
	_ fs.ReadDirFS  = overlayFS{}
	_ fs.ReadFileFS = overlayFS{}
	_ fs.StatFS     = overlayFS{}
)

// Stat returns the information of the topmost layer that has name.
func (o overlayFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	var firstErr error
	for i := len(o.layers) - 1; i >= 0; i-- {
		fi, err := fs.Stat(o.layers[i], name)
		if err == nil {
			return fi, nil
		}
		if !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadFile reads name from the topmost layer that has it.
func (o overlayFS) ReadFile(name string) ([]byte, error) {
	fi, layer, err := o.top(name, "readfile")
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errors.New("is a directory")}
	}
	return fs.ReadFile(layer, name)
}

// ReadDir lists the union of name's entries over all layers where name is
// a directory, the topmost layer's entry winning on equal names, sorted by
// name. A layer where name is a file hides the layers below it.
func (o overlayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	seen := map[string]bool{}
	var out []fs.DirEntry
	found := false
	for i := len(o.layers) - 1; i >= 0; i-- {
		fi, err := fs.Stat(o.layers[i], name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			if !found {
				return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
			}
			break
		}
		found = true
		ents, err := fs.ReadDir(o.layers[i], name)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Open opens name from the topmost layer that has it; a directory is
// opened as the merged listing of [overlayFS.ReadDir].
func (o overlayFS) Open(name string) (fs.File, error) {
	fi, layer, err := o.top(name, "open")
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return layer.Open(name)
	}
	ents, err := o.ReadDir(name)
	if err != nil {
		return nil, err
	}
	return &overlayDir{info: fi, entries: ents}, nil
}

func (o overlayFS) top(name, op string) (fs.FileInfo, fs.FS, error) {
	if !fs.ValidPath(name) {
		return nil, nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	for i := len(o.layers) - 1; i >= 0; i-- {
		fi, err := fs.Stat(o.layers[i], name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return fi, o.layers[i], nil
	}
	return nil, nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// overlayDir is an opened merged directory.
type overlayDir struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	off     int
}

func (d *overlayDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *overlayDir) Close() error               { return nil }
func (d *overlayDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.Name(), Err: errors.New("is a directory")}
}

func (d *overlayDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return slices.Clone(rest[:n]), nil
}

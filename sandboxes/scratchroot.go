package sandboxes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ScratchRootFor returns the folder for the sandboxes' scratch dirs of the
// data folder data (Config.ScratchRoot). Sandboxed processes run under their
// own uids, so every folder above the scratch must be searchable by them: a data folder under /root (mode 0700) is not. The
// root is therefore a folder of ours under the system temp dir, one per data
// folder, in a folder checked to be a real directory owned by us (not a
// planted link). The per-data-folder root exists only while a runner uses
// it; the folder above it stays (removing it would reopen the race that
// ownedDir closes: another user could plant it again in the shared temp
// dir).
func ScratchRootFor(data string) (string, error) {
	abs, err := filepath.Abs(data)
	if err != nil {
		return "", err
	}
	base := filepath.Join(os.TempDir(), fmt.Sprintf("kiln-sandbox-%d", os.Geteuid()))
	if err := ownedDir(base); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, hex.EncodeToString(sum[:6])), nil
}

// NewForData returns a Runner (New) with the scratch root of the data
// folder data (ScratchRootFor) as cfg.ScratchRoot. The roots of other data
// folders that dead processes left (empty, or holding a crashed instance's
// scratch) go first (ReclaimRoots); ours is recreated by New and removed by
// the Runner's Close.
func NewForData(data string, cfg Config) (*Runner, error) {
	root, err := ScratchRootFor(data)
	if err != nil {
		return nil, err
	}
	ReclaimRoots(filepath.Dir(root), cfg.Logger)
	cfg.ScratchRoot = root
	r, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return r, nil
}

// ownedDir makes dir (mode 0711) or checks that the existing one is a
// directory owned by this process's user.
func ownedDir(dir string) error {
	if err := os.Mkdir(dir, 0o711); err != nil && !os.IsExist(err) {
		return fmt.Errorf("sandbox root: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox root: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("sandbox root %s: not a directory owned by uid %d; remove it", dir, os.Geteuid())
	}
	return os.Chmod(dir, 0o711)
}

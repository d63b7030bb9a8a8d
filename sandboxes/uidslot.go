package sandboxes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Automatic uid ranges. Every root Runner whose Config leaves UIDBase zero
// takes a slot: an exclusive flock on UIDSlotDir/<n>.lock held until Close,
// and the uids [uidSlotBase + n*uidSlotStride, + MaxBoxes]. Two kiln
// processes on one host (a daemon and a rescore, test binaries running in
// parallel) thus never share a box uid: a shared uid would share
// RLIMIT_NPROC counts and could let one box's processes signal another's.
// A crashed process's lock is released by the kernel with its file.
const (
	uidSlotBase   = 2_110_000_000
	uidSlotStride = 1 << 17 // > the largest MaxBoxes (1<<16) plus the trampoline uid
	uidSlots      = 128
)

// defaultUIDSlotDir holds the slot lock files; /run is root-owned tmpfs on
// Debian, so stale locks vanish on reboot.
const defaultUIDSlotDir = "/run/kiln-uid-slots"

// ErrNoUIDSlot means every automatic uid range is taken.
var ErrNoUIDSlot = errors.New("sandboxes: every automatic uid range is in use")

// acquireUIDSlot locks the first free slot in dir and returns its uid base
// and the locked file (closing it frees the slot).
func acquireUIDSlot(dir string) (uint32, *os.File, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return 0, nil, fmt.Errorf("sandboxes: uid slots: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("sandboxes: uid slots: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return 0, nil, fmt.Errorf("sandboxes: uid slots: %s is not a directory of ours writable only by us", dir)
	}
	for n := 0; n < uidSlots; n++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%d.lock", n)), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return 0, nil, fmt.Errorf("sandboxes: uid slots: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
			return uidSlotBase + uint32(n)*uidSlotStride, f, nil
		}
		f.Close()
	}
	return 0, nil, ErrNoUIDSlot
}

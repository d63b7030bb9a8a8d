package sandboxes

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Every Runner is an instance with an id "<pid>-<start time>-<random>":
// its scratch boxes live under ScratchRoot/<id>/ and its cgroups under
// kiln-sandboxes/<id>/. An instance whose process no longer exists (same
// pid and start time) crashed or was killed: New reclaims what it left
// (unmounts its scratch tmpfs mounts, removes its directories, kills and
// removes its cgroups). Instances of live processes, this one's included,
// are never touched, so several Runners may share a scratch root.

func newInstanceID() (string, error) {
	st, err := procStartTime(os.Getpid())
	if err != nil {
		return "", err
	}
	var rnd [4]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%d-%s", os.Getpid(), st, hex.EncodeToString(rnd[:])), nil
}

// procStartTime is field 22 of /proc/pid/stat (clock ticks since boot).
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// instanceAlive reports whether the process that created instance id is
// still running. Names that are not instance ids count as alive (left
// alone).
func instanceAlive(id string) bool {
	parts := strings.Split(id, "-")
	if len(parts) != 3 {
		return true
	}
	pid, err1 := strconv.Atoi(parts[0])
	st, err2 := strconv.ParseUint(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	cur, err := procStartTime(pid)
	return err == nil && cur == st
}

// reclaimScratch removes the instance directories of dead daemons under
// root, unmounting the box tmpfs mounts in them first.
func reclaimScratch(root, self string, log *slog.Logger) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	mounts := mountPoints()
	for _, e := range ents {
		if !e.IsDir() || e.Name() == self || instanceAlive(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		var under []string
		for _, m := range mounts {
			if within(dir, m) && m != dir {
				under = append(under, m)
			}
		}
		// Deepest first.
		sort.Slice(under, func(i, j int) bool { return len(under[i]) > len(under[j]) })
		for _, m := range under {
			_ = unix.Unmount(m, unix.MNT_DETACH)
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("sandbox: reclaim stale scratch", "dir", dir, "err", err)
			continue
		}
		log.Info("sandbox: reclaimed stale scratch of a dead instance", "dir", dir, "mounts", len(under))
	}
}

// mountPoints lists this namespace's mount points.
func mountPoints() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 4 {
			out = append(out, unescapeMount(fs[4]))
		}
	}
	return out
}

// ReclaimRoots tidies parent, a directory whose subdirectories are scratch
// roots (Config.ScratchRoot of Runners, such as kiln's one per data folder):
// in each it reclaims the instances of dead processes as New does in its
// own root (unmounting their tmpfs mounts, removing their directories), then
// removes the root if that leaves it empty. A root holding a live
// instance is left alone, and a Runner starting in a root removed under it
// creates the root again. Their cgroups are reclaimed by the next New.
// It returns how many roots it removed.
func ReclaimRoots(parent string, log *slog.Logger) int {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		root := filepath.Join(parent, e.Name())
		reclaimScratch(root, "", log)
		if os.Remove(root) == nil {
			removed++
		}
	}
	if removed > 0 {
		log.Info("sandbox: removed empty scratch roots", "parent", parent, "roots", removed)
	}
	return removed
}

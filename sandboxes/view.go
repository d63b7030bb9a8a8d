package sandboxes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The view: what a run sees of the filesystem. Stage 1 builds it in the
// box's private mount namespace: a small tmpfs becomes the root
// (pivot_root), holding read-only binds of the system directories and of
// Config.ReadOnlyPaths, a minimal /etc (the loader cache, alternatives, a
// passwd and group naming only the box's users), a few /dev nodes, a fresh
// /proc of the box's pid namespace, and the box's scratch, read-write, at
// its host path. The root itself is then remounted read-only. Nothing else
// of the host exists in it: not /etc/passwd or /etc/shadow, /root, /home,
// /tmp (a link to the scratch), /sys, /run, the host's /proc, other boxes
// or the daemon's data.

// viewSystemPaths are bound read-only when they exist (symlinks, such as
// merged-/usr /bin, are recreated as symlinks).
var viewSystemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// viewEtc are the /etc entries bound read-only: the dynamic loader's cache
// and the alternatives symlinks (cc, c++, ...).
var viewEtc = []string{"/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime"}

// viewDevices are bound from the host /dev.
var viewDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// viewBind is one bind mount; Dst is also the path inside the view.
type viewBind struct {
	Src string `json:"src"`
	Dst string `json:"dst"`
	// RW leaves it writable (the scratch); Dev allows device nodes.
	RW  bool `json:"rw,omitempty"`
	Dev bool `json:"dev,omitempty"`
}

// viewFile is a file written into the view's root tmpfs.
type viewFile struct {
	Path string `json:"path"`
	Data string `json:"data"`
}

// viewSpec is what stage 1 mounts.
type viewSpec struct {
	// Root is an empty host directory the new root tmpfs is mounted on
	// (in the private namespace only).
	Root     string      `json:"root"`
	Binds    []viewBind  `json:"binds"`
	Symlinks [][2]string `json:"symlinks"` // path, target
	Files    []viewFile  `json:"files"`
	Hostname string      `json:"hostname"`
}

// viewBase is the part of every run's view that does not depend on the
// box: system directories, /etc, devices. Computed once by New.
type viewBase struct {
	binds    []viewBind
	symlinks [][2]string
	// readExec are the landlock read/exec paths of the view (without the
	// scratch and devices).
	readExec []string
}

func newViewBase(extra []string) (viewBase, error) {
	var v viewBase
	add := func(p string, required bool) error {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) && !required {
			return nil
		}
		if err != nil {
			return fmt.Errorf("view: %w", err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("view: %w", err)
			}
			v.symlinks = append(v.symlinks, [2]string{p, t})
			return nil
		}
		v.binds = append(v.binds, viewBind{Src: p, Dst: p})
		return nil
	}
	for _, p := range viewSystemPaths {
		if err := add(p, p == "/usr"); err != nil {
			return v, err
		}
	}
	for _, p := range viewEtc {
		if err := add(p, false); err != nil {
			return v, err
		}
	}
	for _, p := range extra {
		if err := add(p, true); err != nil {
			return v, err
		}
	}
	v.readExec = append(v.readExec, viewSystemPaths...)
	v.readExec = append(v.readExec, viewEtc...)
	v.readExec = append(v.readExec, extra...)
	return v, nil
}

// gpuDevices lists the GPU device nodes of the host: NVIDIA's, the DRM
// render nodes, and ROCm's /dev/kfd (AMD GPUs).
func gpuDevices() []string {
	var out []string
	for _, pat := range []string{"/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/dri/*", "/dev/kfd"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeDevice != 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// buildView is the view of one run of box b.
func (r *Runner) buildView(b *Box, gpu bool, readOnly []string) (*viewSpec, []string) {
	v := &viewSpec{
		Root:     r.viewRoot,
		Binds:    append([]viewBind(nil), r.view.binds...),
		Symlinks: append([][2]string(nil), r.view.symlinks...),
		Hostname: "kiln-box",
		Files: []viewFile{
			{"/etc/passwd", fmt.Sprintf("root:x:0:0:root:/:/usr/sbin/nologin\nkiln-init:x:%d:%d::/:/usr/sbin/nologin\nkiln:x:%d:%d:kiln sandbox:%s:/usr/sbin/nologin\n",
				r.initUID, r.initUID, b.uid, b.uid, b.dir)},
			{"/etc/group", fmt.Sprintf("root:x:0:\nkiln-init:x:%d:\nkiln:x:%d:\n", r.initUID, b.uid)},
			{"/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n"},
		},
	}
	devs := append([]string(nil), viewDevices...)
	if gpu {
		devs = append(devs, gpuDevices()...)
	}
	for _, d := range devs {
		v.Binds = append(v.Binds, viewBind{Src: d, Dst: d, RW: true, Dev: true})
	}
	for i, name := range []string{"stdin", "stdout", "stderr"} {
		v.Symlinks = append(v.Symlinks, [2]string{"/dev/" + name, fmt.Sprintf("/proc/self/fd/%d", i)})
	}
	v.Symlinks = append(v.Symlinks, [2]string{"/dev/fd", "/proc/self/fd"})
	// /tmp is the scratch (a link), unless the scratch itself lies below
	// /tmp: then /tmp holds only the path down to it.
	if !within("/tmp", b.dir) {
		v.Symlinks = append(v.Symlinks, [2]string{"/tmp", b.dir})
	}
	for _, p := range readOnly {
		v.Binds = append(v.Binds, viewBind{Src: p, Dst: p})
	}
	v.Binds = append(v.Binds, viewBind{Src: b.dir, Dst: b.dir, RW: true})
	return v, devs
}

// setupView runs in stage 1 (privileged, in a fresh mount namespace):
// builds the view and pivots into it. The working directory is then dir.
func setupView(v *viewSpec, dir string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	root := v.Root
	if err := unix.Mount("kiln-view", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=4m,nr_inodes=4096,mode=0755"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	in := func(p string) string { return filepath.Join(root, p) }
	for _, b := range v.Binds {
		if err := bindInto(b, in(b.Dst)); err != nil {
			return err
		}
	}
	for _, s := range v.Symlinks {
		if err := os.MkdirAll(filepath.Dir(in(s[0])), 0o755); err != nil {
			return fmt.Errorf("symlink %s: %w", s[0], err)
		}
		if err := os.Symlink(s[1], in(s[0])); err != nil {
			return fmt.Errorf("symlink %s: %w", s[0], err)
		}
	}
	for _, f := range v.Files {
		if err := os.MkdirAll(filepath.Dir(in(f.Path)), 0o755); err != nil {
			return fmt.Errorf("file %s: %w", f.Path, err)
		}
		if err := os.WriteFile(in(f.Path), []byte(f.Data), 0o644); err != nil {
			return fmt.Errorf("file %s: %w", f.Path, err)
		}
	}
	if err := os.Mkdir(in("/proc"), 0o555); err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	// hidepid=2: the target sees only its own processes, not the
	// trampoline (another uid) and its command line.
	if err := unix.Mount("proc", in("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "hidepid=2"); err != nil {
		return fmt.Errorf("mount proc: %w", err)
	}
	if v.Hostname != "" {
		_ = unix.Sethostname([]byte(v.Hostname)) // a uts namespace of our own
	}
	if err := unix.Chdir(root); err != nil {
		return fmt.Errorf("chdir root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	// The old root is now stacked under the new one: detach it.
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	if err := setMountAttr("/", unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	return nil
}

// bindInto bind-mounts b.Src onto dst (created: a directory or an empty
// file, like the source) and restricts the mount.
func bindInto(b viewBind, dst string) error {
	fi, err := os.Stat(b.Src)
	if err != nil {
		return fmt.Errorf("bind %s: %w", b.Src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("bind %s: %w", b.Src, err)
	}
	if fi.IsDir() {
		err = os.Mkdir(dst, 0o755)
	} else {
		var f *os.File
		f, err = os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			err = f.Close()
		}
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("bind %s: %w", b.Src, err)
	}
	// Recursive: submounts of a bound directory come along (and are made
	// read-only with it below).
	if err := unix.Mount(b.Src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", b.Src, err)
	}
	var attr uint64 = unix.MOUNT_ATTR_NOSUID
	switch {
	case b.Dev:
		attr |= unix.MOUNT_ATTR_NOEXEC
	case b.RW:
		attr |= unix.MOUNT_ATTR_NODEV
	default:
		attr |= unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV
	}
	if err := setMountAttr(dst, attr, true); err != nil {
		return fmt.Errorf("restrict %s: %w", b.Src, err)
	}
	return nil
}

// setMountAttr adds attributes to the mount at path (and below it when
// recursive), with mount_setattr(2), or, on kernels before 5.12, a bind
// remount of the top mount keeping the flags it has.
func setMountAttr(path string, attr uint64, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(-1, path, flags, &unix.MountAttr{Attr_set: attr})
	if err != unix.ENOSYS {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	keep := uintptr(st.Flags) & (unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC |
		unix.ST_NOATIME | unix.ST_NODIRATIME | unix.ST_RELATIME)
	ms := keep
	for a, f := range map[uint64]uintptr{
		unix.MOUNT_ATTR_RDONLY: unix.MS_RDONLY, unix.MOUNT_ATTR_NOSUID: unix.MS_NOSUID,
		unix.MOUNT_ATTR_NODEV: unix.MS_NODEV, unix.MOUNT_ATTR_NOEXEC: unix.MS_NOEXEC,
	} {
		if attr&a != 0 {
			ms |= f
		}
	}
	return unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|ms, "")
}

// viewLandlock lists the landlock paths of a run: with a view, all of /etc
// and /proc there are the box's own; without one only named entries.
//
// GPU runs may also write (not create) under /proc: the CUDA driver writes
// per-process files there and cudaMalloc fails without (measured on an
// H200 host); the uid's own permissions still bound what it can write.
func (r *Runner) viewLandlock(b *Box, devs []string, withView, gpu bool, readOnly []string) *landlockSpec {
	if r.landlockABI == 0 {
		return nil
	}
	rx := append([]string{"/proc"}, r.view.readExec...)
	rx = append(rx, readOnly...)
	if withView {
		rx = append(rx, "/etc", "/dev")
	}
	l := &landlockSpec{
		ABI:       r.landlockABI,
		ReadExec:  rx,
		ReadWrite: []string{b.dir},
		Devices:   devs,
	}
	if gpu {
		l.Write = []string{"/proc"}
	}
	return l
}

// hostPathsVisible are host paths a view must hide: the probe checks that
// they are absent.
var hostPathsHidden = []string{"/etc/shadow", "/root", "/home", "/sys", "/run", "/var"}

func viewHidesHost() error {
	for _, p := range hostPathsHidden {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s visible", p)
		}
	}
	if b, err := os.ReadFile("/etc/passwd"); err == nil && strings.Contains(string(b), ":/root:") {
		return errors.New("host /etc/passwd visible")
	}
	return nil
}

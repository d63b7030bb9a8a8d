package sandboxes

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// NoLimit, as the value of a [Limits] field, turns that limit off. A zero
// field means "use the default".
const NoLimit = -1

// Limits bounds one run. Zero fields take the Runner's defaults
// (Config.Defaults, then [DefaultLimits]); [NoLimit] turns a limit off.
type Limits struct {
	// Wall is the wall-clock limit; the whole tree is killed when it passes.
	Wall time.Duration `json:"wall,omitempty"`
	// CPU is RLIMIT_CPU (rounded up to whole seconds): SIGXCPU at the soft
	// limit, SIGKILL one second later. It is per process.
	CPU time.Duration `json:"cpu,omitempty"`
	// Memory is RLIMIT_AS in bytes (address space, not RSS). It breaks
	// programs that reserve large address ranges (CUDA, sanitizers): turn it
	// off there.
	Memory int64 `json:"memory,omitempty"`
	// Procs is RLIMIT_NPROC: processes and threads of the box's uid,
	// including the trampoline's few threads.
	Procs int64 `json:"procs,omitempty"`
	// FileSize is RLIMIT_FSIZE in bytes: the largest file a process may write.
	FileSize int64 `json:"file_size,omitempty"`
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int64 `json:"open_files,omitempty"`
	// Output caps each of stdout and stderr as captured; the excess is
	// discarded (or the tree killed, see Spec.KillOnOutputCap).
	Output int64 `json:"output,omitempty"`
	// RSS is the cgroup memory limit in bytes: resident memory, page cache
	// and scratch (tmpfs) pages the run's processes touch, with no swap.
	// Past it the kernel's OOM killer ends the run (Killed = KillMemory).
	// Unlike Memory it does not break programs that reserve address space,
	// so keep it on for GPU programs. Needs the cgroups layer.
	RSS int64 `json:"rss,omitempty"`
}

// DefaultLimits are the limits used where neither the Spec nor
// Config.Defaults set one.
func DefaultLimits() Limits {
	return Limits{
		Wall:      10 * time.Second,
		CPU:       10 * time.Second,
		Memory:    1 << 30,
		Procs:     64,
		FileSize:  64 << 20,
		OpenFiles: 256,
		Output:    1 << 20,
		RSS:       1 << 30,
	}
}

// WithDefaults fills the zero fields of l from d.
func (l Limits) WithDefaults(d Limits) Limits {
	if l.Wall == 0 {
		l.Wall = d.Wall
	}
	if l.CPU == 0 {
		l.CPU = d.CPU
	}
	if l.Memory == 0 {
		l.Memory = d.Memory
	}
	if l.Procs == 0 {
		l.Procs = d.Procs
	}
	if l.FileSize == 0 {
		l.FileSize = d.FileSize
	}
	if l.OpenFiles == 0 {
		l.OpenFiles = d.OpenFiles
	}
	if l.Output == 0 {
		l.Output = d.Output
	}
	if l.RSS == 0 {
		l.RSS = d.RSS
	}
	return l
}

func (l Limits) validate() error {
	for name, v := range map[string]int64{
		"wall": int64(l.Wall), "cpu": int64(l.CPU), "memory": l.Memory, "procs": l.Procs,
		"file_size": l.FileSize, "open_files": l.OpenFiles, "output": l.Output, "rss": l.RSS,
	} {
		if v < NoLimit {
			return fmt.Errorf("limit %s: negative value %d (use NoLimit)", name, v)
		}
	}
	return nil
}

// Config configures a [Runner].
type Config struct {
	// ScratchRoot is the directory holding the per-box scratch dirs, a
	// directory kiln owns (dead instances in it are removed). It is
	// created (mode 0711) if missing and removed by Close when no other
	// Runner's instance is left in it; every directory above it must be
	// searchable by the sandbox uids. Required.
	ScratchRoot string
	// UIDBase is the first uid (and gid) of the range handed to boxes when
	// running as root. Zero (the default) takes an automatic range that no
	// other Runner on the host holds (see UIDSlotDir), far from system and
	// subuid ranges. Ignored when not root.
	UIDBase uint32
	// UIDSlotDir holds the lock files of the automatic uid ranges. Default
	// /run/kiln-uid-slots.
	UIDSlotDir string
	// MaxBoxes is how many boxes may be open at once (one uid each when
	// root); Open waits for a free one. Default 64.
	MaxBoxes int
	// Path is the PATH inside the sandbox. Default
	// "/usr/local/bin:/usr/bin:/bin".
	Path string
	// Defaults override DefaultLimits field by field.
	Defaults Limits
	// ScratchSize and ScratchInodes cap each box's scratch directory, a
	// tmpfs mounted for the box (bytes and inodes; defaults 256 MiB and
	// 16384). Writing past them fails with ENOSPC. Scratch pages are RAM:
	// MaxBoxes*ScratchSize bounds what full scratches can hold. NoLimit
	// lifts a cap.
	ScratchSize   int64
	ScratchInodes int64
	// CgroupParent is the cgroup (a path as in /proc/self/cgroup, such as
	// /system.slice/kiln.service) under which the per-run cgroups are made,
	// in every hierarchy; empty means the daemon's own cgroup. On a pure
	// cgroup v2 host the daemon's own cgroup usually cannot hand memory and
	// pids to children (v2 forbids controllers below a cgroup with
	// processes in it): delegate a subtree (systemd Delegate=yes with
	// DelegateSubgroup=daemon puts kiln in a leaf) and name its top here.
	CgroupParent string
	// InitBinary is the trampoline that starts each run's two stages:
	// kiln-sandbox-init, built from ./sandboxes/kiln-sandbox-init. A small
	// binary starts in about 2 ms, where re-executing a large daemon (what
	// happens without one) costs about 25 ms of CPU, twice a run. Empty:
	// $KILN_SANDBOX_INIT, else a kiln-sandbox-init beside the running
	// executable (used only if it speaks this build's trampoline protocol;
	// otherwise the running executable serves). One named here or in
	// $KILN_SANDBOX_INIT must work: New fails if it does not.
	InitBinary string
	// ReadOnlyPaths are host paths (directories or files) bound read-only,
	// at the same path, into the view of every run, beside the system
	// directories (/usr, /bin, /sbin, /lib*, a minimal /etc). Name only
	// what the tools need (a toolchain under /opt): everything a run can
	// see, untrusted code can read, at compile time too.
	ReadOnlyPaths []string
	// AllowMissing lists the isolation layers New may do without when the
	// host cannot provide them. Empty (the default) requires every layer
	// ([Layers]) and New fails with a *PolicyError naming what is missing.
	// Lowering the policy is reported by [Capabilities.Policy]: record it
	// with every result.
	AllowMissing []Layer
	// AllowWeakIsolation is AllowMissing with every layer: New runs with
	// whatever the host offers (a container without privileges, a kernel
	// without user namespaces).
	AllowWeakIsolation bool
	// DisableNamespaces runs without namespaces even where they work
	// (debugging, or hosts where they misbehave), so without the
	// filesystem view too. It needs LayerNamespaces and LayerFilesystem in
	// AllowMissing (or AllowWeakIsolation). Runs then have network access
	// (Landlock still denies TCP where it works) and the weaker tree kill.
	DisableNamespaces bool
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
	// Metrics, when set, is told about what the lanes using this Runner
	// share: compile cache lookups and GPU run slots ([Runner.Metrics]).
	Metrics Metrics
}

const (
	defaultUIDBase  = 2_100_000_000
	defaultMaxBoxes = 64
	defaultPath     = "/usr/local/bin:/usr/bin:/bin"

	defaultScratchSize   = 256 << 20
	defaultScratchInodes = 16384
)

// withDefaults returns c with defaults filled in.
func (c Config) withDefaults() Config {
	if c.UIDBase == 0 {
		c.UIDBase = defaultUIDBase
	}
	if c.MaxBoxes == 0 {
		c.MaxBoxes = defaultMaxBoxes
	}
	if c.Path == "" {
		c.Path = defaultPath
	}
	if c.ScratchSize == 0 {
		c.ScratchSize = defaultScratchSize
	}
	if c.ScratchInodes == 0 {
		c.ScratchInodes = defaultScratchInodes
	}
	if c.AllowWeakIsolation {
		c.AllowMissing = Layers()
	}
	c.Defaults = c.Defaults.WithDefaults(DefaultLimits())
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports whether c is usable (after defaults are applied).
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.ScratchRoot == "" {
		return errors.New("sandboxes config: scratch root is required")
	}
	if !filepath.IsAbs(c.ScratchRoot) {
		return fmt.Errorf("sandboxes config: scratch root %q is not absolute", c.ScratchRoot)
	}
	if c.MaxBoxes < 1 || c.MaxBoxes > 1<<16 {
		return fmt.Errorf("sandboxes config: max boxes %d out of range", c.MaxBoxes)
	}
	// One uid past the boxes' range is the trampolines' (stage 1).
	if uint64(c.UIDBase)+uint64(c.MaxBoxes)+1 >= 1<<32-1 {
		return fmt.Errorf("sandboxes config: uid range %d+%d overflows", c.UIDBase, c.MaxBoxes)
	}
	if c.UIDBase < 1000 {
		return fmt.Errorf("sandboxes config: uid base %d is a system uid", c.UIDBase)
	}
	if err := c.Defaults.validate(); err != nil {
		return fmt.Errorf("sandboxes config: %w", err)
	}
	if c.ScratchSize < NoLimit || c.ScratchInodes < NoLimit {
		return errors.New("sandboxes config: negative scratch cap (use NoLimit)")
	}
	for _, sys := range append(append([]string{"/etc", "/dev", "/proc", "/sys"}, viewSystemPaths...), c.ReadOnlyPaths...) {
		if within(sys, c.ScratchRoot) {
			return fmt.Errorf("sandboxes config: scratch root %q lies in %s, which runs see read-only", c.ScratchRoot, sys)
		}
	}
	for _, p := range c.ReadOnlyPaths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			return fmt.Errorf("sandboxes config: read-only path %q must be absolute, clean and not /", p)
		}
		if within(c.ScratchRoot, p) || within(p, c.ScratchRoot) {
			return fmt.Errorf("sandboxes config: read-only path %q overlaps the scratch root", p)
		}
	}
	if c.CgroupParent != "" && (!filepath.IsAbs(c.CgroupParent) || filepath.Clean(c.CgroupParent) != c.CgroupParent) {
		return fmt.Errorf("sandboxes config: cgroup parent %q must be an absolute, clean cgroup path", c.CgroupParent)
	}
	for _, l := range c.AllowMissing {
		if !l.known() {
			return fmt.Errorf("sandboxes config: unknown layer %q in allow_missing", l)
		}
	}
	if c.DisableNamespaces && (!c.allowed(LayerNamespaces) || !c.allowed(LayerFilesystem)) {
		return errors.New("sandboxes config: disable_namespaces needs namespaces and filesystem in allow_missing")
	}
	return nil
}

// allowed reports whether the policy lets New run without layer l.
func (c Config) allowed(l Layer) bool {
	if c.AllowWeakIsolation {
		return true
	}
	for _, a := range c.AllowMissing {
		if a == l {
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it (both clean, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

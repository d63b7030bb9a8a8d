package sandboxes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Capabilities says which isolation layers a Runner applies.
type Capabilities struct {
	// Backend names the mechanism ("process": re-exec trampoline).
	Backend string `json:"backend"`
	// Policy is "strict" when every layer is active, otherwise
	// "lowered(without a,b)": the layers Config.AllowMissing let the Runner
	// do without. Record it with every result obtained from this Runner.
	Policy string `json:"policy"`
	// Layers is the state of every layer, in Layers() order.
	Layers []LayerState `json:"layers"`
	// Namespaces lists the namespaces each run gets ("pid", "net", ...).
	Namespaces []string `json:"namespaces"`
	// UIDDrop is set when runs use an unprivileged uid of their own
	// (root daemon); UIDs is the range.
	UIDDrop bool   `json:"uid_drop"`
	UIDs    string `json:"uids,omitempty"`
	// Rlimits lists the limits applied.
	Rlimits []string `json:"rlimits"`
	// NoNewPrivs is PR_SET_NO_NEW_PRIVS.
	NoNewPrivs bool `json:"no_new_privs"`
	// Network is false when runs cannot reach any network.
	Network bool `json:"network"`
	// TreeKill says how leftover processes are killed: "pid-namespace"
	// (complete), "subreaper+cgroup" (complete once the run ends) or
	// "subreaper+pgid" (a setsid process that outlives a timeout escapes).
	TreeKill string `json:"tree_kill"`
}

// String is a one-line summary for logs.
func (c Capabilities) String() string {
	var on, off []string
	for _, l := range c.Layers {
		if l.Active {
			on = append(on, string(l.Layer))
		} else {
			off = append(off, string(l.Layer))
		}
	}
	return fmt.Sprintf("policy=%s active=%s missing=%s ns=%s rlimits=%s network=%v tree_kill=%s",
		c.Policy, strings.Join(on, ","), strings.Join(off, ","), strings.Join(c.Namespaces, ","),
		strings.Join(c.Rlimits, ","), c.Network, c.TreeKill)
}

// Layer returns the state of layer l.
func (c Capabilities) Layer(l Layer) LayerState {
	for _, s := range c.Layers {
		if s.Layer == l {
			return s
		}
	}
	return LayerState{Layer: l, Detail: "unknown"}
}

// Runner opens boxes and runs commands in them. It is safe for concurrent
// use.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	root bool
	// instance names this Runner's scratch directory (instDir) and cgroups.
	instance string
	// uidSlot is the locked file of an automatic uid range (nil with an
	// explicit Config.UIDBase).
	uidSlot  *os.File
	instDir  string
	viewRoot string
	// init is the trampoline (see Config.InitBinary).
	init trampoline
	// cloneflags and userns shape stage 1 (SysProcAttr) of every run.
	cloneflags uintptr
	userns     bool
	uids       chan uint32 // free box identities
	initUID    uint32      // stage 1 drops to it (root, pid namespace)
	dropInit   bool
	// layers in force
	useView      bool
	view         viewBase
	scratchTmpfs bool
	cg           *cgroups
	landlockABI  int
	seccomp      bool
	caps         Capabilities
	runSeq       atomic.Uint64
	closeOnce    sync.Once
}

// Spec is one command to run in a box.
type Spec struct {
	// Argv is the command; Argv[0] is looked up in Config.Path unless it
	// holds a slash. Relative paths are relative to the box directory.
	Argv []string
	// Env adds "KEY=value" entries to the minimal environment.
	Env []string
	// Stdin is the standard input (empty: /dev/null).
	Stdin []byte
	// Limits override the Runner's defaults field by field.
	Limits Limits
	// KillOnOutputCap kills the tree as soon as stdout or stderr passes
	// Limits.Output (Killed = KillOutput) instead of discarding the rest.
	KillOnOutputCap bool
	// GPU makes the host's GPU device nodes (/dev/nvidia*, /dev/nvidia-caps,
	// /dev/dri) visible and usable in the run, and turns the address-space
	// limit (Limits.Memory) off: CUDA reserves far more address space than
	// it uses (4 GiB breaks cudaMalloc), so Limits.RSS is then the memory
	// bound. The driver's user-space libraries must be in the view (under
	// /usr, or Config.ReadOnlyPaths). Not yet tested on a GPU host.
	GPU bool
	// ReadOnly are host paths (absolute, existing) bound read-only into
	// this run's view at the same path, beside Config.ReadOnlyPaths: data a
	// run reads and must not change, shared by many boxes (a compiler's
	// precompiled header) without a copy in each.
	ReadOnly []string
}

// New checks cfg, prepares the scratch root, reclaims what dead
// predecessors left, and probes which isolation layers work here. It fails
// with a *PolicyError (errors.Is ErrPolicy) when a layer the policy
// requires is missing. The probe runs the trampoline, so MaybeRunInit must
// be wired (ErrNoInit otherwise). Call Close when done.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	autoUIDs := cfg.UIDBase == 0 && os.Geteuid() == 0
	cfg = cfg.withDefaults()
	var slot *os.File
	if autoUIDs {
		dir := cfg.UIDSlotDir
		if dir == "" {
			dir = defaultUIDSlotDir
		}
		base, f, err := acquireUIDSlot(dir)
		if err != nil {
			return nil, err
		}
		cfg.UIDBase, slot = base, f
	}
	r := &Runner{cfg: cfg, log: cfg.Logger, root: os.Geteuid() == 0, uidSlot: slot}
	ok := false
	var err error
	defer func() {
		if !ok && slot != nil {
			slot.Close()
		}
	}()
	if r.init, err = findInit(cfg.InitBinary, r.log); err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			r.init.close()
		}
	}()
	id, err := newInstanceID()
	if err != nil {
		return nil, fmt.Errorf("sandboxes: instance: %w", err)
	}
	r.instance = id
	r.instDir = filepath.Join(cfg.ScratchRoot, id)
	r.viewRoot = filepath.Join(r.instDir, "view")
	if err := r.makeInstanceDir(); err != nil {
		return nil, err
	}
	if err := os.Mkdir(r.viewRoot, 0o700); err != nil {
		_ = os.RemoveAll(r.instDir)
		removeRootIfEmpty(cfg.ScratchRoot, r.log)
		return nil, fmt.Errorf("sandboxes: view dir: %w", err)
	}
	r.uids = make(chan uint32, cfg.MaxBoxes)
	for i := 0; i < cfg.MaxBoxes; i++ {
		if r.root {
			r.uids <- cfg.UIDBase + uint32(i)
		} else {
			r.uids <- uint32(os.Getuid())
		}
	}
	layers, err := r.detect()
	if err != nil {
		r.Close()
		return nil, err
	}
	policy, missing := layers.policy(cfg)
	r.caps = r.capabilities(layers, policy)
	if len(missing) > 0 {
		r.Close()
		return nil, &PolicyError{Missing: missing, Capabilities: r.caps}
	}
	r.log.Debug("sandbox runner ready", "capabilities", r.caps.String())
	ok = true
	return r, nil
}

// makeInstanceDir creates the scratch root if need be, reclaims the dead
// instances in it and creates this instance's directory. Another process
// may remove the root between the two when it finds it empty (Close,
// ReclaimRoots): then it starts over.
func (r *Runner) makeInstanceDir() error {
	root := r.cfg.ScratchRoot
	for try := 0; ; try++ {
		err := os.MkdirAll(root, 0o711)
		if err == nil && r.root {
			err = os.Chmod(root, 0o711)
		}
		if err == nil {
			reclaimScratch(root, r.instance, r.log)
			err = os.Mkdir(r.instDir, 0o711)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) || try == 9 {
			return fmt.Errorf("sandboxes: scratch root and instance dir: %w", err)
		}
	}
}

// removeRootIfEmpty removes the scratch root when no instance is left in
// it (rmdir fails on a non-empty directory, which is then left alone).
func removeRootIfEmpty(root string, log *slog.Logger) {
	err := os.Remove(root)
	switch {
	case err == nil:
		log.Debug("sandbox: removed empty scratch root", "dir", root)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST), errors.Is(err, unix.EBUSY):
	default:
		log.Warn("sandbox: remove empty scratch root", "dir", root, "err", err)
	}
}

// detect finds what the host offers, then probes runs with every candidate
// layer, dropping a layer whenever the probe shows the host cannot apply
// it (the policy decides afterwards whether that is acceptable).
func (r *Runner) detect() (layerSet, error) {
	cfg := r.cfg
	ls := layerSet{}
	r.initUID = cfg.UIDBase + uint32(cfg.MaxBoxes)
	if r.root {
		ls.set(LayerUID, true, "box uids %d-%d, trampoline uid %d", cfg.UIDBase, r.initUID-1, r.initUID)
	} else {
		ls.set(LayerUID, false, "not root: every box runs as uid %d (mapped into a user namespace)", os.Getuid())
	}
	ns := "pid, net, ipc, uts, mount"
	r.cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC |
		syscall.CLONE_NEWUTS | syscall.CLONE_NEWNS
	if !r.root {
		r.cloneflags |= syscall.CLONE_NEWUSER
		r.userns = true
		ns = "user, " + ns
	}
	ls.set(LayerNamespaces, true, "%s; no network; the tree dies with the run", ns)
	if cfg.DisableNamespaces {
		r.cloneflags, r.userns = 0, false
		ls.set(LayerNamespaces, false, "disabled by config")
	}
	r.dropInit = r.root && r.cloneflags&syscall.CLONE_NEWPID != 0

	view, err := newViewBase(cfg.ReadOnlyPaths)
	if err != nil {
		return nil, fmt.Errorf("sandboxes: %w", err)
	}
	r.view = view
	r.useView = r.cloneflags&syscall.CLONE_NEWNS != 0
	if r.useView {
		ls.set(LayerFilesystem, true, "pivot_root into a read-only tmpfs: %d read-only binds, minimal /etc, /dev nodes, own /proc, the box's scratch",
			len(view.binds))
	} else {
		ls.set(LayerFilesystem, false, "needs a mount namespace")
	}

	switch {
	case !r.root:
		ls.set(LayerScratch, false, "not root: cannot mount a tmpfs per box; the scratch is a plain directory")
	default:
		if err := unix.Mount("kiln-probe", r.viewRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=64k,nr_inodes=16"); err != nil {
			ls.set(LayerScratch, false, "mount tmpfs: %v", err)
		} else {
			_ = unix.Unmount(r.viewRoot, unix.MNT_DETACH)
			r.scratchTmpfs = true
			ls.set(LayerScratch, true, "tmpfs per box: %s, %s inodes", capString(cfg.ScratchSize, true), capString(cfg.ScratchInodes, false))
		}
	}

	ls.set(LayerRlimits, true, "%s", strings.Join(r.rlimitNames(), ", "))
	ls.set(LayerNoNewPrivs, true, "set before exec")

	if cg, err := setupCgroups(r.instance, cfg.CgroupParent, instanceAlive); err != nil {
		ls.set(LayerCgroups, false, "%v", err)
	} else {
		r.cg = cg
		ls.set(LayerCgroups, true, "%s; per run, removed after it", cg.detail)
	}

	if abi, err := landlockABI(); err != nil {
		ls.set(LayerLandlock, false, "%v", err)
	} else {
		r.landlockABI = abi
		ls.set(LayerLandlock, true, "%s", (&landlockSpec{ABI: abi}).describe())
	}

	if seccompSupported() {
		r.seccomp = true
		ls.set(LayerSeccomp, true, "BPF filter, arch %s checked (x32 killed): sockets AF_UNIX only, EPERM for ptrace, mount, namespaces, bpf, perf, keyrings, modules, kexec, io_uring", runtime.GOARCH)
	} else {
		ls.set(LayerSeccomp, false, "no filter written for %s", runtime.GOARCH)
	}

	for attempt := 0; ; attempt++ {
		err := r.probe()
		if err == nil {
			return ls, nil
		}
		if errors.Is(err, ErrNoInit) || attempt > len(Layers()) {
			return nil, fmt.Errorf("sandboxes: probe: %w", err)
		}
		var lf *layerFailure
		switch {
		case errors.As(err, &lf):
		case errors.Is(err, errStart) && r.cloneflags != 0:
			lf = &layerFailure{LayerNamespaces, err.Error()}
		default:
			return nil, fmt.Errorf("sandboxes: probe: %w", err)
		}
		r.log.Warn("sandbox layer unavailable", "layer", lf.layer, "why", lf.detail)
		if !r.disable(lf.layer) {
			return nil, fmt.Errorf("sandboxes: probe: %w", err)
		}
		ls.set(lf.layer, false, "%s", lf.detail)
		if lf.layer == LayerNamespaces {
			ls.set(LayerFilesystem, false, "needs a mount namespace")
		}
	}
}

// disable turns layer l off after a failed probe; false if it cannot be.
func (r *Runner) disable(l Layer) bool {
	switch l {
	case LayerNamespaces:
		if r.cloneflags == 0 {
			return false
		}
		r.cloneflags, r.userns, r.useView, r.dropInit = 0, false, false, false
	case LayerFilesystem:
		if !r.useView {
			return false
		}
		r.useView = false
	case LayerCgroups:
		if r.cg == nil {
			return false
		}
		r.cg.remove()
		r.cg = nil
	case LayerLandlock:
		if r.landlockABI == 0 {
			return false
		}
		r.landlockABI = 0
	case LayerSeccomp:
		if !r.seccomp {
			return false
		}
		r.seccomp = false
	case LayerUID:
		if !r.dropInit {
			return false
		}
		r.dropInit = false
	default:
		return false
	}
	return true
}

func capString(v int64, bytes bool) string {
	switch {
	case v == NoLimit:
		return "no cap"
	case bytes:
		return fmt.Sprintf("%d MiB", v>>20)
	}
	return strconv.FormatInt(v, 10)
}

func (r *Runner) rlimitNames() []string {
	names := []string{"cpu", "fsize", "nofile", "core"}
	if r.cfg.Defaults.Memory != NoLimit {
		names = append(names, "as")
	}
	if r.nprocWorks() {
		names = append(names, "nproc")
	}
	return names
}

func (r *Runner) capabilities(ls layerSet, policy string) Capabilities {
	c := Capabilities{
		Backend:    "process",
		Policy:     policy,
		Layers:     ls.list(),
		UIDDrop:    r.root,
		Rlimits:    r.rlimitNames(),
		NoNewPrivs: true,
		Network:    r.cloneflags&syscall.CLONE_NEWNET == 0,
		TreeKill:   "pid-namespace",
	}
	for _, n := range []struct {
		flag uintptr
		name string
	}{{syscall.CLONE_NEWUSER, "user"}, {syscall.CLONE_NEWPID, "pid"}, {syscall.CLONE_NEWNET, "net"},
		{syscall.CLONE_NEWIPC, "ipc"}, {syscall.CLONE_NEWUTS, "uts"}, {syscall.CLONE_NEWNS, "mount"}} {
		if r.cloneflags&n.flag != 0 {
			c.Namespaces = append(c.Namespaces, n.name)
		}
	}
	if r.root {
		c.UIDs = fmt.Sprintf("%d-%d", r.cfg.UIDBase, r.cfg.UIDBase+uint32(r.cfg.MaxBoxes)-1)
	}
	if r.cloneflags&syscall.CLONE_NEWPID == 0 {
		c.TreeKill = "subreaper+pgid"
		if r.cg != nil {
			c.TreeKill = "subreaper+cgroup"
		}
	}
	return c
}

// nprocWorks: RLIMIT_NPROC is meaningful per box when each box has its own
// uid (root) or its own user namespace.
func (r *Runner) nprocWorks() bool { return r.root || r.userns }

// Capabilities reports the isolation layers in force.
func (r *Runner) Capabilities() Capabilities {
	c := r.caps
	c.Layers = append([]LayerState(nil), c.Layers...)
	c.Namespaces = append([]string(nil), c.Namespaces...)
	c.Rlimits = append([]string(nil), c.Rlimits...)
	return c
}

// Close removes this Runner's scratch directory and cgroups, and the
// scratch root when that leaves it empty. Boxes still open lose their
// files; close them first. Close is idempotent.
func (r *Runner) Close() error {
	var err error
	r.closeOnce.Do(func() {
		r.cg.remove()
		var under []string
		for _, m := range mountPoints() {
			if within(r.instDir, m) {
				under = append(under, m)
			}
		}
		for _, m := range under {
			_ = unix.Unmount(m, unix.MNT_DETACH)
		}
		err = os.RemoveAll(r.instDir)
		if err == nil {
			removeRootIfEmpty(r.cfg.ScratchRoot, r.log)
		}
		if r.uidSlot != nil {
			r.uidSlot.Close() // frees the uid range for another Runner
		}
		r.init.close()
	})
	if err != nil {
		return fmt.Errorf("sandboxes: close: %w", err)
	}
	return nil
}

// layerFailure is a probe result showing a layer does not work here.
type layerFailure struct {
	layer  Layer
	detail string
}

func (e *layerFailure) Error() string { return fmt.Sprintf("layer %s: %s", e.layer, e.detail) }

// errStart marks a failure to start the trampoline (clone refused...).
var errStart = errors.New("sandbox start")

// probe runs the trampoline once in a throwaway box and checks what it
// reports.
func (r *Runner) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	box, err := r.Open(ctx)
	if err != nil {
		return err
	}
	defer box.Close()
	res, err := box.run(ctx, Spec{Limits: Limits{Wall: 10 * time.Second, Memory: NoLimit}}, true)
	if err != nil {
		var te *trampolineError
		if errors.As(err, &te) {
			if l, detail, ok := failedLayer(te.msg); ok {
				return &layerFailure{l, detail}
			}
		}
		return err
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, probeMagic+" ") {
		return fmt.Errorf("%w (probe printed %q, stderr %q)", ErrNoInit, clip(out, 200), clip(string(res.Stderr), 200))
	}
	f := map[string]string{}
	for _, kv := range strings.Fields(out)[1:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	if r.root && f["uid"] != strconv.FormatUint(uint64(box.uid), 10) {
		return &layerFailure{LayerUID, fmt.Sprintf("probe runs as uid %s, want %d", f["uid"], box.uid)}
	}
	if r.cloneflags&syscall.CLONE_NEWPID != 0 && f["ppid"] != "1" {
		return &layerFailure{LayerNamespaces, fmt.Sprintf("stage 1 is pid %s, want 1 (pid namespace)", f["ppid"])}
	}
	if r.cloneflags&syscall.CLONE_NEWNET != 0 && f["ifaces"] != "1" {
		return &layerFailure{LayerNamespaces, fmt.Sprintf("%s network interfaces visible, want only lo", f["ifaces"])}
	}
	if f["nnp"] != "1" {
		return fmt.Errorf("probe: no_new_privs not set (%q)", f["nnp"])
	}
	if r.seccomp && (f["seccomp"] != "2" || f["inet"] != "operation_not_permitted") {
		return &layerFailure{LayerSeccomp, fmt.Sprintf("filter not in force (seccomp mode %s, AF_INET socket: %s)", f["seccomp"], f["inet"])}
	}
	if r.landlockABI > 0 && f["landlock"] != "1" {
		return &layerFailure{LayerLandlock, "domain not in force (/ is listable)"}
	}
	if r.useView && f["view"] != "hides-host" {
		return &layerFailure{LayerFilesystem, "view leaks the host: " + f["view"]}
	}
	if r.cg != nil && !strings.Contains(f["cgroup"], cgroupParent+"/"+r.instance+"/run-") {
		return &layerFailure{LayerCgroups, fmt.Sprintf("run not in its cgroup (%s)", f["cgroup"])}
	}
	if f["wd"] != box.dir {
		return fmt.Errorf("probe: working dir %q, want %q", f["wd"], box.dir)
	}
	return nil
}

// Box is one scratch directory with an exclusive sandbox identity. Runs in a
// box share its files; run one command at a time. While it runs, the box's
// files may be written, read and removed (a long-lived process that takes
// work through files); Close waits for the run to end. Close removes it.
type Box struct {
	r       *Runner
	dir     string
	uid     uint32
	root    *os.Root
	mounted bool

	mu      sync.Mutex
	closed  bool
	running bool       // a Run is in progress
	idle    *sync.Cond // on mu: signalled when a Run ends
}

// ErrBusy: a Run was asked of a box while another Run was in progress.
var ErrBusy = errors.New("sandbox: a run is already in progress in this box")

// Open creates a fresh box, waiting for a free identity if MaxBoxes are
// open.
func (r *Runner) Open(ctx context.Context) (*Box, error) { return r.OpenSized(ctx, 0, 0) }

// OpenSized is Open with a scratch of size bytes and inodes inodes (0:
// Config.ScratchSize and ScratchInodes), for work that needs more room
// than most (building PyTorch extensions). The tmpfs holds only what is
// written, so a large cap costs nothing until used.
func (r *Runner) OpenSized(ctx context.Context, size, inodes int64) (*Box, error) {
	var uid uint32
	select {
	case uid = <-r.uids:
	case <-ctx.Done():
		return nil, fmt.Errorf("open box: %w", context.Cause(ctx))
	}
	if size == 0 {
		size = r.cfg.ScratchSize
	}
	if inodes == 0 {
		inodes = r.cfg.ScratchInodes
	}
	b, err := r.newBox(uid, size, inodes)
	if err != nil {
		r.uids <- uid
		return nil, fmt.Errorf("open box: %w", err)
	}
	return b, nil
}

func (r *Runner) newBox(uid uint32, size, inodes int64) (*Box, error) {
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.instDir, "box-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	b := &Box{r: r, dir: dir, uid: uid}
	b.idle = sync.NewCond(&b.mu)
	if r.scratchTmpfs {
		opts := fmt.Sprintf("mode=0700,uid=%d,gid=%d", uid, uid)
		if size != NoLimit {
			opts += fmt.Sprintf(",size=%d", size)
		}
		if inodes != NoLimit {
			opts += fmt.Sprintf(",nr_inodes=%d", inodes)
		}
		if err := unix.Mount("kiln-box", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			_ = os.Remove(dir)
			return nil, fmt.Errorf("mount scratch: %w", err)
		}
		b.mounted = true
	} else if r.root {
		if err := os.Chown(dir, int(uid), int(uid)); err != nil {
			_ = os.Remove(dir)
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.removeDir()
		return nil, err
	}
	b.root = root
	return b, nil
}

func (b *Box) removeDir() error {
	if b.mounted {
		if err := unix.Unmount(b.dir, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount scratch: %w", err)
		}
		b.mounted = false
	}
	return os.RemoveAll(b.dir)
}

// UID is the uid (and gid) the box's runs have.
func (b *Box) UID() uint32 { return b.uid }

// Dir is the box's scratch directory (the working directory of its runs).
func (b *Box) Dir() string { return b.dir }

// Close removes the scratch directory and frees the identity. It is
// idempotent.
func (b *Box) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.running {
		b.idle.Wait()
	}
	if b.closed {
		return nil
	}
	b.closed = true
	_ = b.root.Close()
	err := b.removeDir()
	b.r.uids <- b.uid
	if err != nil {
		return fmt.Errorf("close box: %w", err)
	}
	return nil
}

// WriteFile creates name (a plain name or relative path inside the box,
// parents must exist) with data, replacing whatever was there without
// following links, and gives it to the box's uid.
func (b *Box) WriteFile(name string, data []byte, perm os.FileMode) error {
	if err := b.lockName(name); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if err := b.root.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write %s: %w", name, err)
	}
	f, err := b.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, werr := f.Write(data)
	if werr == nil && b.r.root {
		werr = f.Chown(int(b.uid), int(b.uid))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", name, werr)
	}
	return nil
}

// RemoveAll removes name (a file, or a folder and what it holds) from the
// box, without following links; a name that does not exist is no error.
func (b *Box) RemoveAll(name string) error {
	if err := b.lockName(name); err != nil {
		return err
	}
	defer b.mu.Unlock()
	if err := b.root.RemoveAll(name); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return nil
}

// ReadFile reads name from the box, refusing symlinks and non-regular files
// (ErrNotRegular) and files over max bytes (ErrTooLarge).
func (b *Box) ReadFile(name string, max int64) ([]byte, error) {
	if err := b.lockName(name); err != nil {
		return nil, err
	}
	defer b.mu.Unlock()
	fi, err := b.root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w (%s)", name, ErrNotRegular, fi.Mode().Type())
	}
	f, err := b.root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: %w", name, ErrNotRegular)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("read %s: %w (%d > %d bytes)", name, ErrTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: %w", name, ErrTooLarge)
	}
	return data, nil
}

// lockName locks b for a file operation on name, or says why not (the box
// is closed: ErrClosed; name is not inside it: ErrBadName) and leaves it
// unlocked.
func (b *Box) lockName(name string) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	if err := checkName(name); err != nil {
		b.mu.Unlock()
		return err
	}
	return nil
}

func checkName(name string) error {
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// mergeEnv is base with extra's entries replacing those of the same key
// (a program reading a doubled key may see either one) and added after.
func mergeEnv(base, extra []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, b := range out {
			if bk, _, _ := strings.Cut(b, "="); bk == k {
				out[i], replaced = kv, true
				break
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

// Run runs spec in the box and waits for the whole tree to end. A failed or
// killed command is a Result, not an error; errors are ErrExec (the command
// could not start), ErrClosed, the context's error (Result.Killed is then
// KillCanceled) and internal faults.
func (b *Box) Run(ctx context.Context, spec Spec) (Result, error) {
	if len(spec.Argv) == 0 {
		return Result{}, errors.New("sandbox run: empty argv")
	}
	for _, p := range spec.ReadOnly {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return Result{}, fmt.Errorf("sandbox run: Spec.ReadOnly %q: not a clean absolute path", p)
		}
		if _, err := os.Lstat(p); err != nil {
			return Result{}, fmt.Errorf("sandbox run: Spec.ReadOnly: %w", err)
		}
		if within(b.dir, p) || within(p, b.dir) {
			return Result{}, fmt.Errorf("sandbox run: Spec.ReadOnly %q overlaps the box's scratch", p)
		}
	}
	return b.run(ctx, spec, false)
}

// run is Run; probe makes stage 2 describe its surroundings instead of
// exec'ing (Runner.probe). It starts the trampoline, waits for the tree to
// end (killing it at the wall-clock limit or when ctx ends), reaps what is
// left and makes the Result.
func (b *Box) run(ctx context.Context, spec Spec, probe bool) (Result, error) {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return Result{}, ErrClosed
	case b.running:
		b.mu.Unlock()
		return Result{}, ErrBusy
	}
	b.running = true
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.running = false
		b.idle.Broadcast()
		b.mu.Unlock()
	}()
	if err := spec.Limits.validate(); err != nil {
		return Result{}, fmt.Errorf("sandbox run: %w", err)
	}
	r := b.r
	lim := spec.Limits.WithDefaults(r.cfg.Defaults)
	if spec.GPU {
		lim.Memory = NoLimit // CUDA reserves far more address space than it uses
	}
	// No environment is inherited: only these and Spec.Env.
	env := mergeEnv([]string{"PATH=" + r.cfg.Path, "HOME=" + b.dir, "TMPDIR=" + b.dir, "LC_ALL=C"}, spec.Env)
	is := b.trampolineSpec(spec, lim, env, probe)
	var rc *runCgroup
	if r.cg != nil {
		var err error
		rc, err = r.cg.create(fmt.Sprintf("run-%d", r.runSeq.Add(1)), lim)
		if err != nil {
			return Result{}, fmt.Errorf("sandbox run: %w", err)
		}
		defer rc.destroy()
		is.Cgroups = rc.procsFiles()
	}
	isJSON, err := json.Marshal(is)
	if err != nil {
		return Result{}, fmt.Errorf("sandbox run: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("sandbox run: %w", err)
	}
	defer repR.Close()
	// The lifeline's write end stays here until the run is over.
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		repW.Close()
		return Result{}, fmt.Errorf("sandbox run: %w", err)
	}
	defer lifeW.Close()

	br := newBoxRun(b, spec, lim)
	br.cmd = br.trampolineCmd(env, isJSON, repW, lifeR)

	start := time.Now()
	repCh, waitCh, err := br.start(repR, repW, lifeR)
	if err != nil {
		return Result{}, err
	}
	waitErr := br.waitOrKill(ctx, waitCh)
	wall := time.Since(start)
	br.killOnce.Do(func() {}) // no kill from now on; killReason is stable
	if errors.Is(waitErr, exec.ErrWaitDelay) {
		<-repCh
		if rc != nil {
			rc.destroy()
		}
		return Result{}, fmt.Errorf("sandbox run: output pipes stayed open after the run ended; its output may be incomplete: %w", waitErr)
	}
	if r.cloneflags&syscall.CLONE_NEWPID == 0 {
		// Belt without a pid namespace: nothing of this group may outlive
		// the run (the group id stays reserved while members live).
		_ = syscall.Kill(-br.cmd.Process.Pid, syscall.SIGKILL)
	}
	repData := <-repCh
	oomKills := 0
	if rc != nil {
		oomKills = rc.oomKills()
		rc.destroy() // kills anything left (no pid namespace), frees the cgroups
	}

	res, err := br.result(ctx, wall, waitErr, repData, oomKills)
	if err != nil {
		return res, err
	}
	r.log.Debug("sandbox run", "argv0", spec.Argv0(), "outcome", res.Outcome(), "desc", res.Describe(),
		"wall", res.Wall, "cpu", res.CPU)
	return res, nil
}

// trampolineSpec is what stage 1 is told (argv[2]) for running spec in b
// with limits lim and environment env: identities, rlimits, view, Landlock
// and seccomp. The caller adds the run's cgroups.
func (b *Box) trampolineSpec(spec Spec, lim Limits, env []string, probe bool) initSpec {
	r := b.r
	is := initSpec{
		Argv:      spec.Argv,
		Env:       env,
		Dir:       b.dir,
		Rlimits:   r.rlimits(lim),
		Subreaper: r.cloneflags&syscall.CLONE_NEWPID == 0,
		Probe:     probe,
		TargetUID: -1,
		InitUID:   -1,
		Seccomp:   r.seccomp,
	}
	if r.root {
		is.TargetUID = int(b.uid)
	}
	if r.dropInit {
		is.InitUID = int(r.initUID)
	}
	devs := append([]string(nil), viewDevices...)
	if r.useView {
		is.View, devs = r.buildView(b, spec.GPU, spec.ReadOnly)
		is.DropCaps = r.userns
	} else if spec.GPU {
		devs = append(devs, gpuDevices()...)
	}
	is.Landlock = r.viewLandlock(b, devs, r.useView, spec.GPU, spec.ReadOnly)
	return is
}

// boxRun is the state of one Box.run that its parts share: the trampoline
// command, its captured output, and why (if at all) it was killed.
type boxRun struct {
	b    *Box
	spec Spec
	lim  Limits // spec.Limits with the Runner's defaults

	cmd            *exec.Cmd
	stdout, stderr *capWriter
	// started guards kill() from the output writers before Start returns.
	started    chan struct{}
	killOnce   sync.Once
	killReason KillReason
}

// newBoxRun prepares the output capture of running spec in b: each stream
// keeps lim.Output bytes, and with Spec.KillOnOutputCap passing that cap
// kills the tree (once the command has started).
func newBoxRun(b *Box, spec Spec, lim Limits) *boxRun {
	br := &boxRun{
		b:       b,
		spec:    spec,
		lim:     lim,
		stdout:  &capWriter{max: lim.Output},
		stderr:  &capWriter{max: lim.Output},
		started: make(chan struct{}),
	}
	if spec.KillOnOutputCap {
		onCap := func() {
			go func() { <-br.started; br.kill(KillOutput) }()
		}
		br.stdout.onCap, br.stderr.onCap = onCap, onCap
	}
	return br
}

// kill kills the run's process tree, recording why; only the first call
// (and none after the run is over) has any effect.
func (br *boxRun) kill(why KillReason) {
	br.killOnce.Do(func() {
		br.killReason = why
		if br.cmd != nil && br.cmd.Process != nil {
			// Stage 1 is PID 1 of the box: its death takes the
			// namespace down. Process.Kill uses a pidfd, so it cannot
			// hit a recycled pid.
			_ = br.cmd.Process.Kill()
			_ = syscall.Kill(-br.cmd.Process.Pid, syscall.SIGKILL) // belt: the process group
		}
	})
}

// trampolineCmd is the command that starts stage 1: the trampoline
// (kiln-sandbox-init, or this executable re-executed), told isJSON, in the Runner's namespaces,
// with the report pipe's write end as fd 3 and the lifeline's read end as
// fd 4.
func (br *boxRun) trampolineCmd(env []string, isJSON []byte, repW, lifeR *os.File) *exec.Cmd {
	r := br.b.r
	cmd := &exec.Cmd{
		Path:       r.init.execPath(),
		Args:       []string{initArg0, stageInit, string(isJSON)},
		Env:        env,
		Dir:        br.b.dir,
		Stdout:     br.stdout,
		Stderr:     br.stderr,
		ExtraFiles: []*os.File{repW, lifeR},
		// The pipes' only writers live in the box and die with stage 1,
		// so EOF follows the exit at once; the delay only bounds a copy
		// goroutine starved on a loaded host. When it fires, Wait closes
		// the pipes and unread output is lost, so it is an error in run
		// (a 1 s delay lost output under load: "exit 0, empty stdout").
		WaitDelay: 30 * time.Second,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: r.cloneflags,
			// A session of its own (no controlling terminal; also a process
			// group, the kill belt in kill and run).
			Setsid:    true,
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if len(br.spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(br.spec.Stdin)
	}
	if r.userns {
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		if r.useView {
			// Stage 1 keeps CAP_SYS_ADMIN (of its user namespace) across
			// exec to build the view, then drops it.
			cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		}
	}
	return cmd
}

// start starts stage 1, then (whether Start failed or not) closes this
// side's copies of the pipe ends stage 1 inherited (repW, lifeR) and closes
// started. It returns channels that deliver stage 1's report (read from
// repR) and Wait's error.
func (br *boxRun) start(repR, repW, lifeR *os.File) (<-chan []byte, <-chan error, error) {
	if err := br.cmd.Start(); err != nil {
		repW.Close()
		lifeR.Close()
		close(br.started)
		return nil, nil, fmt.Errorf("%w: %w", errStart, err)
	}
	repW.Close()
	lifeR.Close()
	close(br.started)
	repCh := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(repR, 64<<10))
		repCh <- data
	}()
	waitCh := make(chan error, 1)
	go func() { waitCh <- br.cmd.Wait() }()
	return repCh, waitCh, nil
}

// waitOrKill waits for stage 1 to end (waitCh), killing the tree first when
// the wall-clock limit passes (KillTimeout) or ctx ends (KillCanceled). It
// returns Wait's error.
func (br *boxRun) waitOrKill(ctx context.Context, waitCh <-chan error) error {
	var timer <-chan time.Time
	if br.lim.Wall > 0 {
		t := time.NewTimer(br.lim.Wall)
		defer t.Stop()
		timer = t.C
	}
	var waitErr error
	select {
	case waitErr = <-waitCh:
	case <-timer:
		br.kill(KillTimeout)
		waitErr = <-waitCh
	case <-ctx.Done():
		br.kill(KillCanceled)
		waitErr = <-waitCh
	}
	return waitErr
}

// result makes the Result of the finished run from its captured output,
// stage 1's resource usage, stage 1's report (repData, from fd 3), the kill
// reason and the cgroup's OOM kills; it names a kill by a limit the run hit
// itself. A failure of the trampoline, stage 1 dying without a report, and
// a canceled run are errors (returned with the Result).
func (br *boxRun) result(ctx context.Context, wall time.Duration, waitErr error, repData []byte, oomKills int) (Result, error) {
	res := Result{
		ExitCode:        -1,
		Wall:            wall,
		Stdout:          br.stdout.buf.Bytes(),
		Stderr:          br.stderr.buf.Bytes(),
		StdoutTruncated: br.stdout.truncated,
		StderrTruncated: br.stderr.truncated,
	}
	res.Killed = br.killReason
	if ps := br.cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
			res.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			res.MaxRSS = ru.Maxrss * 1024
		}
	}
	var rep initReport
	haveReport := len(repData) > 0 && json.Unmarshal(repData, &rep) == nil
	if haveReport && res.Killed == KillTimeout {
		res.Killed = KillNone // the target finished as the clock ran out
	}
	if haveReport {
		switch {
		case rep.InitError != "":
			return res, &trampolineError{"sandbox init: ", rep.InitError}
		case rep.ExecError != "":
			if _, _, isLayer := failedLayer(rep.ExecError); isLayer {
				return res, &trampolineError{"sandbox init: ", rep.ExecError}
			}
			return res, fmt.Errorf("%w: %s", ErrExec, rep.ExecError)
		case rep.Exited:
			res.ExitCode = rep.Code
		default:
			res.Signal = syscall.Signal(rep.Signal)
			res.CoreDumped = rep.Core
		}
	}
	if res.Killed == KillNone {
		switch {
		case !haveReport:
			// Stage 1 died without reporting and we did not kill it.
			var ee *exec.ExitError
			if waitErr != nil && !errors.As(waitErr, &ee) && !errors.Is(waitErr, exec.ErrWaitDelay) {
				return res, fmt.Errorf("sandbox wait: %w", waitErr)
			}
			stderrTail := clip(string(res.Stderr), 300)
			return res, fmt.Errorf("sandbox init died without a report (%v): %s", waitErr, stderrTail)
		case oomKills > 0 && res.Signal == syscall.SIGKILL:
			res.Killed = KillMemory
		case res.Signal == syscall.SIGXCPU,
			res.Signal == syscall.SIGKILL && br.lim.CPU > 0 && res.CPU >= br.lim.CPU:
			res.Killed = KillCPU
		case res.Signal == syscall.SIGXFSZ:
			res.Killed = KillFileSize
		}
	}
	if res.Killed == KillCanceled {
		return res, fmt.Errorf("sandbox run: %w", context.Cause(ctx))
	}
	return res, nil
}

// trampolineError is a failure of the trampoline itself (not of the
// target): a layer that could not be applied, a setup fault.
type trampolineError struct {
	prefix, msg string
}

func (e *trampolineError) Error() string { return e.prefix + e.msg }

// Argv0 is the command name, for logs.
func (s Spec) Argv0() string {
	if len(s.Argv) == 0 {
		return ""
	}
	return s.Argv[0]
}

// rlimits turns limits into setrlimit calls.
func (r *Runner) rlimits(l Limits) []rlimit {
	out := []rlimit{{Resource: unix.RLIMIT_CORE}}
	add := func(res int, v int64) {
		if v > 0 {
			out = append(out, rlimit{Resource: res, Cur: uint64(v), Max: uint64(v)})
		}
	}
	if l.CPU > 0 {
		secs := uint64((l.CPU + time.Second - 1) / time.Second)
		out = append(out, rlimit{Resource: unix.RLIMIT_CPU, Cur: secs, Max: secs + 1})
	}
	add(unix.RLIMIT_AS, l.Memory)
	add(unix.RLIMIT_FSIZE, l.FileSize)
	add(unix.RLIMIT_NOFILE, l.OpenFiles)
	if r.nprocWorks() {
		add(unix.RLIMIT_NPROC, l.Procs)
	}
	return out
}

// capWriter keeps the first max bytes and counts the rest.
type capWriter struct {
	buf       bytes.Buffer
	max       int64
	truncated bool
	onCap     func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - int64(w.buf.Len())
	if w.max < 0 { // NoLimit
		room = int64(len(p))
	}
	if int64(len(p)) > room {
		if room > 0 {
			w.buf.Write(p[:room])
		}
		if !w.truncated {
			w.truncated = true
			if w.onCap != nil {
				w.onCap()
			}
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

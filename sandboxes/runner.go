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
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Capabilities says which isolation layers a Runner applies.
type Capabilities struct {
	// Backend names the mechanism ("process": re-exec trampoline).
	Backend string `json:"backend"`
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
	// (complete) or "subreaper+pgid" (a setsid process that outlives a
	// timeout escapes).
	TreeKill string `json:"tree_kill"`
}

// String is a one-line summary for logs.
func (c Capabilities) String() string {
	return fmt.Sprintf("backend=%s ns=%s uid_drop=%v rlimits=%s nnp=%v network=%v tree_kill=%s",
		c.Backend, strings.Join(c.Namespaces, ","), c.UIDDrop, strings.Join(c.Rlimits, ","),
		c.NoNewPrivs, c.Network, c.TreeKill)
}

// Runner opens boxes and runs commands in them. It is safe for concurrent
// use.
type Runner struct {
	cfg  Config
	log  *slog.Logger
	root bool
	// cloneflags and userns shape stage 1 (SysProcAttr) of every run.
	cloneflags uintptr
	userns     bool
	uids       chan uint32 // free box identities
	caps       Capabilities
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
}

// New checks cfg, prepares the scratch root and probes which isolation
// works here. The probe runs the trampoline, so MaybeRunInit must be
// wired (ErrNoInit otherwise).
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &Runner{cfg: cfg, log: cfg.Logger, root: os.Geteuid() == 0}
	if err := os.MkdirAll(cfg.ScratchRoot, 0o711); err != nil {
		return nil, fmt.Errorf("sandboxes: scratch root: %w", err)
	}
	if r.root {
		if err := os.Chmod(cfg.ScratchRoot, 0o711); err != nil {
			return nil, fmt.Errorf("sandboxes: scratch root: %w", err)
		}
	}
	r.uids = make(chan uint32, cfg.MaxBoxes)
	for i := 0; i < cfg.MaxBoxes; i++ {
		if r.root {
			r.uids <- cfg.UIDBase + uint32(i)
		} else {
			r.uids <- uint32(os.Getuid())
		}
	}
	ns := []string{"pid", "net", "ipc", "uts", "mount"}
	r.cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC |
		syscall.CLONE_NEWUTS | syscall.CLONE_NEWNS
	if !r.root {
		r.cloneflags |= syscall.CLONE_NEWUSER
		r.userns = true
		ns = append([]string{"user"}, ns...)
	}
	if cfg.DisableNamespaces {
		r.cloneflags, r.userns, ns = 0, false, nil
	}
	probeErr := r.probe()
	if probeErr != nil && !errors.Is(probeErr, ErrNoInit) && cfg.AllowWeakIsolation {
		r.log.Warn("sandbox namespaces unavailable, running without them", "err", probeErr)
		r.cloneflags, r.userns, ns = 0, false, nil
		probeErr = r.probe()
	}
	if probeErr != nil {
		return nil, fmt.Errorf("sandboxes: probe: %w", probeErr)
	}
	r.caps = Capabilities{
		Backend:    "process",
		Namespaces: ns,
		UIDDrop:    r.root,
		Rlimits:    []string{"cpu", "fsize", "nofile", "core"},
		NoNewPrivs: true,
		Network:    r.cloneflags&syscall.CLONE_NEWNET == 0,
		TreeKill:   "pid-namespace",
	}
	if cfg.Defaults.Memory != NoLimit {
		r.caps.Rlimits = append(r.caps.Rlimits, "as")
	}
	if r.nprocWorks() {
		r.caps.Rlimits = append(r.caps.Rlimits, "nproc")
	}
	if r.root {
		r.caps.UIDs = fmt.Sprintf("%d-%d", cfg.UIDBase, cfg.UIDBase+uint32(cfg.MaxBoxes)-1)
	}
	if r.cloneflags&syscall.CLONE_NEWPID == 0 {
		r.caps.TreeKill = "subreaper+pgid"
	}
	r.log.Debug("sandbox runner ready", "capabilities", r.caps.String())
	return r, nil
}

// nprocWorks: RLIMIT_NPROC is meaningful per box when each box has its own
// uid (root) or its own user namespace.
func (r *Runner) nprocWorks() bool { return r.root || r.userns }

// Capabilities reports the isolation layers in force.
func (r *Runner) Capabilities() Capabilities {
	c := r.caps
	c.Namespaces = append([]string(nil), c.Namespaces...)
	c.Rlimits = append([]string(nil), c.Rlimits...)
	return c
}

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
		return err
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, probeMagic+" ") {
		return fmt.Errorf("%w (probe printed %q, stderr %q)", ErrNoInit, clip(out, 200), clip(string(res.Stderr), 200))
	}
	fields := map[string]string{}
	for _, f := range strings.Fields(out)[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			fields[k] = v
		}
	}
	if r.root && fields["uid"] != strconv.FormatUint(uint64(box.uid), 10) {
		return fmt.Errorf("probe: runs as uid %s, want %d", fields["uid"], box.uid)
	}
	if r.cloneflags&syscall.CLONE_NEWPID != 0 && fields["ppid"] != "1" {
		return fmt.Errorf("probe: stage 1 is pid %s, want 1 (pid namespace)", fields["ppid"])
	}
	if r.cloneflags&syscall.CLONE_NEWNET != 0 && fields["ifaces"] != "1" {
		return fmt.Errorf("probe: %s network interfaces visible, want only lo", fields["ifaces"])
	}
	if fields["nnp"] != "1" {
		return fmt.Errorf("probe: no_new_privs not set")
	}
	if fields["wd"] != box.dir {
		return fmt.Errorf("probe: working dir %q, want %q", fields["wd"], box.dir)
	}
	return nil
}

// Box is one scratch directory with an exclusive sandbox identity. Runs in a
// box share its files; run one command at a time. Close removes it.
type Box struct {
	r    *Runner
	dir  string
	uid  uint32
	root *os.Root

	mu     sync.Mutex
	closed bool
}

// Open creates a fresh box, waiting for a free identity if MaxBoxes are
// open.
func (r *Runner) Open(ctx context.Context) (*Box, error) {
	var uid uint32
	select {
	case uid = <-r.uids:
	case <-ctx.Done():
		return nil, fmt.Errorf("open box: %w", context.Cause(ctx))
	}
	b, err := r.newBox(uid)
	if err != nil {
		r.uids <- uid
		return nil, fmt.Errorf("open box: %w", err)
	}
	return b, nil
}

func (r *Runner) newBox(uid uint32) (*Box, error) {
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.cfg.ScratchRoot, "box-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if r.root {
		if err := os.Chown(dir, int(uid), int(uid)); err != nil {
			_ = os.Remove(dir)
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &Box{r: r, dir: dir, uid: uid, root: root}, nil
}

// Dir is the box's scratch directory (the working directory of its runs).
func (b *Box) Dir() string { return b.dir }

// Close removes the scratch directory and frees the identity. It is
// idempotent.
func (b *Box) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	_ = b.root.Close()
	err := os.RemoveAll(b.dir)
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
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if err := checkName(name); err != nil {
		return err
	}
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

// ReadFile reads name from the box, refusing symlinks and non-regular files
// (ErrNotRegular) and files over max bytes (ErrTooLarge).
func (b *Box) ReadFile(name string, max int64) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
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

func checkName(name string) error {
	if name == "" || filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("%w: %q", ErrBadName, name)
	}
	return nil
}

// Run runs spec in the box and waits for the whole tree to end. A failed or
// killed command is a Result, not an error; errors are ErrExec (the command
// could not start), ErrClosed, the context's error (Result.Killed is then
// KillCanceled) and internal faults.
func (b *Box) Run(ctx context.Context, spec Spec) (Result, error) {
	if len(spec.Argv) == 0 {
		return Result{}, errors.New("sandbox run: empty argv")
	}
	return b.run(ctx, spec, false)
}

func (b *Box) run(ctx context.Context, spec Spec, probe bool) (Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return Result{}, ErrClosed
	}
	if err := spec.Limits.validate(); err != nil {
		return Result{}, fmt.Errorf("sandbox run: %w", err)
	}
	lim := spec.Limits.WithDefaults(b.r.cfg.Defaults)
	env := append([]string{"PATH=" + b.r.cfg.Path, "TMPDIR=" + b.dir, "LC_ALL=C"}, spec.Env...)
	is := initSpec{
		Argv:       spec.Argv,
		Env:        env,
		Rlimits:    b.r.rlimits(lim),
		NoNewPrivs: true,
		Subreaper:  b.r.cloneflags&syscall.CLONE_NEWPID == 0,
		Probe:      probe,
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

	var killOnce sync.Once
	var killReason KillReason
	var cmd *exec.Cmd
	kill := func(why KillReason) {
		killOnce.Do(func() {
			killReason = why
			if cmd != nil && cmd.Process != nil {
				// Stage 1 is PID 1 of the box: its death takes the
				// namespace down. Process.Kill uses a pidfd, so it cannot
				// hit a recycled pid.
				_ = cmd.Process.Kill()
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // belt: the process group
			}
		})
	}
	stdout := &capWriter{max: lim.Output}
	stderr := &capWriter{max: lim.Output}
	// started guards kill() from the output writers before Start returns.
	started := make(chan struct{})
	if spec.KillOnOutputCap {
		onCap := func() {
			go func() { <-started; kill(KillOutput) }()
		}
		stdout.onCap, stderr.onCap = onCap, onCap
	}
	cmd = &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{initArg0, stageInit, string(isJSON)},
		Env:        env,
		Dir:        b.dir,
		Stdout:     stdout,
		Stderr:     stderr,
		ExtraFiles: []*os.File{repW},
		WaitDelay:  time.Second,
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags: b.r.cloneflags,
			Setpgid:    true,
			Pdeathsig:  syscall.SIGKILL,
		},
	}
	if len(spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	if b.r.root {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: b.uid, Gid: b.uid, Groups: []uint32{}}
	}
	if b.r.userns {
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		repW.Close()
		close(started)
		return Result{}, fmt.Errorf("sandbox start: %w", err)
	}
	repW.Close()
	close(started)
	repCh := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(repR, 64<<10))
		repCh <- data
	}()
	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()

	var timer <-chan time.Time
	if lim.Wall > 0 {
		t := time.NewTimer(lim.Wall)
		defer t.Stop()
		timer = t.C
	}
	var waitErr error
	select {
	case waitErr = <-waitCh:
	case <-timer:
		kill(KillTimeout)
		waitErr = <-waitCh
	case <-ctx.Done():
		kill(KillCanceled)
		waitErr = <-waitCh
	}
	wall := time.Since(start)
	killOnce.Do(func() {}) // no kill from now on; killReason is stable
	if b.r.cloneflags&syscall.CLONE_NEWPID == 0 {
		// Belt without a pid namespace: nothing of this group may outlive
		// the run (the group id stays reserved while members live).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	repData := <-repCh

	res := Result{
		ExitCode:        -1,
		Wall:            wall,
		Stdout:          stdout.buf.Bytes(),
		Stderr:          stderr.buf.Bytes(),
		StdoutTruncated: stdout.truncated,
		StderrTruncated: stderr.truncated,
	}
	res.Killed = killReason
	if ps := cmd.ProcessState; ps != nil {
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
			return res, fmt.Errorf("sandbox init: %s", rep.InitError)
		case rep.ExecError != "":
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
		case res.Signal == syscall.SIGXCPU,
			res.Signal == syscall.SIGKILL && lim.CPU > 0 && res.CPU >= lim.CPU:
			res.Killed = KillCPU
		case res.Signal == syscall.SIGXFSZ:
			res.Killed = KillFileSize
		}
	}
	if res.Killed == KillCanceled {
		return res, fmt.Errorf("sandbox run: %w", context.Cause(ctx))
	}
	b.r.log.Debug("sandbox run", "argv0", spec.Argv0(), "outcome", res.Outcome(), "desc", res.Describe(),
		"wall", res.Wall, "cpu", res.CPU)
	return res, nil
}

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

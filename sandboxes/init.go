package sandboxes

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// initArg0 is the argv[0] marker of a trampoline process.
const initArg0 = "kiln-sandbox-init"

const (
	stageInit    = "1" // PID 1 of the box: starts stage 2, reaps, reports
	stageTarget  = "2" // sets limits and execs the target
	stageVersion = "v" // prints initProtocol (a trampoline binary's check)
)

// initProtocolRev names the behaviour of the stages beyond the shapes of
// initSpec and initReport (which initProtocol covers by itself): bump it
// when stage 1 or 2 changes what it does, so that a kiln-sandbox-init
// built before the change is not used with a kiln built after it.
const initProtocolRev = 1

// initProtocol identifies the contract between a Runner and the
// trampoline it starts: a separate kiln-sandbox-init binary is used only
// when it prints the same.
func initProtocol() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rev %d;", initProtocolRev)
	for _, t := range []reflect.Type{reflect.TypeOf(initSpec{}), reflect.TypeOf(initReport{})} {
		typeShape(&b, t, 0)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return fmt.Sprintf("kiln-sandbox-init protocol %d %x", initProtocolRev, sum[:8])
}

// typeShape writes t's structure (field names, tags, kinds, nested).
func typeShape(b *strings.Builder, t reflect.Type, depth int) {
	if depth > 8 {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		b.WriteString(t.Kind().String() + " ")
		typeShape(b, t.Elem(), depth+1)
	case reflect.Map:
		b.WriteString("map ")
		typeShape(b, t.Key(), depth+1)
		typeShape(b, t.Elem(), depth+1)
	case reflect.Struct:
		b.WriteString("{")
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(b, "%s %q ", f.Name, f.Tag)
			typeShape(b, f.Type, depth+1)
			b.WriteString(";")
		}
		b.WriteString("}")
	default:
		b.WriteString(t.Kind().String())
	}
}

// reportFD is the fd on which stage 1 writes its report (parent's
// ExtraFiles[0]); stage 2 uses the same number for its exec-error pipe.
const reportFD = 3

// probeMagic starts the stdout of a probe run.
const probeMagic = "kiln-sandbox-probe"

// initSpec is what the parent tells the trampoline (argv[2], JSON).
type initSpec struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	Rlimits []rlimit `json:"rlimits,omitempty"`
	// Subreaper is set when there is no pid namespace: stage 1 then adopts
	// orphans and kills them itself.
	Subreaper bool `json:"subreaper,omitempty"`
	// Probe makes stage 2 describe its surroundings instead of exec'ing.
	Probe bool `json:"probe,omitempty"`
	// TargetUID (= gid) is stage 2's identity, set by stage 1 when it
	// starts it; -1 keeps stage 1's.
	TargetUID int `json:"target_uid"`
	// InitUID (= gid) is what stage 1 drops to once stage 2 is started;
	// -1 keeps it.
	InitUID int `json:"init_uid"`
	// DropCaps makes stage 2 clear the capabilities it inherited from
	// stage 1 (those of a user namespace, rootless) before exec.
	DropCaps bool `json:"drop_caps,omitempty"`
	// View is mounted by stage 1 (nil: the host's filesystem); InView
	// tells stage 2 that it runs in one.
	View   *viewSpec `json:"view,omitempty"`
	InView bool      `json:"in_view,omitempty"`
	// Cgroups are cgroup.procs files stage 1 opens (before the view hides
	// them) and hands to stage 2 as CgroupFDs; stage 2 joins them.
	Cgroups   []string `json:"cgroups,omitempty"`
	CgroupFDs []int    `json:"cgroup_fds,omitempty"`
	// Landlock and Seccomp are applied by stage 2 just before exec.
	Landlock *landlockSpec `json:"landlock,omitempty"`
	Seccomp  bool          `json:"seccomp,omitempty"`
}

type rlimit struct {
	Resource int    `json:"r"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}

// initReport is stage 1's answer on fd 3.
type initReport struct {
	ExecError string `json:"exec_error,omitempty"`
	InitError string `json:"init_error,omitempty"`
	Exited    bool   `json:"exited"`
	Code      int    `json:"code"`
	Signal    int    `json:"signal,omitempty"`
	Core      bool   `json:"core,omitempty"`
}

// lifelineFD is stage 1's read end of a pipe whose write end only the
// parent holds: it reads as hung up once the parent is gone.
const lifelineFD = 4

// layerErr prefixes a trampoline error with the layer that failed, so
// that New can tell which layer the host lacks.
func layerErr(l Layer, format string, args ...any) string {
	return "layer " + string(l) + ": " + fmt.Sprintf(format, args...)
}

// failedLayer extracts the layer from a trampoline error.
func failedLayer(msg string) (Layer, string, bool) {
	rest, ok := strings.CutPrefix(msg, "layer ")
	if !ok {
		return "", msg, false
	}
	name, detail, ok := strings.Cut(rest, ": ")
	if !ok || !Layer(name).known() {
		return "", msg, false
	}
	return Layer(name), detail, true
}

// MaybeRunInit runs the sandbox trampoline when this process is one (its
// argv[0] is the trampoline marker) and then exits; otherwise it returns at
// once and does nothing. Call it first thing in main and in TestMain of any
// package whose tests run sandboxes: before flag parsing, logging setup or
// anything else with side effects.
func MaybeRunInit() {
	if len(os.Args) < 3 || os.Args[0] != initArg0 {
		return
	}
	// Thread attributes (no_new_privs, Landlock, seccomp, capabilities)
	// are set on this thread and the exec happens from it.
	runtime.LockOSThread()
	// No garbage collection in the trampoline: it lives for milliseconds,
	// and once stage 2 has set RLIMIT_AS (and RLIMIT_NPROC) a GC cycle
	// that needs a new mapping or thread crashes the runtime (seen: SIGSEGV
	// in the GC's span queue under load, the run reported as exit 2 with
	// no output).
	debug.SetGCPercent(-1)
	// One P: with the setrlimit-to-execve sequence done in raw syscalls
	// (which keep the P), no other goroutine (a background sweeper) can
	// run and allocate once RLIMIT_AS is in force: the Go runtime dies
	// with "cannot allocate memory" when a mapping fails (seen under load).
	runtime.GOMAXPROCS(1)
	var spec initSpec
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "kiln sandbox init: bad spec: %v\n", err)
		os.Exit(125)
	}
	switch os.Args[1] {
	case stageVersion:
		fmt.Println(initProtocol())
		os.Exit(0)
	case stageInit:
		os.Exit(runStageInit(spec))
	case stageTarget:
		os.Exit(runStageTarget(spec))
	}
	fmt.Fprintf(os.Stderr, "kiln sandbox init: unknown stage %q\n", os.Args[1])
	os.Exit(125)
}

// runStageInit is stage 1: PID 1 of the box (or a subreaper).
func runStageInit(spec initSpec) int {
	report := os.NewFile(reportFD, "report")
	var rep initReport
	defer func() {
		b, _ := json.Marshal(rep)
		_, _ = report.Write(b)
		_ = report.Close()
	}()
	syscall.CloseOnExec(reportFD)
	syscall.CloseOnExec(lifelineFD)
	if spec.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			rep.InitError = "set subreaper: " + err.Error()
			return 0
		}
	}
	// Cgroup files first: the view hides /sys.
	var cgfds []int
	defer func() {
		for _, fd := range cgfds {
			syscall.Close(fd)
		}
	}()
	if cgfds, rep.InitError = openCgroups(spec.Cgroups); rep.InitError != "" {
		return 0
	}
	if spec.View != nil {
		if err := setupView(spec.View, spec.Dir); err != nil {
			rep.InitError = layerErr(LayerFilesystem, "%v", err)
			return 0
		}
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		rep.InitError = "pipe: " + err.Error()
		return 0
	}
	self, files, sys, err := stage2Attr(spec, cgfds, p[1])
	if err != nil {
		rep.InitError = "marshal: " + err.Error()
		return 0
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{initArg0, stageTarget, string(self)}, &syscall.ProcAttr{
		Env:   spec.Env,
		Files: files,
		Sys:   sys,
	})
	syscall.Close(p[1])
	for _, fd := range cgfds {
		syscall.Close(fd)
	}
	cgfds = nil
	if err != nil {
		syscall.Close(p[0])
		rep.InitError = "start stage 2: " + err.Error()
		return 0
	}
	if spec.InitUID >= 0 {
		if err := dropToUID(spec.InitUID); err != nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			rep.InitError = layerErr(LayerUID, "drop trampoline to uid %d: %v", spec.InitUID, err)
			return 0
		}
	}
	// Not dumpable: a process of the box's uid (rootless) cannot open our
	// /proc files (fds, memory).
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// Stage 2 writes here only when it fails before or at execve.
	rep.ExecError = readAll(p[0])
	syscall.Close(p[0])
	waitStage2(pid, &rep)
	if spec.Subreaper {
		killDescendants()
	}
	// With a pid namespace, returning (exiting PID 1) makes the kernel
	// SIGKILL and reap every process left in it.
	return 0
}

// openCgroups opens the cgroup files for writing; it returns those it
// opened, with the init error of the first it could not ("" when none).
func openCgroups(paths []string) ([]int, string) {
	var fds []int
	for _, p := range paths {
		fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fds, layerErr(LayerCgroups, "open %s: %v", p, err)
		}
		fds = append(fds, fd)
	}
	return fds, ""
}

// stage2Attr is what stage 2 starts with: its spec (no view or cgroup
// paths left to set up; the cgroup files passed as fds after the report's),
// its files (stdio, the pipe's write end pipeW, the cgroup fds) and its
// credentials (the target uid, when set).
func stage2Attr(spec initSpec, cgfds []int, pipeW int) ([]byte, []uintptr, *syscall.SysProcAttr, error) {
	child := spec
	child.View, child.Cgroups, child.CgroupFDs = nil, nil, nil
	child.InView = spec.View != nil
	files := []uintptr{0, 1, 2, uintptr(pipeW)}
	for i, fd := range cgfds {
		files = append(files, uintptr(fd))
		child.CgroupFDs = append(child.CgroupFDs, reportFD+1+i)
	}
	self, err := json.Marshal(child)
	if err != nil {
		return nil, nil, nil, err
	}
	sys := &syscall.SysProcAttr{}
	if spec.TargetUID >= 0 {
		id := uint32(spec.TargetUID)
		sys.Credential = &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}
	}
	return self, files, sys, nil
}

// readAll reads fd to its end (at most 4 KiB): what stage 2 wrote.
func readAll(fd int) string {
	var buf [4096]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if m <= 0 || err != nil {
			break
		}
		n += m
	}
	return string(buf[:n])
}

// waitStage2 reaps children until stage 2 (pid) ends, and records how.
func waitStage2(pid int, rep *initReport) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			rep.InitError = "wait: " + err.Error()
			return
		}
		if wpid != pid {
			continue // a reaped orphan
		}
		switch {
		case ws.Exited():
			rep.Exited, rep.Code = true, ws.ExitStatus()
		case ws.Signaled():
			rep.Signal, rep.Core = int(ws.Signal()), ws.CoreDump()
		}
		return
	}
}

// dropToUID makes every thread of stage 1 run as uid (and gid) with no
// supplementary groups and no capabilities, then re-arms the parent-death
// signal (a credential change clears it) and checks the parent did not
// die in between.
func dropToUID(uid int) error {
	if err := syscall.Setgroups([]int{}); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("pdeathsig: %w", err)
	}
	fds := []unix.PollFd{{Fd: lifelineFD, Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 0); err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
		return errors.New("parent died")
	}
	return nil
}

// dropThreadCaps clears the calling thread's capability sets (rootless:
// those stage 1 kept from its user namespace to build the view). The
// target is exec'd from this thread as a non-root uid, so it starts with
// none.
func dropThreadCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// killDescendants kills and reaps every child of this process until none
// is left; orphans of killed children are re-parented to us (subreaper).
func killDescendants() {
	self := os.Getpid()
	for round := 0; round < 100; round++ {
		kids := childrenOf(self)
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		reaped := 0
		for {
			flags := syscall.WNOHANG
			if reaped < len(kids) {
				flags = 0 // the killed ones will exit: wait for them
			}
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, flags, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || pid <= 0 { // ECHILD, or nothing more ready
				break
			}
			reaped++
		}
		if len(kids) == 0 && reaped == 0 {
			return
		}
	}
}

// childrenOf lists the pids whose parent is ppid, from /proc.
func childrenOf(ppid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parens.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if p, _ := strconv.Atoi(f[1]); p == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// runStageTarget is stage 2: cgroups, no_new_privs, Landlock, rlimits,
// seccomp, then execve. It returns only on error.
func runStageTarget(spec initSpec) int {
	errPipe := os.NewFile(reportFD, "exec-error")
	fail := func(format string, args ...any) int {
		_, _ = fmt.Fprintf(errPipe, format, args...)
		return 127
	}
	syscall.CloseOnExec(reportFD)
	for _, fd := range spec.CgroupFDs {
		_, err := syscall.Write(fd, []byte("0"))
		syscall.Close(fd)
		if err != nil {
			return fail("%s", layerErr(LayerCgroups, "join: %v", err))
		}
	}
	if len(spec.Argv) == 0 && !spec.Probe {
		return fail("empty argv")
	}
	if spec.Probe {
		spec.Argv = []string{"/proc/self/exe"}
	}
	path, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		return fail("%v", err)
	}
	// Prepare every pointer before the limits: RLIMIT_AS may leave the Go
	// heap no room to grow.
	pathp, err := syscall.BytePtrFromString(path)
	if err != nil {
		return fail("path: %v", err)
	}
	argvp, err := syscall.SlicePtrFromStrings(spec.Argv)
	if err != nil {
		return fail("argv: %v", err)
	}
	envp, err := syscall.SlicePtrFromStrings(spec.Env)
	if err != nil {
		return fail("env: %v", err)
	}
	var prog unix.SockFprog
	var filter []unix.SockFilter
	if spec.Seccomp {
		filter = seccompFilter()
		if len(filter) == 0 {
			return fail("%s", layerErr(LayerSeccomp, "no filter for %s", runtime.GOARCH))
		}
		prog = unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	}
	if spec.DropCaps {
		if err := dropThreadCaps(); err != nil {
			return fail("drop capabilities: %v", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("%s", layerErr(LayerNoNewPrivs, "%v", err))
	}
	if spec.Landlock != nil {
		if err := spec.Landlock.apply(); err != nil {
			return fail("%s", layerErr(LayerLandlock, "%v", err))
		}
	}
	// From the first setrlimit to execve: raw syscalls only, no allocation
	// (see MaybeRunInit). The limits are prepared first.
	lims := make([]unix.Rlimit, len(spec.Rlimits))
	for i, l := range spec.Rlimits {
		lims[i] = unix.Rlimit{Cur: l.Cur, Max: l.Max}
	}
	for i, l := range spec.Rlimits {
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(l.Resource), uintptr(unsafe.Pointer(&lims[i])), 0, 0, 0); e != 0 {
			return fail("%s", layerErr(LayerRlimits, "setrlimit %d: %v", l.Resource, e))
		}
	}
	if spec.Seccomp {
		if _, _, e := syscall.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0, 0); e != 0 {
			return fail("%s", layerErr(LayerSeccomp, "load filter: %v", e))
		}
		runtime.KeepAlive(filter)
	}
	runtime.KeepAlive(lims)
	if spec.Probe {
		return runProbe(errPipe, spec)
	}
	_, _, errno := syscall.RawSyscall(syscall.SYS_EXECVE,
		uintptr(unsafe.Pointer(pathp)),
		uintptr(unsafe.Pointer(&argvp[0])),
		uintptr(unsafe.Pointer(&envp[0])))
	return fail("exec %s: %v", path, errno)
}

// lookPath resolves name against the PATH in env, as the shell would.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found in PATH %q", name, path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return syscall.EISDIR
	}
	return syscall.Access(p, unix.X_OK)
}

// runProbe prints what the sandbox looks like from inside, as the target
// would see it (after every layer).
func runProbe(errPipe *os.File, spec initSpec) int {
	ifaces := -1
	if b, err := os.ReadFile("/proc/net/dev"); err == nil {
		ifaces = strings.Count(string(b), "\n") - 2 // two header lines
	}
	// This thread's status: no_new_privs and seccomp were set on this
	// (locked) thread, which need not be the thread group leader that
	// /proc/self/status describes.
	status, _ := os.ReadFile("/proc/thread-self/status")
	field := func(name string) string {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return strings.TrimSpace(v)
			}
		}
		return "?"
	}
	// With Landlock, "/" is not in the rules: listing it is refused.
	landlock := 0
	if _, err := os.ReadDir("/"); errors.Is(err, syscall.EACCES) {
		landlock = 1
	}
	view := "off"
	if spec.InView {
		view = "hides-host"
		if err := viewHidesHost(); err != nil {
			view = strings.ReplaceAll(err.Error(), " ", "_")
		}
	}
	// A socket other than AF_UNIX must be refused by seccomp.
	inet := "allowed"
	if fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0); err == nil {
		syscall.Close(fd)
	} else {
		inet = err.Error()
	}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	wd, _ := os.Getwd()
	_, err := fmt.Printf("%s uid=%d gid=%d ppid=%d ifaces=%d nnp=%s seccomp=%s landlock=%d view=%s inet=%s wd=%s cgroup=%s\n",
		probeMagic, os.Getuid(), os.Getgid(), os.Getppid(), ifaces, field("NoNewPrivs"), field("Seccomp"),
		landlock, view, strings.ReplaceAll(inet, " ", "_"), wd, strings.Join(strings.Fields(string(cg)), ";"))
	if err != nil {
		_, _ = fmt.Fprintf(errPipe, "probe: %v", err)
		return 127
	}
	return 0
}

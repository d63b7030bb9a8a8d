package sandboxes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// initArg0 is the argv[0] marker of a trampoline process.
const initArg0 = "kiln-sandbox-init"

const (
	stageInit   = "1" // PID 1 of the box: starts stage 2, reaps, reports
	stageTarget = "2" // sets limits and execs the target
)

// reportFD is the fd on which stage 1 writes its report (parent's
// ExtraFiles[0]); stage 2 uses the same number for its exec-error pipe.
const reportFD = 3

// probeMagic starts the stdout of a probe run.
const probeMagic = "kiln-sandbox-probe"

// initSpec is what the parent tells the trampoline (argv[2], JSON).
type initSpec struct {
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	Rlimits    []rlimit `json:"rlimits,omitempty"`
	NoNewPrivs bool     `json:"no_new_privs,omitempty"`
	// Subreaper is set when there is no pid namespace: stage 1 then adopts
	// orphans and kills them itself.
	Subreaper bool `json:"subreaper,omitempty"`
	// Probe makes stage 2 describe its surroundings instead of exec'ing.
	Probe bool `json:"probe,omitempty"`
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

// MaybeRunInit runs the sandbox trampoline when this process is one (its
// argv[0] is the trampoline marker) and then exits; otherwise it returns at
// once and does nothing. Call it first thing in main and in TestMain of any
// package whose tests run sandboxes: before flag parsing, logging setup or
// anything else with side effects.
func MaybeRunInit() {
	if len(os.Args) < 3 || os.Args[0] != initArg0 {
		return
	}
	var spec initSpec
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "kiln sandbox init: bad spec: %v\n", err)
		os.Exit(125)
	}
	switch os.Args[1] {
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
	if spec.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			rep.InitError = "set subreaper: " + err.Error()
			return 0
		}
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		rep.InitError = "pipe: " + err.Error()
		return 0
	}
	self, err := json.Marshal(spec)
	if err != nil {
		rep.InitError = "marshal: " + err.Error()
		return 0
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{initArg0, stageTarget, string(self)}, &syscall.ProcAttr{
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2, uintptr(p[1])},
	})
	syscall.Close(p[1])
	if err != nil {
		syscall.Close(p[0])
		rep.InitError = "start stage 2: " + err.Error()
		return 0
	}
	// Stage 2 writes here only when it fails before or at execve.
	var buf [4096]byte
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(p[0], buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if m <= 0 || err != nil {
			break
		}
		n += m
	}
	syscall.Close(p[0])
	if n > 0 {
		rep.ExecError = string(buf[:n])
	}
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			rep.InitError = "wait: " + err.Error()
			break
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
		break
	}
	if spec.Subreaper {
		killDescendants()
	}
	// With a pid namespace, returning (exiting PID 1) makes the kernel
	// SIGKILL and reap every process left in it.
	return 0
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

// runStageTarget is stage 2: limits, then execve. It returns only on error.
func runStageTarget(spec initSpec) int {
	errPipe := os.NewFile(reportFD, "exec-error")
	fail := func(format string, args ...any) int {
		_, _ = fmt.Fprintf(errPipe, format, args...)
		return 127
	}
	syscall.CloseOnExec(reportFD)
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
	if spec.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fail("no_new_privs: %v", err)
		}
	}
	for _, l := range spec.Rlimits {
		if err := unix.Setrlimit(l.Resource, &unix.Rlimit{Cur: l.Cur, Max: l.Max}); err != nil {
			return fail("setrlimit %d: %v", l.Resource, err)
		}
	}
	if spec.Probe {
		return runProbe(errPipe)
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

// runProbe prints what the sandbox looks like from inside.
func runProbe(errPipe *os.File) int {
	ifaces := -1
	if b, err := os.ReadFile("/proc/net/dev"); err == nil {
		ifaces = strings.Count(string(b), "\n") - 2 // two header lines
	}
	nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	wd, _ := os.Getwd()
	_, err := fmt.Printf("%s uid=%d gid=%d ppid=%d ifaces=%d nnp=%d wd=%s\n",
		probeMagic, os.Getuid(), os.Getgid(), os.Getppid(), ifaces, nnp, wd)
	if err != nil {
		_, _ = fmt.Fprintf(errPipe, "probe: %v", err)
		return 127
	}
	return 0
}

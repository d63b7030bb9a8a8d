package sandboxes

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sentinel errors callers may test with errors.Is.
var (
	// ErrNoInit means the running binary does not call MaybeRunInit first
	// thing in main (or TestMain), so the trampoline cannot run.
	ErrNoInit = errors.New("sandbox trampoline not installed: call sandboxes.MaybeRunInit() first in main")
	// ErrExec means the target command could not be executed (not found,
	// not executable). Nothing ran.
	ErrExec = errors.New("sandbox exec failed")
	// ErrClosed means the box was closed.
	ErrClosed = errors.New("sandbox box closed")
	// ErrNotRegular means a file read back from the scratch dir is a
	// symlink, FIFO, device or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge means a file read back exceeds the caller's cap.
	ErrTooLarge = errors.New("file too large")
	// ErrBadName means a file name is not a plain relative name.
	ErrBadName = errors.New("bad file name")
)

// KillReason says why the sandbox (or the kernel, for a limit) ended a run
// early.
type KillReason string

const (
	KillNone     KillReason = ""
	KillTimeout  KillReason = "timeout"   // wall clock passed
	KillCanceled KillReason = "canceled"  // the context was canceled
	KillCPU      KillReason = "cpu"       // RLIMIT_CPU (SIGXCPU, or SIGKILL past the hard limit)
	KillFileSize KillReason = "file_size" // RLIMIT_FSIZE (SIGXFSZ)
	KillOutput   KillReason = "output"    // output cap with Spec.KillOnOutputCap
	KillMemory   KillReason = "memory"    // cgroup memory limit (Limits.RSS): OOM kill
)

// Outcome folds a Result into the cases a verifier tells apart.
type Outcome string

const (
	OutcomeExited        Outcome = "exited"         // ran to an exit() (any code)
	OutcomeCrashed       Outcome = "crashed"        // killed by a signal we did not cause
	OutcomeTimeout       Outcome = "timeout"        // wall clock
	OutcomeResourceLimit Outcome = "resource_limit" // cpu, memory, file size or output cap
	OutcomeCanceled      Outcome = "canceled"       // context canceled
)

// Result is what one run did.
type Result struct {
	// ExitCode is the target's exit status, or -1 when it did not exit
	// normally (signal, killed).
	ExitCode int
	// Signal is the signal that ended the target, 0 if it exited.
	Signal syscall.Signal
	// CoreDumped is set when the kernel reported a core dump (never written:
	// RLIMIT_CORE is 0).
	CoreDumped bool
	// Killed is why the run was ended early, KillNone if it was not.
	Killed KillReason
	// Wall is the time from start to the end of the whole tree.
	Wall time.Duration
	// CPU is user+system time of every process of the tree that was reaped
	// (the trampoline's own few milliseconds included).
	CPU time.Duration
	// MaxRSS is the largest resident set of any process of the tree, bytes.
	MaxRSS int64
	// Stdout and Stderr are the captured output, at most Limits.Output
	// bytes each; the flags say whether more was written.
	Stdout, Stderr                   []byte
	StdoutTruncated, StderrTruncated bool
}

// OK reports whether the target exited with status 0 and nothing was cut.
func (r Result) OK() bool {
	return r.Killed == KillNone && r.Signal == 0 && r.ExitCode == 0
}

// Outcome classifies the run.
func (r Result) Outcome() Outcome {
	switch r.Killed {
	case KillTimeout:
		return OutcomeTimeout
	case KillCanceled:
		return OutcomeCanceled
	case KillCPU, KillFileSize, KillOutput, KillMemory:
		return OutcomeResourceLimit
	}
	if r.Signal != 0 {
		return OutcomeCrashed
	}
	return OutcomeExited
}

// Describe is a one-line human summary ("exit status 1", "killed by signal
// SIGSEGV (segmentation fault)", "timed out after 2s").
func (r Result) Describe() string {
	switch r.Killed {
	case KillTimeout:
		return fmt.Sprintf("timed out after %s (wall clock)", r.Wall.Round(time.Millisecond))
	case KillCanceled:
		return "canceled"
	case KillCPU:
		return fmt.Sprintf("CPU time limit exceeded (%s CPU)", r.CPU.Round(time.Millisecond))
	case KillFileSize:
		return "file size limit exceeded (SIGXFSZ)"
	case KillOutput:
		return "output size limit exceeded"
	case KillMemory:
		return "memory limit exceeded (OOM kill in the run's cgroup)"
	}
	if r.Signal != 0 {
		return "killed by signal " + SignalName(r.Signal)
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// SignalName returns "SIGSEGV (segmentation fault)" style names.
func SignalName(s syscall.Signal) string {
	name := unix.SignalName(s)
	if name == "" {
		name = fmt.Sprintf("signal %d", int(s))
	}
	return fmt.Sprintf("%s (%s)", name, s.String())
}

// Package sandboxes runs untrusted commands (compilers fed model-written
// code, the programs they build) in isolated, resource-limited, killable
// process trees, each in a private scratch directory.
//
// # Usage
//
//	r, err := sandboxes.New(sandboxes.Config{ScratchRoot: "/var/lib/kiln/boxes"})
//	box, err := r.Open(ctx)          // fresh scratch dir + an exclusive sandbox uid
//	defer box.Close()
//	box.WriteFile("a.s", src, 0o644)
//	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"as", "-o", "a.o", "a.s"}})
//	obj, err := box.ReadFile("a.o", 1<<20) // never follows links
//
// Every binary that uses this package must call [MaybeRunInit] first thing
// in main (and in TestMain): see "Trampoline" below. [New] checks this with
// a probe run and fails with [ErrNoInit] otherwise.
//
// # Layers (first isolation layer; bwrap, Landlock and seccomp come later)
//
//   - Scratch: one directory per [Box] under Config.ScratchRoot (mode 0711,
//     root-owned), mode 0700, owned by the box's uid; removed by Close.
//     Files are read back through an [os.Root] after an Lstat: symlinks,
//     FIFOs and other non-regular files are refused ([ErrNotRegular]).
//   - Identity: when the daemon runs as root, each box gets an exclusive uid
//     (= gid) from the range [UIDBase, UIDBase+MaxBoxes). Exclusive uids keep
//     RLIMIT_NPROC per box (the kernel counts processes per uid, and ignores
//     the limit for root) and keep boxes out of each other's files. The uid
//     need not exist in /etc/passwd. When not root, a user namespace maps
//     the caller's uid, which also makes RLIMIT_NPROC count per box.
//   - Namespaces: new pid, net, ipc, uts and mount namespaces (plus user
//     when not root). The net namespace has only a downed loopback, so no
//     network at all. Without namespaces (Config.AllowWeakIsolation, when
//     they cannot be created, or Config.DisableNamespaces) runs still work, with the weaker tree kill
//     described below; [Runner.Capabilities] says what is active.
//   - Limits: wall clock (timer in the parent), RLIMIT_CPU (soft; hard one
//     second later), RLIMIT_AS (optional, see [Limits]), RLIMIT_NPROC,
//     RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE=0, PR_SET_NO_NEW_PRIVS, and
//     caps on captured stdout/stderr.
//   - Environment: only PATH (Config.Path), TMPDIR (the scratch dir) and
//     LC_ALL=C, plus Spec.Env.
//
// # Trampoline
//
// Go cannot set rlimits for a child between fork and exec, and calling
// prlimit(2) on the child after start races with its first fork. So the
// parent re-executes its own binary (/proc/self/exe) with a marker argv[0];
// [MaybeRunInit] recognises the marker and never returns:
//
//   - Stage 1 is started by the parent with the clone flags and the box uid
//     (SysProcAttr), so it is PID 1 of the new pid namespace. It starts
//     stage 2, reaps every process of the namespace, records the target's
//     wait status and rusage and writes a small JSON report on fd 3. When it
//     exits the kernel kills everything left in the namespace (orphans,
//     setsid double-forks): that is the tree kill. Keeping the target out of
//     PID 1 matters: a namespace's init ignores default-action signals such
//     as SIGXCPU, SIGXFSZ and SIGABRT sent from inside it.
//   - Stage 2 sets PR_SET_NO_NEW_PRIVS and the rlimits on itself and
//     execve's the target with pointers prepared before the limits were set
//     (so a small RLIMIT_AS cannot break the Go runtime). Later layers
//     (Landlock, seccomp) belong here too.
//
// On timeout or cancellation the parent SIGKILLs stage 1 (which takes the
// namespace down) and, as a belt, the process group. Without a pid
// namespace stage 1 is a child subreaper that kills and reaps leftover
// descendants when the target exits; a setsid grandchild still running when
// the wall clock kills stage 1 escapes in that mode.
//
// # Outcomes
//
// [Result] carries the exit code or signal, wall and CPU time, peak RSS,
// what the sandbox killed the tree for ([KillReason]) and the captured
// output; [Result.Outcome] folds these into the cases a verifier maps to
// failure classes (exited, crashed, timeout, resource limit, canceled).
// RLIMIT_AS makes allocations fail; what the program then does (NULL
// dereference, an error exit) is up to the program, so memory exhaustion
// is not always recognisable as such.
package sandboxes

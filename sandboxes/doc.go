// Package sandboxes runs untrusted commands (compilers fed model-written
// code, the programs they build) in isolated, resource-limited, killable
// process trees, each in a private scratch directory. Compiling untrusted
// code is treated as running it (`.incbin "/etc/passwd"` reads at compile
// time): every step gets every layer.
//
// # Usage
//
//	r, err := sandboxes.New(sandboxes.Config{ScratchRoot: "/var/lib/kiln/boxes"})
//	defer r.Close()
//	log.Print(r.Capabilities().Policy) // "strict", or "lowered(without ...)"
//	box, err := r.Open(ctx)          // fresh scratch tmpfs + an exclusive sandbox uid
//	defer box.Close()
//	box.WriteFile("a.s", src, 0o644)
//	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"as", "-o", "a.o", "a.s"}})
//	obj, err := box.ReadFile("a.o", 1<<20) // never follows links
//
// Every binary that uses this package must call [MaybeRunInit] first thing
// in main (and in TestMain): see "Trampoline" below. [New] checks this with
// a probe run and fails with [ErrNoInit] otherwise.
//
// # Layers and policy
//
// [New] measures which layers the host offers (and proves each with a
// probe run) and refuses, with a *[PolicyError], to build a Runner when a
// layer is missing, unless Config.AllowMissing names it. The Runner's
// [Capabilities] list every layer's state (active, or why not) and a
// Policy string, "strict" or "lowered(without a,b)", to record with every
// result. Package selftest attacks a Runner with hostile programs.
//
//   - uid ([LayerUID]): under a root daemon each box runs as an exclusive
//     unprivileged uid (= gid) from [UIDBase, UIDBase+MaxBoxes), and the
//     trampoline as uid UIDBase+MaxBoxes, so the target can neither signal
//     nor inspect it. Exclusive uids make RLIMIT_NPROC per box (the kernel
//     ignores it for root) and keep boxes out of each other's files. The
//     uids need not exist in /etc/passwd. Not root: a user namespace maps
//     the caller's uid; the layer is reported missing.
//   - namespaces ([LayerNamespaces]): new pid, net, ipc, uts and mount
//     namespaces (plus user when not root). The net namespace has only a
//     downed loopback: no network at all, loopback included.
//   - filesystem ([LayerFilesystem]): a minimal read-only view. Stage 1
//     mounts a small tmpfs as the new root (pivot_root), binds /usr, /bin,
//     /sbin, /lib* (recreated as links where they are links),
//     /etc/ld.so.cache, /etc/alternatives, Config.ReadOnlyPaths and the
//     run's own Spec.ReadOnly read-only, nosuid, nodev (recursively, with mount_setattr), writes a
//     passwd, group and hosts naming only the box's users, binds /dev/null,
//     zero, full, random and urandom, mounts a fresh /proc of the box's pid
//     namespace (hidepid=2: the target sees only its own processes) and
//     binds the box's scratch read-write at its host path; /tmp links to
//     the scratch (unless the scratch lies under /tmp). The root is then
//     read-only. Absent: the host's /etc/passwd and /etc/shadow, /root,
//     /home, /sys, /run, /var, /dev/shm, other boxes, the daemon's data.
//   - scratch_quota ([LayerScratch]): each box's scratch is a tmpfs mounted
//     by Open (in the daemon's namespace, so files survive between runs of
//     the box) with size= and nr_inodes= (Config.ScratchSize,
//     ScratchInodes); Close unmounts it. Root only.
//   - rlimits ([LayerRlimits]): RLIMIT_CPU (soft; hard one second later),
//     RLIMIT_AS (optional, see [Limits]), RLIMIT_NPROC, RLIMIT_FSIZE,
//     RLIMIT_NOFILE, RLIMIT_CORE=0.
//   - cgroups ([LayerCgroups]): per run, a memory cgroup (Limits.RSS, no
//     swap; an OOM kill reads as [KillMemory]) and a pids cgroup
//     (Limits.Procs), plus a v2 cgroup for cgroup.kill where v2 is
//     mounted; cgroup v1, v2 and hybrid hosts are handled. They are made
//     below Config.CgroupParent, or the daemon's own cgroup, as
//     kiln-sandboxes/<instance>/run-<n>, joined by stage 2 just before exec
//     (the trampoline is not counted), and killed and removed after the
//     run. On a pure v2 host the daemon's own cgroup usually cannot hand
//     controllers to children (v2 forbids controllers below a cgroup with
//     processes): run kiln in a delegated subtree (systemd Delegate=yes,
//     DelegateSubgroup=daemon) and set Config.CgroupParent to its top.
//   - no_new_privs ([LayerNoNewPrivs]): no setuid or file capabilities.
//   - seccomp ([LayerSeccomp]): a hand-written classic BPF filter (x86-64;
//     no cgo). The audit arch must be x86-64 and x32 syscall numbers kill
//     the process (SECCOMP_RET_KILL_PROCESS); socket and socketpair are
//     allowed for AF_UNIX only; clone with namespace flags, ptrace,
//     process_vm_*, mount and the new mount API, umount2, pivot_root,
//     chroot, unshare, setns, bpf, perf_event_open, userfaultfd, keyctl,
//     add_key, request_key, kexec*, *_module, open_by_handle_at,
//     io_uring_* (which would bypass the filter), acct, swap, reboot,
//     syslog, clock and quota administration fail with EPERM; clone3
//     fails with ENOSYS (its flags are out of the filter's reach; libc
//     falls back to clone).
//   - landlock ([LayerLandlock]): reads and execution limited to the view's
//     paths (listing / is refused), writes to the scratch and the /dev
//     nodes, no TCP bind or connect (ABI 4), no signals or abstract unix
//     sockets beyond the box (ABI 6). Landlock keeps its read limits even
//     without the mount namespace (DisableNamespaces).
//
// Also: no environment is inherited (PATH=Config.Path, HOME and TMPDIR =
// the scratch, LC_ALL=C, plus Spec.Env); each run is a new session; the
// trampoline dies with the daemon (PR_SET_PDEATHSIG, re-armed after its uid
// drop, and a lifeline pipe closes the race); wall-clock limits apart from
// CPU limits; captured output capped (Limits.Output); files read back from
// the scratch through an [os.Root] after an Lstat: links, FIFOs and other
// non-regular files are refused ([ErrNotRegular]).
//
// Why not bubblewrap: the view is built by our own trampoline, not bwrap.
// Stage 1 already is PID 1 of fresh namespaces and root there, so a dozen
// mount calls do what bwrap would, without a user namespace, without
// bwrap's trap (started by root it keeps uid 0 even with --uid), without a
// third exec per run, with our Landlock and seccomp applied in the same
// place, and without a dependency that GPU hosts lack (bwrap is not
// installed there; `kiln selftest` must run anywhere).
//
// # GPU runs
//
// Spec.GPU binds the host's /dev/nvidia*, /dev/nvidia-caps/* and /dev/dri/*
// nodes (read, write and ioctl allowed by Landlock), lets the run write
// (not create) under /proc, which the CUDA driver needs, and turns
// RLIMIT_AS off (a 4 GiB address-space limit breaks cudaMalloc); Limits.RSS
// remains. Verified on an H200 host: nvcc compiles in a box, the program
// runs with Spec.GPU under the strict policy and fails without it (see
// RESULTS.md; the test is behind the gpu build tag).
//
// # Reclaiming what a crashed daemon left
//
// Each Runner is an instance "<pid>-<start time>-<random>" owning
// ScratchRoot/<instance>/ and kiln-sandboxes/<instance>/ cgroups. New
// removes the instances whose process is gone: it unmounts their scratch
// tmpfs mounts, removes their directories, kills what is left in their
// cgroups and removes them. Live instances, of this process or another,
// are left alone, so Runners may share a scratch root. Close removes the
// Runner's own, and the scratch root too when no other instance is left in
// it (New creates it again, also when another process removes it between
// its steps). [ReclaimRoots] does the same for every scratch root under a
// parent folder (kiln keeps one per data folder under the temp folder), so
// that the roots of data folders no process uses any more do not pile up.
//
// # Trampoline
//
// Go cannot set rlimits, Landlock or seccomp for a child between fork and
// exec, and calling prlimit(2) on the child after start races with its
// first fork. So the parent starts a trampoline executable with a marker
// argv[0]: kiln-sandbox-init (built from ./kiln-sandbox-init; see
// Config.InitBinary), or else its own binary re-executed (/proc/self/exe),
// which costs far more CPU when the binary is large. [MaybeRunInit]
// recognises the marker and never returns; stage 1 starts stage 2 from
// the same executable:
//
//   - Stage 1 is started by the parent (root) with the clone flags, in a
//     session of its own, so it is PID 1 of the new pid namespace. It opens
//     the run's cgroup.procs files, builds the view, starts stage 2 as the
//     box's uid, drops itself to the trampoline uid, reaps every process of
//     the namespace, records the target's wait status and writes a small
//     JSON report on fd 3. When it exits the kernel kills everything left
//     in the namespace (orphans, setsid double-forks): that is the tree
//     kill. Keeping the target out of PID 1 matters: a namespace's init
//     ignores default-action signals such as SIGXCPU, SIGXFSZ and SIGABRT
//     sent from inside it.
//   - Stage 2, on one locked OS thread, joins the cgroups, sets
//     no_new_privs, enters the Landlock domain, sets the rlimits, loads the
//     seccomp filter and execve's the target with pointers prepared before
//     the limits were set (so a small RLIMIT_AS cannot break the Go
//     runtime). A layer that fails to apply is an error of the run, never
//     silently skipped.
//
// On timeout or cancellation the parent SIGKILLs stage 1 (which takes the
// namespace down) and, as belts, the process group and the run's cgroups.
// Without a pid namespace stage 1 is a child subreaper that kills and reaps
// leftover descendants when the target exits, and the cgroup kill catches
// setsid escapees after the run.
//
// # Outcomes
//
// [Result] carries the exit code or signal, wall and CPU time, peak RSS,
// what the sandbox killed the tree for ([KillReason]) and the captured
// output; [Result.Outcome] folds these into the cases a verifier maps to
// failure classes (exited, crashed, timeout, resource limit, canceled).
// RLIMIT_AS makes allocations fail; what the program then does (NULL
// dereference, an error exit) is up to the program, so address-space
// exhaustion is not always recognisable as such; a cgroup OOM kill is
// (KillMemory).
//
// # Metrics
//
// Config.Metrics ([Metrics], reached by lanes through [Runner.Metrics]) is
// told what the lanes using a Runner share: lookups of their content-hash
// compile caches (sandboxes/toolchain.CacheConfig.Metrics takes it) and the
// states of their GPU run slots. [GPUSlots] is a counting semaphore of GPU
// run slots that reports its idle and busy slots; [SlotGauge] reports any
// pool's idle, busy and quarantined slots. Both report from first use until
// Close, so the pools of several campaigns of a lane add up and a lane
// opened only to check a spec reports nothing.
package sandboxes

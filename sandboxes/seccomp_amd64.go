package sandboxes

import (
	"golang.org/x/sys/unix"
)

// seccompArch is the audit arch the filter admits; any other (i386 via int
// 0x80) kills the process, and so do x32 syscall numbers.
const seccompArch = unix.AUDIT_ARCH_X86_64

// x32SyscallBit marks x32 ABI syscall numbers on x86-64.
const x32SyscallBit = 0x40000000

// seccompDenied are the syscalls that fail with EPERM: debugging other
// processes, mounts and namespaces, kernel keyrings, modules, kexec, BPF,
// perf, io_uring (which would bypass this filter for socket and open
// operations), clock and host administration.
var seccompDenied = []uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
	unix.SYS_KCMP,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_CREATE_MODULE,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_SYSLOG,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_IOPL, unix.SYS_IOPERM,
	unix.SYS_VHANGUP, unix.SYS_USELIB, unix.SYS__SYSCTL, unix.SYS_NFSSERVCTL,
	unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME,
}

// cloneNSFlags are the clone(2) flags that create namespaces.
const cloneNSFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
	unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// seccompSupported reports whether this build has a filter for its arch.
func seccompSupported() bool { return true }

// seccompFilter builds the classic BPF program. Layout of struct
// seccomp_data: nr (u32) at 0, arch (u32) at 4, ip at 8, args[6] (u64,
// little-endian: low half first) at 16.
func seccompFilter() []unix.SockFilter {
	const (
		ldAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
	)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	kill := uint32(unix.SECCOMP_RET_KILL_PROCESS)
	eperm := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
	enosys := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
	}
	p := []unix.SockFilter{
		stmt(ldAbs, 4), // arch
		jump(jeq, seccompArch, 1, 0),
		stmt(ret, kill),
		stmt(ldAbs, 0), // nr
		jump(jge, x32SyscallBit, 0, 1),
		stmt(ret, kill),
	}
	for _, nr := range seccompDenied {
		p = append(p, jump(jeq, uint32(nr), 0, 1), stmt(ret, eperm))
	}
	// clone3 passes its flags in memory, out of the filter's reach: ENOSYS
	// makes libc fall back to clone, whose flags are checked below.
	p = append(p, jump(jeq, unix.SYS_CLONE3, 0, 1), stmt(ret, enosys))
	// socket and socketpair: only AF_UNIX (domain is args[0]).
	for _, nr := range []uint32{unix.SYS_SOCKET, unix.SYS_SOCKETPAIR} {
		p = append(p,
			jump(jeq, nr, 0, 4),
			stmt(ldAbs, 16),
			jump(jeq, unix.AF_UNIX, 0, 1),
			stmt(ret, allow),
			stmt(ret, eperm),
		)
	}
	// clone: no namespace flags (flags are args[0] on x86-64).
	p = append(p,
		jump(jeq, unix.SYS_CLONE, 0, 3),
		stmt(ldAbs, 16),
		jump(jset, cloneNSFlags, 0, 1),
		stmt(ret, eperm),
		stmt(ret, allow),
	)
	return p
}

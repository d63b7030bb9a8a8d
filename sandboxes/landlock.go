package sandboxes

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockSpec is the Landlock domain stage 2 enters before exec. Paths
// are as the run sees them (inside the view when there is one).
type landlockSpec struct {
	ABI int `json:"abi"`
	// ReadExec paths may be read, listed and executed.
	ReadExec []string `json:"rx,omitempty"`
	// ReadWrite paths (the scratch) allow everything but device nodes.
	ReadWrite []string `json:"rw,omitempty"`
	// Write paths may be read and written, not created in or removed
	// from (/proc for GPU runs).
	Write []string `json:"w,omitempty"`
	// Devices may be read, written and ioctl'ed (files only).
	Devices []string `json:"dev,omitempty"`
}

// landlockRulesetAttr is struct landlock_ruleset_attr up to ABI 6 (the
// kernel accepts a shorter struct than its own, and a longer one only if
// the tail is zero).
type landlockRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// landlockABI returns the host's Landlock ABI version, or 0 and why not.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		switch errno {
		case unix.ENOSYS:
			return 0, fmt.Errorf("kernel without Landlock (ENOSYS)")
		case unix.EOPNOTSUPP:
			return 0, fmt.Errorf("Landlock disabled at boot (add landlock to lsm=)")
		}
		return 0, fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
	return int(v), nil
}

// landlockFSRights are the filesystem rights ABI abi knows.
func landlockFSRights(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

// landlockFileRights are the rights that apply to a file (not a directory).
const landlockFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
	unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

// describe summarises what the domain enforces, for Capabilities.
func (s *landlockSpec) describe() string {
	d := fmt.Sprintf("ABI %d: reads limited to the view, writes to the scratch", s.ABI)
	if s.ABI >= 4 {
		d += ", TCP bind/connect denied"
	}
	if s.ABI >= 6 {
		d += ", signals and abstract sockets scoped to the box"
	}
	return d
}

// apply enters the domain on the calling thread (locked; the exec happens
// on it). It needs no_new_privs. Paths that do not exist are skipped.
func (s *landlockSpec) apply() error {
	fs := landlockFSRights(s.ABI)
	attr := landlockRulesetAttr{handledFS: fs}
	if s.ABI >= 4 {
		attr.handledNet = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if s.ABI >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	size := unsafe.Sizeof(attr)
	if s.ABI < 6 {
		size = 16
	}
	if s.ABI < 4 {
		size = 8
	}
	rfd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("create ruleset: %v", errno)
	}
	defer unix.Close(int(rfd))
	readExec := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR)
	readWrite := fs &^ (unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	write := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE)
	device := uint64(unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
	for _, group := range []struct {
		paths  []string
		rights uint64
	}{{s.ReadExec, readExec}, {s.ReadWrite, readWrite}, {s.Devices, device}, {s.Write, write}} {
		for _, p := range group.paths {
			if err := landlockAddPath(int(rfd), p, group.rights&fs); err != nil {
				return err
			}
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); errno != 0 {
		return fmt.Errorf("restrict self: %v", errno)
	}
	return nil
}

func landlockAddPath(rfd int, path string, rights uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %v", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %v", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= landlockFileRights
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rfd), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("add rule %s: %v", path, errno)
	}
	return nil
}

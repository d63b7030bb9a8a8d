//go:build !amd64

package sandboxes

import "golang.org/x/sys/unix"

// seccompSupported reports whether this build has a filter for its arch:
// only x86-64 has one so far.
func seccompSupported() bool { return false }

func seccompFilter() []unix.SockFilter { return nil }

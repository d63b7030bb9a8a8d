//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package runs

import "os"

// flock is a no-op where flock(2) is missing: there, Put and Store.GC are
// not serialised across processes and GC relies on its grace period alone.
func flock(*os.File, bool) error { return nil }

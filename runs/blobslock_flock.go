//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package runs

import (
	"errors"
	"os"
	"syscall"
)

// flock locks f (shared or exclusive), waiting as long as it takes.
func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

package sandboxes

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// lowerPriority sets the nice value of process pid (a run's stage 1, the
// leader of its session) and of its session's autogroup to n (Spec.Nice).
// Best effort: a kernel without autogroups has no /proc/PID/autogroup; one
// whose caller lacks CAP_SYS_ADMIN takes one autogroup change per tenth
// of a second host-wide (EAGAIN), so that write is retried for a second,
// off the caller's path.
func lowerPriority(pid, n int) {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, n)
	path := "/proc/" + strconv.Itoa(pid) + "/autogroup"
	if err := writeAutogroup(path, n); errors.Is(err, syscall.EAGAIN) {
		go func() {
			for i := 0; i < 40; i++ {
				time.Sleep(25 * time.Millisecond)
				if err := writeAutogroup(path, n); !errors.Is(err, syscall.EAGAIN) {
					return
				}
			}
		}()
	}
}

func writeAutogroup(path string, n int) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.Itoa(n))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

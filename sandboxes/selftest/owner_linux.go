package selftest

import (
	"os"
	"syscall"
)

// ownerOf is a file's uid (^0 when unknown).
func ownerOf(fi os.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return ^uint32(0)
}

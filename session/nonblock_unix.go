//go:build unix

package session

import (
	"io/fs"
	"syscall"
)

// openNonblock keeps reading a skill file from blocking on a FIFO swapped
// in for it after the tree was checked; the opened descriptor's type is
// checked before anything is read.
const openNonblock = syscall.O_NONBLOCK

// linkCount is the number of names (hard links) of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

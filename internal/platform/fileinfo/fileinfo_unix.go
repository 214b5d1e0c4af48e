//go:build unix

package fileinfo

import (
	"io/fs"
	"syscall"
)

// OpenNonblock keeps an open from blocking on a FIFO swapped in for a
// file that was checked to be regular; the opened descriptor's type is
// checked again before anything is read.
const OpenNonblock = syscall.O_NONBLOCK

// OpenNoFollow makes opening a symbolic link fail instead of following it.
const OpenNoFollow = syscall.O_NOFOLLOW

// LinkCount is the number of names (hard links) of the file fi describes.
func LinkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

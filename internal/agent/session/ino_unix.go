//go:build unix

package session

import (
	"os"
	"syscall"
)

// dirIno returns the inode number of dir, or 0.
func dirIno(dir string) uint64 {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

package launch

import (
	"io/fs"
	"syscall"
)

// inodeAndChange returns info's inode and change time (nanoseconds).
func inodeAndChange(info fs.FileInfo) (ino, ctime uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino, uint64(st.Ctim.Sec)*1e9 + uint64(st.Ctim.Nsec)
	}
	return 0, 0
}

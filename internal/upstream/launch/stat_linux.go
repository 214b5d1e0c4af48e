package launch

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// statAt reads the metadata of name in the open directory d (at path
// dir) without following a link, relative to d: no path is resolved
// again for each of a tree's thousands of entries.
func statAt(d *os.File, dir, name string) (entryMeta, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return entryMeta{}, &fs.PathError{Op: "lstat", Path: dir + "/" + name, Err: err}
	}
	return entryMeta{size: uint64(st.Size), mode: uint64(st.Mode), mtime: uint64(st.Mtim.Sec)*1e9 + uint64(st.Mtim.Nsec),
		ino: st.Ino, ctime: uint64(st.Ctim.Sec)*1e9 + uint64(st.Ctim.Nsec)}, nil
}

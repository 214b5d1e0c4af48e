package discover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/skillgate/skillgate/internal/model/skill"
)

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// dirReader reads the directories of one walk.
type dirReader struct {
	// rootfd, when hasRoot, is the walk's root opened as a path: the
	// directories and files under it are opened and stat'ed relative to it,
	// which saves resolving the root's own path again on each of the tens
	// of thousands of calls (and the root cannot be swapped mid-walk).
	rootfd  int
	root    string
	hasRoot bool
}

// newDirReader returns the dirReader for a walk of root, a clean absolute
// path; close releases it.
func newDirReader(root string) dirReader {
	var r dirReader
	fd, err := openRoot(root)
	if err != nil {
		return r // the walk reports the root's problem when it reads it
	}
	r.rootfd, r.root, r.hasRoot = fd, root, true
	return r
}

// close releases the root.
func (r dirReader) close() {
	if r.hasRoot {
		unix.Close(r.rootfd)
	}
}

// at returns the directory file descriptor and path to reach the absolute
// path p: relative to the root when p is under it.
func (r dirReader) at(p string) (int, string) {
	if r.hasRoot && strings.HasPrefix(p, r.root) {
		switch rest := p[len(r.root):]; {
		case rest == "":
			return r.rootfd, "."
		case rest[0] == '/':
			return r.rootfd, rest[1:]
		case strings.HasSuffix(r.root, "/"): // the root is "/"
			return r.rootfd, rest
		}
	}
	return unix.AT_FDCWD, p
}

// readDirCached lists a directory with raw getdents64 and, when stat says
// so, lstats its regular files relative to the open directory. Compared with
// os.ReadDir plus DirEntry.Info this saves a poller registration per
// directory and a full path resolution per file, which is most of the cost
// of a no-change rescan. The directory is opened with O_NOFOLLOW: a link
// swapped in for a directory is refused, never followed.
//
// It reuses cached when the directory's modification time still matches it
// (one stat instead of an open, two getdents and a close), and returns the
// listing to cache now, or nil when the directory changed too recently to
// be cached safely, and the directory's times.
func (r dirReader) readDirCached(path string, stat func([]entry) bool, cached *listing, now int64) ([]entry, *listing, dirStat, error) {
	dirfd, rel := r.at(path)
	if cached != nil {
		var st unix.Stat_t
		if err := fstatat(dirfd, rel, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil &&
			st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Mtim.Nano() == cached.mtime {
			ds := dirStat{mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
			es := decodeEntries(cached.entries)
			if stat(es) {
				prefix := rel + "/"
				if rel == "." {
					prefix = ""
				}
				statFiles(es, func(name string, st *unix.Stat_t) error {
					return fstatat(dirfd, prefix+name, st, unix.AT_SYMLINK_NOFOLLOW)
				})
			}
			return es, cached, ds, nil
		}
	}
	fd, err := openat(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, dirStat{}, err
	}
	defer unix.Close(fd)
	var dst unix.Stat_t
	if err := fstat(fd, &dst); err != nil {
		return nil, nil, dirStat{}, err
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var es []entry
	for {
		n, err := getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, dirStat{}, err
		}
		if n <= 0 {
			break
		}
		for off := 0; off < n; {
			// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
			if off+19 > n {
				return nil, nil, dirStat{}, fmt.Errorf("malformed directory entry in %s", path)
			}
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return nil, nil, dirStat{}, fmt.Errorf("malformed directory entry in %s", path)
			}
			typ := buf[off+18]
			nameBytes := buf[off+19 : off+reclen]
			for i, c := range nameBytes {
				if c == 0 {
					nameBytes = nameBytes[:i]
					break
				}
			}
			off += reclen
			name := string(nameBytes)
			if name == "." || name == ".." {
				continue
			}
			e := entry{name: name}
			switch typ {
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_REG:
				e.typ = 0
			case unix.DT_LNK:
				e.typ = fs.ModeSymlink
			case unix.DT_UNKNOWN:
				var st unix.Stat_t
				if err := fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					e.typ, e.statErr = fs.ModeIrregular, err
				} else {
					e.typ = modeOf(st.Mode)
				}
			default:
				e.typ = fs.ModeIrregular
			}
			es = append(es, e)
		}
	}
	sortEntries(es)
	if stat(es) {
		statFiles(es, func(name string, st *unix.Stat_t) error {
			return fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		})
	}
	var l *listing
	if m := dst.Mtim.Nano(); now == 0 || m < now-racyWindow {
		l = &listing{mtime: m, entries: encodeEntries(es)}
	}
	return es, l, dirStat{mtime: dst.Mtim.Nano(), ctime: dst.Ctim.Nano()}, nil
}

// statFiles fills size, modification and status change times of the
// regular files.
func statFiles(es []entry, lstat func(string, *unix.Stat_t) error) {
	for i := range es {
		e := &es[i]
		if !e.isRegular() || skill.Skip(e.name) {
			continue
		}
		var st unix.Stat_t
		if err := lstat(e.name, &st); err != nil {
			e.statErr = err
			continue
		}
		if t := modeOf(st.Mode); t != 0 {
			e.typ = t // replaced since the listing
			continue
		}
		e.size = st.Size
		e.mtime = st.Mtim.Nano()
		e.ctime = st.Ctim.Nano()
	}
}

func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFREG:
		return 0
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

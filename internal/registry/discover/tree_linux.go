package discover

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// beneathFS opens files with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS):
// one system call per file, refused by the kernel if any component is a
// link or leads out of the directory.
type beneathFS struct {
	dirfd int
	dir   string
	// prefix, when not empty, is the tree's path below dirfd (ending in
	// "/"): dirfd is then a shared root the tree does not own.
	prefix string
}

func openTree(dir string) (TreeFS, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &beneathFS{dirfd: fd, dir: dir}, nil
}

func (t *beneathFS) openat2(name string) (int, error) {
	how := unix.OpenHow{
		// O_NONBLOCK: a FIFO swapped in after the walk neither blocks the
		// open nor a read (it reads as EAGAIN); regular files ignore it.
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	return openat2(t.dirfd, t.prefix+name, &how)
}

// Open implements fs.FS.
func (t *beneathFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	fd, err := t.openat2(name)
	if errors.Is(err, unix.ENOSYS) {
		// Kernels before 5.6 lack openat2: os.Root keeps the read inside.
		r, rerr := os.OpenRoot(t.dir)
		if rerr != nil {
			return nil, rerr
		}
		defer r.Close()
		return r.Open(name)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &rawFile{fd: fd, name: name}, nil
}

// rawFile is an open file of a beneathFS read with plain system calls.
// Unlike an *os.File it costs no fcntl, poller registration or cleanup
// per file, which adds up over the tens of thousands of small files a
// scan hashes.
type rawFile struct {
	fd   int
	name string
}

// Read implements io.Reader.
func (f *rawFile) Read(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := read(f.fd, p)
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Stat implements fs.File.
func (f *rawFile) Stat() (fs.FileInfo, error) {
	if f.fd < 0 {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: fs.ErrClosed}
	}
	var st unix.Stat_t
	if err := fstat(f.fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: err}
	}
	return &rawInfo{name: path.Base(f.name), st: st}, nil
}

// Close implements io.Closer.
func (f *rawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	err := unix.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// rawInfo is the fs.FileInfo of a rawFile.
type rawInfo struct {
	name string
	st   unix.Stat_t
}

func (i *rawInfo) Name() string       { return i.name }
func (i *rawInfo) Size() int64        { return i.st.Size }
func (i *rawInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *rawInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *rawInfo) Sys() any           { return &i.st }

func (i *rawInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Close implements io.Closer.
func (t *beneathFS) Close() error {
	if t.prefix != "" {
		return nil
	}
	return unix.Close(t.dirfd)
}

// treesImpl holds the root of a [Trees], opened as a path.
type treesImpl struct {
	fd int // -1 when the root could not be opened
}

func openTrees(root string) treesImpl {
	fd, err := openRoot(root)
	if err != nil {
		return treesImpl{fd: -1}
	}
	return treesImpl{fd: fd}
}

// tree returns the tree at rel below the root. Opening "rel/name" with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS from the root resolves exactly the
// directories of rel and then name, none of them a link: the same files,
// and the same refusals, as opening name from the tree itself.
func (t treesImpl) tree(dir, rel string) (TreeFS, bool) {
	if t.fd < 0 {
		return nil, false
	}
	return &beneathFS{dirfd: t.fd, dir: dir, prefix: rel + "/"}, true
}

func (t treesImpl) close() error {
	if t.fd < 0 {
		return nil
	}
	return unix.Close(t.fd)
}

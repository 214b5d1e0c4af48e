package discover

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// beneathFS opens files with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS):
// one system call per file, refused by the kernel if any component is a
// link or leads out of the directory.
type beneathFS struct {
	dirfd int
	dir   string
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
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(t.dirfd, name, &how)
		if err == unix.EINTR {
			continue
		}
		return fd, err
	}
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
	return os.NewFile(uintptr(fd), t.dir+"/"+name), nil
}

// Close implements io.Closer.
func (t *beneathFS) Close() error { return unix.Close(t.dirfd) }

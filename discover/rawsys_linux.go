package discover

// A walk and a parse make a few system calls per directory and per file,
// each a few microseconds on a local file system with the data in the page
// cache. Go's syscall.Syscall tells the scheduler before and after each
// (entersyscall/exitsyscall), so that a goroutine blocked in the kernel
// does not hold its thread's P; the monitor thread then wakes every 20 µs
// to hand such Ps over, and on a two-core machine that bookkeeping costs
// more than the calls. On the file systems listed in localFS the calls do
// not block for long, so they are made raw. Anywhere else (network, FUSE)
// they go through the scheduler as usual.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysCalls makes the walk's and the parse's system calls, raw or through
// the scheduler, retried when a signal interrupts them (EINTR).
type sysCalls struct{ raw bool }

// localFS lists the local file systems whose calls are made raw.
func localFS(fsType int64) bool {
	switch fsType {
	case unix.EXT4_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}

func (s sysCalls) openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	for {
		var n int
		var err error
		if s.raw {
			n, err = rawOpenat(dirfd, path, flags, mode)
		} else {
			n, err = unix.Openat(dirfd, path, flags, mode)
		}
		if err != unix.EINTR {
			return n, err
		}
	}
}

func (s sysCalls) openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	for {
		var n int
		var err error
		if s.raw {
			n, err = rawOpenat2(dirfd, path, how)
		} else {
			n, err = unix.Openat2(dirfd, path, how)
		}
		if err != unix.EINTR {
			return n, err
		}
	}
}

// close is not retried: Linux releases the descriptor even when close
// reports EINTR.
func (s sysCalls) close(fd int) error {
	if s.raw {
		return rawClose(fd)
	}
	return unix.Close(fd)
}

func (s sysCalls) fstat(fd int, st *unix.Stat_t) error {
	for {
		var err error
		if s.raw {
			err = rawFstat(fd, st)
		} else {
			err = unix.Fstat(fd, st)
		}
		if err != unix.EINTR {
			return err
		}
	}
}

func (s sysCalls) fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	for {
		var err error
		if s.raw {
			err = rawFstatat(dirfd, path, st, flags)
		} else {
			err = unix.Fstatat(dirfd, path, st, flags)
		}
		if err != unix.EINTR {
			return err
		}
	}
}

func (s sysCalls) getdents(fd int, buf []byte) (int, error) {
	for {
		var n int
		var err error
		if s.raw {
			n, err = rawGetdents(fd, buf)
		} else {
			n, err = unix.Getdents(fd, buf)
		}
		if err != unix.EINTR {
			return n, err
		}
	}
}

func (s sysCalls) read(fd int, buf []byte) (int, error) {
	for {
		var n int
		var err error
		if s.raw {
			n, err = rawRead(fd, buf)
		} else {
			n, err = unix.Read(fd, buf)
		}
		if err != unix.EINTR {
			return n, err
		}
	}
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func rawOpenat(dirfd int, path string, flags int, mode uint32) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	r, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(flags), uintptr(mode), 0, 0)
	return int(r), errnoErr(e)
}

func rawOpenat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	r, _, e := unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	return int(r), errnoErr(e)
}

func rawClose(fd int) error {
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoErr(e)
}

func rawFstat(fd int, st *unix.Stat_t) error {
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errnoErr(e)
}

func rawFstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	return errnoErr(e)
}

func rawGetdents(fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, unix.EINVAL
	}
	r, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return int(r), errnoErr(e)
}

func rawRead(fd int, buf []byte) (int, error) {
	if len(buf) == 0 {
		return 0, nil
	}
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return int(r), errnoErr(e)
}

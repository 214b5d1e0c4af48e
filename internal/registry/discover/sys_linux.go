package discover

// The walk's, the parse's and the verification's system calls, retried
// when a signal interrupts them (EINTR). They are ordinary calls, which
// tell the scheduler before and after (entersyscall/exitsyscall), so that
// a goroutine blocked in the kernel, on a page-cache miss or a slow file
// system, does not hold its thread's P meanwhile; all but one, statxAt,
// below.

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// openRoot opens a walk's root as a path (no reading), without following
// a link: the directories and files under it are reached relative to it.
func openRoot(abs string) (int, error) {
	return openat(unix.AT_FDCWD, abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
}

func openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, path, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, path, how)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
	}
}

func fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	for {
		if err := unix.Fstatat(dirfd, path, st, flags); err != unix.EINTR {
			return err
		}
	}
}

func getdents(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Getdents(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

func read(fd int, buf []byte) (int, error) {
	for {
		n, err := unix.Read(fd, buf)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// statxAt fills stx for path (NUL-terminated, relative to dirfd) without
// following a link, for the verification of a record (one call per
// directory and file of a root, about 570,000 for 100,000 skills, from a
// few goroutines). It is the one call made raw, and only when rawOK says
// the root is on a local file system, and the one that passes a buffer of
// its own (the verifier's, reused) instead of a string for unix.Statx to
// copy. Both measured on the no-change rescan of bench/scan.sh's
// 100,000-skill tree (ext4, 2 cores, shared; CPU time, user + system,
// median of 5 alternated runs, November 2026):
//
//	raw, own buffer (this)        1.30 s, 1.36 s (two sessions); 161 MB peak RSS
//	ordinary call, own buffer     1.41 s, 1.47 s; 161 MB
//	unix.Statx (a copy per call)  1.60 s; 214 MB
//	before the scan cache was one record (raw, own buffer): 1.35 s, 1.40 s; 161 MB
//
// A raw call holds its P while the kernel resolves the path: a lookup
// that misses the dentry cache waits on the disk with it. On a local file
// system whose directories a walk has just read, that is rare and short.
func statxAt(dirfd int, path []byte, stx *unix.Statx_t, raw bool) unix.Errno {
	const mask = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME
	call := unix.Syscall6
	if raw {
		call = unix.RawSyscall6
	}
	for {
		_, _, errno := call(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])), unix.AT_SYMLINK_NOFOLLOW,
			mask, uintptr(unsafe.Pointer(stx)), 0)
		if errno != unix.EINTR {
			return errno
		}
	}
}

// rawOK reports whether fd is on a local file system, whose statx calls
// statxAt makes raw.
func rawOK(fd int) bool {
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil {
		return false
	}
	switch int64(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.TMPFS_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}

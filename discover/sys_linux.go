package discover

// The walk's and the parse's system calls, retried when a signal
// interrupts them (EINTR). They are ordinary calls, which tell the
// scheduler before and after (entersyscall/exitsyscall), so that a
// goroutine blocked in the kernel, on a page-cache miss or a slow file
// system, does not hold its thread's P meanwhile.

import "golang.org/x/sys/unix"

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

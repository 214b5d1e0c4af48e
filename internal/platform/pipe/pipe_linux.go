// Package pipe tunes the pipes a relay's messages flow through: a larger
// capacity, so that a result of tens of kilobytes passes in one write, and
// standard input read through the runtime's poller rather than by a
// thread parked in the kernel. Elsewhere than on Linux both do nothing.
package pipe

import (
	"os"

	"golang.org/x/sys/unix"
)

// Capacity is the capacity Grow asks for: a result of up to about
// 250 KB in one write. It stays well below Linux's limit for an
// unprivileged process (/proc/sys/fs/pipe-max-size, 1 MiB) and takes
// little of a user's pipe pages (/proc/sys/fs/pipe-user-pages-soft,
// 64 MiB), since only the pipes results flow in are grown.
const Capacity = 256 << 10

// Grow raises the capacity of the pipe f (64 KiB by default on Linux)
// to Capacity, when f is a pipe and the system allows it; otherwise it
// does nothing. A message longer than a pipe's capacity is written in
// several turns, each waiting for the reader to wake and drain the pipe:
// a 62 KB result with its envelope is just over 64 KiB, so it cost each
// hop of a relay two more context switches.
func Grow(f *os.File) {
	if f == nil {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n < Capacity {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, Capacity)
		}
	})
}

// Poll returns a file that reads the pipe f through the Go runtime's
// poller, or f itself when f is not a pipe or the poller cannot take it.
// A process's standard input is a blocking descriptor, which Go reads with
// a blocking read on its own thread: between two messages that thread sits
// in the kernel holding a scheduler slot, and the runtime's monitor wakes
// every 20 µs for milliseconds after each message to take it back (tens of
// context switches per message on a machine of two cores, most of the
// relay's CPU). Through the poller, a goroutine waiting for the next
// message costs nothing. The pipe's file description is made non-blocking;
// only the process reading it is affected, since a pipe's read end is not
// shared with its writer (a terminal, which a shell shares, is left as it
// is). f must not be read after Poll returns another file.
func Poll(f *os.File) *os.File {
	if f == nil {
		return f
	}
	fd := int(f.Fd()) // Fd keeps f blocking; it stays open while f does
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return f
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		_ = unix.Close(dup)
		return f
	}
	return os.NewFile(uintptr(dup), f.Name())
}

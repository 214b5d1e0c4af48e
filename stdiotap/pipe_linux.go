package stdiotap

import (
	"os"

	"golang.org/x/sys/unix"
)

// PipeBytes is the capacity GrowPipe asks for: a result of up to about
// 250 KB in one write. It stays well below Linux's limit for an
// unprivileged process (/proc/sys/fs/pipe-max-size, 1 MiB) and takes
// little of a user's pipe pages (/proc/sys/fs/pipe-user-pages-soft,
// 64 MiB), since only the pipes results flow in are grown.
const PipeBytes = 256 << 10

// GrowPipe raises the capacity of the pipe f (64 KiB by default on Linux)
// to PipeBytes, when f is a pipe and the system allows it; otherwise it
// does nothing. A message longer than a pipe's capacity is written in
// several turns, each waiting for the reader to wake and drain the pipe:
// a 62 KB result with its envelope is just over 64 KiB, so it cost each
// hop of a relay two more context switches.
func GrowPipe(f *os.File) {
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
		if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n < PipeBytes {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, PipeBytes)
		}
	})
}

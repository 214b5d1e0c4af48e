package jsonrpcline

import (
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// vectorMin is the smallest message written with writev(2): below it,
// copying the parts into one buffer costs less than the system call's
// vector.
const vectorMin = 16 << 10

// writeVectored writes parts (the last being the newline) to w with
// writev(2), when w is a file descriptor: the kernel copies a result of
// tens of kilobytes straight from the buffer it was read into, instead of
// from a copy of it in one message buffer. It reports false, having
// written nothing, when w is not a file descriptor; the caller then writes
// a buffer.
func writeVectored(w io.Writer, parts [][]byte) (bool, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return false, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, nil
	}
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for len(parts) > 0 {
			n, err := unix.Writev(int(fd), parts)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false // the poller waits until the pipe has room
			case err != nil:
				werr = &writeError{err}
				return true
			}
			parts = consumed(parts, n)
		}
		return true
	}); err != nil {
		return true, err
	}
	return true, werr
}

// consumed is parts without its first n bytes.
func consumed(parts [][]byte, n int) [][]byte {
	for len(parts) > 0 && n >= len(parts[0]) {
		n -= len(parts[0])
		parts = parts[1:]
	}
	if len(parts) > 0 {
		parts[0] = parts[0][n:]
	}
	return parts
}

// writeError is a failed writev, named like os.File's write errors.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

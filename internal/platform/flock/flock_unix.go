//go:build unix

package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Lock takes an exclusive flock(2) on f, waiting for it when wait is set
// and otherwise failing with ErrLocked while another open file holds it. The
// lock belongs to the open file, so two opens of the lock file, in one
// process or two, exclude each other; it goes when the file is closed.
func Lock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLocked
		}
		return err
	}
}

// Unlock releases the lock Lock took.
func Unlock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

//go:build unix

package credential

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on f, waiting for it. The lock
// belongs to the open file, so two opens of the lock file, in one process
// or two, exclude each other; it goes when the file is closed.
func lockFile(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}

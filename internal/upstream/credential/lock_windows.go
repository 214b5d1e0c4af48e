//go:build windows

package credential

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive LockFileEx lock on the first byte of f,
// waiting for it. The lock belongs to the handle, so two opens of the lock
// file, in one process or two, exclude each other; it goes when the handle
// is closed.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

// Package flock takes exclusive advisory locks on open files, so that
// several skillgate processes sharing a data directory serialise their
// changes: flock(2) on Unix, LockFileEx on Windows. A lock belongs to the
// open file, so two opens of one lock file, in one process or two,
// exclude each other; the system releases it when the file is closed or
// the process dies, crash or not.
package flock

import "errors"

// ErrLocked is Lock's answer, when told not to wait, while another open
// file holds the lock.
var ErrLocked = errors.New("locked by another process")

//go:build unix

package session

import "syscall"

// openNonblock keeps reading a skill file from blocking on a FIFO swapped
// in for it after the tree was checked; the opened descriptor's type is
// checked before anything is read.
const openNonblock = syscall.O_NONBLOCK

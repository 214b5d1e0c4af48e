//go:build unix

package local

import "syscall"

// openNonblock keeps Get from blocking on a FIFO planted in the tree.
const openNonblock = syscall.O_NONBLOCK

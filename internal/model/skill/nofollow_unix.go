//go:build unix

package skill

import "syscall"

// oNoFollow makes opening a symbolic link fail instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps opening a FIFO (or other special file) named SKILL.md
// from blocking until a writer appears; the type is then checked on the
// opened descriptor and anything but a regular file is refused.
const oNonBlock = syscall.O_NONBLOCK

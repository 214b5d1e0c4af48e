//go:build unix

package skill

import "syscall"

// oNoFollow makes opening a symbolic link fail instead of following it.
const oNoFollow = syscall.O_NOFOLLOW

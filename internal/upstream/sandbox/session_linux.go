//go:build linux

package sandbox

import (
	"os"
	"strings"
	"syscall"
)

// SessionNeeded reports whether a confined server must run in a session
// of its own (bwrap --new-session) to be kept from pushing keystrokes into
// a terminal with TIOCSTI: only when skillgate has a controlling terminal
// (which its children could open as /dev/tty) and the kernel still lets a
// process without CAP_SYS_ADMIN use TIOCSTI (dev.tty.legacy_tiocsti, 1 or
// absent). A session of its own is not free: with the kernel's scheduler
// autogroups, each session is scheduled as a group, and waking a server
// in another group added 25–40 µs to a 62 KB call on a loaded 2-core
// machine (bench/gateway.sh); a server behind pipes, with no terminal to
// reach, need not pay it.
func SessionNeeded() bool {
	if b, err := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return false
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return false // no controlling terminal (ENXIO): nothing to inject into
	}
	f.Close()
	return true
}

//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

const (
	terminateSignal = syscall.SIGTERM
	killSignal      = syscall.SIGKILL
)

// setProcessGroup makes the server the leader of a new process group, so that
// signalGroup reaches every process it starts (npx, a shell, a language
// runtime's workers).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the server's process group. Errors (typically
// ESRCH: the group is already gone) are ignored on purpose.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

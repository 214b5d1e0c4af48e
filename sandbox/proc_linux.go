//go:build linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel SIGKILL cmd's process (bwrap) when the
// thread that started it ends: with bwrap's own --die-with-parent, a
// confined server cannot outlive skillgate, even by a SIGKILL that gives
// skillgate no chance to stop it.
func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

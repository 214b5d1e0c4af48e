//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

type signalKind int

const (
	terminateSignal signalKind = iota
	killSignal
)

// setProcessGroup is a no-op where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// signalGroup kills the server process itself; without process groups its
// children cannot be reached, and there is no SIGTERM, so both kinds kill.
func signalGroup(cmd *exec.Cmd, _ signalKind) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(os.Kill)
}

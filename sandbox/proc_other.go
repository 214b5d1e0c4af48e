//go:build !linux

package sandbox

import "os/exec"

// setPdeathsig has no equivalent outside Linux, where bwrap does not run.
func setPdeathsig(*exec.Cmd) {}

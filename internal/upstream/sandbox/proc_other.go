//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
)

// setPdeathsig has no equivalent outside Linux, where bwrap does not run.
func setPdeathsig(*exec.Cmd) {}

// argsFile fails outside Linux, where bwrap does not run.
func argsFile([]string) (*os.File, error) {
	return nil, fmt.Errorf("%w: the sandbox needs Linux, not %s", ErrUnavailable, runtime.GOOS)
}

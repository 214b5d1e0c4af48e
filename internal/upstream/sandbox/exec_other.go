//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
)

// errNotLinux is why the helper and Landlock are unavailable here.
var errNotLinux = fmt.Errorf("%w: the sandbox needs Linux, not %s", ErrUnavailable, runtime.GOOS)

// LandlockABI returns the Landlock ABI version the kernel supports: never
// any outside Linux.
func LandlockABI() (int, error) { return 0, errors.New("landlock: Linux only") }

func execConfined(Policy, []string, []string) error { return errNotLinux }

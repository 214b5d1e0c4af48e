package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary, which os.Executable names as skillgate's
// own binary, be the sandbox's helper when commands run in-process start
// confined servers.
func TestMain(m *testing.M) {
	sandboxHelper(os.Args)
	os.Exit(m.Run())
}

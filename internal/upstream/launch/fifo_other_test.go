//go:build !unix

package launch_test

import "testing"

// mkfifo skips: named pipes are a Unix file type.
func mkfifo(t *testing.T, _ string) {
	t.Helper()
	t.Skip("named pipes are a Unix file type")
}

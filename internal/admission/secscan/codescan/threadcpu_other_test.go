//go:build !linux

package codescan

import "time"

// elapsed runs f and returns the wall time it took, where a thread's CPU
// time cannot be read.
func elapsed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

//go:build !linux

package registry_test

import "time"

// threadCPU is 0 where the thread's CPU time cannot be read: the benchmark
// then reports wall time only.
func threadCPU() time.Duration { return 0 }

package codescan

import (
	"runtime"
	"syscall"
	"time"
)

// elapsed runs f and returns the CPU time (user + system) the calling
// thread spent in it: unlike wall time, it does not grow when other
// processes take the machine's cores.
func elapsed(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	f()
	return cpu() - start
}

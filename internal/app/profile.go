package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// peakProfileEvery is how often the heap is checked for a new high.
const peakProfileEvery = time.Second

// WriteHeapProfiles writes a heap profile to path whenever the heap in use
// reaches a new high (checked every peakProfileEvery) and once more when
// ctx ends, so that the file shows what held memory at the peak and
// everything allocated over the run (go tool pprof -sample_index=inuse_space
// or alloc_space). It is SKILLGATE_MEMPROFILE, for performance
// investigations; it returns a function that stops it and writes the
// profile taken at the peak (or, at the end, if the heap never rose).
func WriteHeapProfiles(ctx context.Context, path string, stderr io.Writer) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var peak uint64
	write := func() {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(stderr, "skillgate: SKILLGATE_MEMPROFILE:", err)
			return
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			fmt.Fprintln(stderr, "skillgate: SKILLGATE_MEMPROFILE:", err)
		}
	}
	go func() {
		defer close(done)
		t := time.NewTicker(peakProfileEvery)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-ctx.Done():
				if peak == 0 {
					write()
				}
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak+peak/20 {
					peak = ms.HeapInuse
					write()
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

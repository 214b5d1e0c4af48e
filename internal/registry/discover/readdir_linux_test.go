package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestReadDirComplete lists directories that need one, several and many
// getdents batches, by absolute path and relative to a root.
func TestReadDirComplete(t *testing.T) {
	for _, n := range []int{0, 1, 100, 117, 400} {
		dir := t.TempDir()
		want := map[string]bool{}
		for i := 0; i < n; i++ {
			// Long names fill the 32 KiB buffer after about 120 entries.
			name := fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 240))
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			want[name] = true
		}
		self, parent := newDirReader(dir), newDirReader(filepath.Dir(dir))
		defer self.close()
		defer parent.close()
		for _, dr := range []dirReader{self, parent, {}} {
			es, _, _, err := dr.readDirCached(dir, func([]entry) bool { return true }, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != n {
				t.Fatalf("%d entries: read %d (root %q)", n, len(es), dr.root)
			}
			for _, e := range es {
				if !want[e.name] || !e.isRegular() {
					t.Fatalf("unexpected entry %q", e.name)
				}
			}
		}
	}
}

// TestReadDirUnderSignals lists large directories while the process is
// flooded with signals. getdents64 returns early, with fewer entries than
// fit, when a signal is pending: a reader that took a short read for the
// end of the directory would drop entries, and a call a signal interrupts
// (EINTR) must be made again.
func TestReadDirUnderSignals(t *testing.T) {
	dir := t.TempDir()
	const n = 1500
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%04d-%s", i, strings.Repeat("y", 200))
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		// SIGURG is the signal the runtime uses to preempt goroutines; it
		// is ignored when none is due.
		for !stop.Load() {
			for i := 0; i < 64; i++ {
				syscall.Kill(os.Getpid(), syscall.SIGURG)
			}
			runtime.Gosched()
		}
	}()
	defer func() { stop.Store(true); <-done }()
	dr := newDirReader(filepath.Dir(dir))
	defer dr.close()
	for round := 0; round < 40; round++ {
		es, _, _, err := dr.readDirCached(dir, func([]entry) bool { return false }, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != n {
			t.Fatalf("round %d: read %d of %d entries", round, len(es), n)
		}
	}
}

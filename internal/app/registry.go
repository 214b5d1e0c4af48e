package app

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/internal/platform/termtext"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/registry/signature"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// OpenRegistry opens the registry of the data directory. bulk lets a
// first scan into an empty store skip the write-ahead log
// (sqlite.DB.BulkFirstScan): only for a process that does nothing else
// with the store meanwhile.
func (a *App) OpenRegistry(ctx context.Context, lim discover.Limits, bulk bool) (*registry.Registry, func(), error) {
	st, err := a.OpenStore(ctx)
	if err != nil {
		return nil, nil, err
	}
	if lite, ok := st.(*sqlite.DB); ok {
		lite.BulkFirstScan = bulk
	}
	sigs, err := a.signatureChecker()
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return registry.New(st, registry.Options{Limits: lim, Logger: a.log, Signatures: sigs}), func() { st.Close() }, nil
}

// signatureChecker checks the signatures of first_party skills at scan
// with the keys of signing.keys.
func (a *App) signatureChecker() (registry.SignatureChecker, error) {
	_, kr, err := a.configKeyring()
	if err != nil {
		return nil, err
	}
	tc := &signature.TreeChecker{Keyring: kr, Trust: signature.TrustFirstParty}
	return registry.SignatureCheckerFunc(func(ctx context.Context, root string) registry.RootSignatures {
		return tc.Root(ctx, root)
	}), nil
}

// rootSignature verifies the signature of the skill in dir under the
// first_party root root as a scan does (the root's signed index when it
// lists the skill, else its own signature) with the keys of signing.keys.
func (a *App) rootSignature(ctx context.Context, root, dir string) (*signature.Provenance, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	kr, err := a.Keyring(cfg)
	if err != nil {
		return nil, err
	}
	return kr.Root(ctx, root, signature.TrustFirstParty, time.Now()).Verify(ctx, dir)
}

// scanMemoryLimit is the soft memory limit of a scan (see ScanMemory).
const scanMemoryLimit = 400 << 20

// ScanMemory tunes the garbage collector for a scan, unless getenv has
// GOGC or GOMEMLIMIT, and returns the function that restores it.
func ScanMemory(getenv func(string) string) (restore func()) {
	// Most of what a scan allocates stays live until the commit
	// (about 200 MB at 100,000 skills): at the default 100%
	// growth the GC runs some 20 times, at 400% 6 times, saving
	// about 15% of the CPU time, but then the heap peaks at 5x
	// the live data (a 1 GB RSS at 100,000 skills). So a scan
	// collects at 400% under a soft limit of 400 MiB, from which
	// the GC collects as needed: measured at 100,000 skills,
	// 470 MB peak RSS against 560 MB at GOGC=100 and 1 GB at
	// GOGC=400 alone (bench/README.md). GOGC or GOMEMLIMIT in the
	// environment take precedence.
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc, limit := debug.SetGCPercent(400), debug.SetMemoryLimit(scanMemoryLimit)
	return func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(gc)
	}
}

// ScanProgress returns the progress line of a scan for w when it is a
// terminal and quiet (JSON output) is not set, at most ten redraws a
// second, and the function that clears it at the end; nil and a no-op
// otherwise.
func ScanProgress(w io.Writer, quiet bool) (registry.Progress, func()) {
	tty, isTTY := Terminal(w)
	if !isTTY || quiet {
		return nil, func() {}
	}
	last := time.Time{}
	return func(phase string, done, total int) {
			if time.Since(last) < 100*time.Millisecond && done != total {
				return
			}
			last = time.Now()
			fmt.Fprintf(tty, "\r\033[Kscanning: %s %d/%d", phase, done, total)
		}, func() {
			fmt.Fprint(tty, "\r\033[K")
		}
}

// stepLine is a progress line that shows the step under way, redrawn in
// place; the steps of concurrent work (servers introspected in parallel)
// take turns.
type stepLine struct {
	mu    sync.Mutex
	tty   io.Writer
	drawn bool
}

// show draws step, rendered for a terminal and cut to 100 bytes.
func (l *stepLine) show(step string) {
	if len(step) > 100 {
		step = strings.ToValidUTF8(step[:100], "") + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.tty, "\r\033[K%s…", termtext.Escape(step))
	l.drawn = true
}

// clear removes the line, when one was drawn.
func (l *stepLine) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprint(l.tty, "\r\033[K")
		l.drawn = false
	}
}

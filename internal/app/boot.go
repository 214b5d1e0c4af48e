package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/skillgate/skillgate/internal/registry/registry"
)

// BootScan is what a server did with its roots at start (see
// [App.ScanAtBoot]).
type BootScan struct {
	// Reason says why the registry was older than its roots
	// (registry.Registry.Stale); "" when it was not, and nothing was
	// scanned.
	Reason string
	// Result is the scan's report when one ran and succeeded.
	Result *ScanResult
	// Skipped says why the registry was not even compared with the roots
	// (a store replicas share), or "".
	Skipped string
	// Duration is what the check and the scan took.
	Duration time.Duration
}

// ScanAtBoot scans the roots a server would rescan (flagRoots and trust as
// 'serve --root --trust', else the roots of the last scan, else the
// configured or conventional ones) when the registry is empty or older
// than them, so that agents are served what the roots hold without a
// 'skillgate scan' first. When the stamps of the last walks still match
// the trees, it costs a stat per directory and file and writes nothing.
// On a store that replicas share it scans only an empty registry: which
// replica holds the directories is the operator's to say (the leader's
// --rescan-interval, or 'skillgate scan'), and a replica without them
// must not make the registry forget their skills.
func (a *App) ScanAtBoot(ctx context.Context, d *Runtime, flagRoots []string, trust string) (*BootScan, error) {
	start := time.Now()
	bs := &BootScan{}
	defer func() { bs.Duration = time.Since(start) }()
	roots, err := a.rescanRoots(ctx, d.Registry, flagRoots, trust)
	if err != nil {
		return bs, err
	}
	if bs.Reason, err = d.Registry.Stale(ctx, roots); err != nil || bs.Reason == "" {
		return bs, err
	}
	if _, shared := d.DB.(replicaStore); shared && bs.Reason != registry.StaleEmpty {
		bs.Skipped = "the store is shared by replicas, and its registry is not empty (" + bs.Reason + ")"
		bs.Reason = ""
		return bs, nil
	}
	cfg, err := a.Config()
	if err != nil {
		return bs, err
	}
	defer ScanMemory(a.getenv)()
	bs.Result, err = a.ScanAll(ctx, d.Registry, roots, cfg, ScanOptions{Storage: d.Storage}, nil)
	if err != nil {
		return bs, err
	}
	// The catalog is built now, not by the first agent to connect.
	_, err = d.Registry.Snapshot(ctx)
	return bs, err
}

// WriteBootScan writes what prog ('skillgate serve', 'skillgate mcp') says
// of its scan at start: nothing when the registry was current, else why
// it scanned and what, why it did not, or why the scan failed.
func WriteBootScan(w io.Writer, prog string, bs *BootScan, err error) {
	switch {
	case err != nil:
		fmt.Fprintf(w, "%s: scan at start: %v; serving the registry as it was\n", prog, err)
	case bs.Skipped != "":
		fmt.Fprintf(w, "%s: no scan at start: %s\n", prog, bs.Skipped)
	case bs.Result != nil:
		r := bs.Result.ScanReport
		fmt.Fprintf(w, "%s: scanned at start (%s): %d skills (%d valid, %d rejected), %d parsed, %d removed, in %d ms\n",
			prog, bs.Reason, r.Skills, r.Valid, r.Rejected, r.Parsed, r.Removed, bs.Duration.Milliseconds())
	}
}

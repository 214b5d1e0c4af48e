package discover

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// Why a root's last walk no longer vouches for it, as [Changed] says it
// (each completes "root PATH …").
const (
	// RecordOtherFormat: an older or newer skillgate recorded the walk.
	RecordOtherFormat = "was last scanned by another version of skillgate"
	// NoStamp: no stamp of the last walk is kept, mostly because the walk
	// could not promise its result: something in the root changed within
	// 100 ms of the walk (the clock may not tell a later change apart), or
	// a directory or file could not be read. Also when the root was never
	// walked with this cache, the cache was cleared, or the platform keeps
	// none (stamps are Linux-only).
	NoStamp = "kept no stamp at its last scan (something in it changed within 100 ms of the scan, or could not be read)"
	// OtherLimits: the last walk ran with other limits.
	OtherLimits = "was last scanned with other limits"
	// TreeChanged: a directory or file the stamp records changed.
	TreeChanged = "changed since it was scanned"
)

// Changed says why root may no longer hold exactly what cache's record of
// its last walk with lim says, or "" when it does: the record's stamp (its
// state) verifies, one stat per directory and file the walk read (see
// [Scan]), and nothing else is read or written. The reason is one of
// [NoStamp], [RecordOtherFormat], [OtherLimits] and [TreeChanged]; with any of them, a [Scan] of the root would walk. A
// server asks it at start, to scan only when its registry is older than
// its roots.
//
// An error is a record that cannot be read or is damaged (a Scan would
// walk, so the caller should scan) or the end of ctx.
func Changed(ctx context.Context, root Root, lim Limits, cache Cache) (string, error) {
	if cache == nil {
		return NoStamp, nil
	}
	abs, err := filepath.Abs(root.Path)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root.Path, err)
	}
	rc, err := cache.ReadScanCache(ctx, abs)
	if err != nil {
		return "", err
	}
	if rc == nil {
		return NoStamp, nil
	}
	defer rc.Close()
	rec, err := readRecord(rc, abs)
	if errors.Is(err, errOtherFormat) {
		return RecordOtherFormat, nil // a scan replaces it
	}
	if err != nil {
		return "", fmt.Errorf("scan cache of %s: %w", abs, err)
	}
	if rec.state == "" {
		return NoStamp, nil
	}
	ps, ok, err := parseState(rec.state, lim)
	if err != nil {
		return "", err
	}
	if !ok {
		return OtherLimits, nil
	}
	same, err := verifyStats(ctx, abs, ps.stats)
	if err != nil || same {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return TreeChanged, nil
}

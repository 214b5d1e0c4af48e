package discover

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// Unchanged reports whether root still holds exactly what cache's record
// of its last walk with lim says: the record's state verifies, one stat
// per directory and file the walk read (see [Scan]), and nothing else is
// read or written. It is false, with a nil error, when there is no record,
// when the record keeps no state (the walk could not promise one) or was
// made with other limits, and when anything the state records changed:
// then a [Scan] of the root would find something new. A server asks it at
// start, to scan only when its registry is older than its roots.
//
// An error is a record that cannot be read or is damaged (a Scan would
// walk, so the caller should scan) or the end of ctx.
func Unchanged(ctx context.Context, root Root, lim Limits, cache Cache) (bool, error) {
	if cache == nil {
		return false, nil
	}
	abs, err := filepath.Abs(root.Path)
	if err != nil {
		return false, fmt.Errorf("root %s: %w", root.Path, err)
	}
	rc, err := cache.ReadScanCache(ctx, abs)
	if err != nil || rc == nil {
		return false, err
	}
	defer rc.Close()
	rec, err := readRecord(rc, abs)
	if errors.Is(err, errOtherFormat) {
		return false, nil // an older skillgate's record: a scan replaces it
	}
	if err != nil {
		return false, fmt.Errorf("scan cache of %s: %w", abs, err)
	}
	ps, ok, err := parseState(rec.state, lim)
	if err != nil || !ok {
		return false, err
	}
	return verifyStats(ctx, abs, ps.stats)
}

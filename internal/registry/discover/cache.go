package discover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
)

// Cache keeps, per root, the record of the root's last walk, so that the
// next [Scan] of it costs a stat per directory and file when nothing
// changed, and reads again only the directories that changed otherwise.
// A record is discover's own bytes, which a Cache keeps as they are; the
// record is checked when it is read (a damaged, stale or foreign one only
// makes the scan walk), so a Cache needs no transaction, and may lose a
// record at any time.
type Cache interface {
	// ReadScanCache returns a reader of the record last written for root
	// (an absolute path), or nil when there is none. Scan reads a record
	// only as far as it needs: a verified rescan stops before the
	// listings.
	ReadScanCache(ctx context.Context, root string) (io.ReadCloser, error)
	// WriteScanCache replaces root's record; an empty record removes it.
	// The Cache must not keep record after it returns.
	WriteScanCache(ctx context.Context, root string, record []byte) error
}

// Scan walks root as [Walk] does, using what cache kept of the root's last
// walk, and keeps what this one learned for the next. When every directory
// and file the last walk read is unchanged, the result is that walk's,
// rebuilt from the record after a stat of each (Result.Verified); else the
// root is walked, and a directory whose modification time is unchanged is
// not read again (its listing is). A cache that cannot be read or written
// is no error: the walk goes on without it, and says why in
// Result.CacheError. A nil cache makes Scan a Walk.
func Scan(ctx context.Context, root Root, lim Limits, cache Cache) (*Result, error) {
	if cache == nil {
		return Walk(ctx, root, lim)
	}
	abs, err := filepath.Abs(root.Path)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", root.Path, err)
	}
	var rec *record
	var cacheErr error
	rc, err := cache.ReadScanCache(ctx, abs)
	switch {
	case err != nil:
		cacheErr = err
	case rc != nil:
		defer rc.Close()
		rec, err = readRecord(rc, abs)
		if err != nil && !errors.Is(err, errOtherFormat) {
			cacheErr = fmt.Errorf("scan cache of %s: %w; the root is walked and its cache written again", abs, err)
		}
	}
	var old map[string]listing
	if rec != nil {
		ps, ok, err := parseState(rec.state, lim)
		if ok {
			root.Path = abs
			var res *Result
			if res, err = verify(ctx, root, ps); res != nil {
				res.Verified = true
				return res, nil
			}
		}
		if err == nil {
			old, err = rec.listingMap()
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			cacheErr = fmt.Errorf("scan cache of %s: %w; the root is walked and its cache written again", abs, err)
			old = nil
		}
	}
	res, made, err := walk(ctx, root, lim, old)
	if err != nil {
		return nil, err
	}
	// A record is written unless there was none and there is none.
	if rc != nil || len(made) > 0 {
		if err := cache.WriteScanCache(ctx, res.Root.Path, made); err != nil && cacheErr == nil {
			cacheErr = fmt.Errorf("scan cache of %s: %w", res.Root.Path, err)
		}
	}
	res.CacheError = cacheErr
	return res, nil
}

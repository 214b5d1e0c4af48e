package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
)

// The scan cache (discover.Cache: what a scan keeps of each root's walk
// for the next) is kept as files, one per root, in the directory
// scanCacheDir next to the database file, named by a hash of the root's
// path: a rescan reads its record with one read instead of copying it out
// of SQLite several times. A record is discover's own bytes, which the
// store keeps as they are; discover checks a record when it reads it, so
// one that is missing, damaged or stale only makes the next scan walk,
// and records need no transaction. Records of roots a committed scan did
// not configure are removed then.
const scanCacheDir = "scan-cache"

// oldWalkStateDir held the walk states of earlier versions, now part of
// the scan cache; it is removed at the next commit of a scan.
const oldWalkStateDir = "walk-state"

func (s *DB) scanCachePath(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(filepath.Dir(s.path), scanCacheDir, hex.EncodeToString(sum[:16]))
}

// ReadScanCache implements discover.Cache: it returns root's record, or
// nil when there is none.
func (s *DB) ReadScanCache(ctx context.Context, root string) (io.ReadCloser, error) {
	f, err := os.Open(s.scanCachePath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan cache of %s: %w", root, err)
	}
	return f, nil
}

// WriteScanCache implements discover.Cache: it replaces root's record
// with [atomicfile.Write] (mode 0600), or removes it when record is
// empty.
func (s *DB) WriteScanCache(ctx context.Context, root string, record []byte) error {
	p := s.scanCachePath(root)
	if len(record) == 0 {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("scan cache of %s: %w", root, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("scan cache of %s: %w", root, err)
	}
	if err := atomicfile.Write(p, record, 0o600); err != nil {
		return fmt.Errorf("scan cache of %s: %w", root, err)
	}
	return nil
}

// pruneScanCache removes the records of roots other than roots, once a
// scan of roots is committed. Errors are ignored: a stray record only
// takes room.
func (s *DB) pruneScanCache(roots []string) {
	base := filepath.Dir(s.path)
	os.RemoveAll(filepath.Join(base, oldWalkStateDir))
	dir := filepath.Join(base, scanCacheDir)
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	keep := make(map[string]bool, len(roots))
	for _, r := range roots {
		keep[filepath.Base(s.scanCachePath(r))] = true
	}
	for _, de := range des {
		name := de.Name()
		if keep[name] {
			continue
		}
		// A temporary file (hidden: atomicfile's ".<record>.tmp-…", or
		// ".tmp-…" of earlier versions) may be another scan's, being
		// written; one an hour old was left by a scan that stopped.
		if strings.HasPrefix(name, ".") {
			if fi, err := de.Info(); err != nil || time.Since(fi.ModTime()) < time.Hour {
				continue
			}
		}
		os.Remove(filepath.Join(dir, name))
	}
}

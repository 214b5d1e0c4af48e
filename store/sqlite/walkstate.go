package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Walk states (store.RootScan.WalkState) are kept as files, one per root,
// in the directory walkStateDir next to the database file, named by a hash
// of the root's path: a rescan reads its state with one read instead of
// copying it out of SQLite several times. A walk state is a cache that
// needs no transaction: the scanner checks it against the file system and
// compares what it describes with the refs, so a state that is missing,
// stale or from another scan only makes the next scan walk. It is written
// (to a temporary file, then renamed) once its scan is committed; the
// states of roots the scan did not record are removed then.
const walkStateDir = "walk-state"

func (s *DB) walkStatePath(root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(filepath.Dir(s.path), walkStateDir, hex.EncodeToString(sum[:16]))
}

// WalkState implements [store.Store].
func (s *DB) WalkState(ctx context.Context, root string) ([]byte, error) {
	b, err := os.ReadFile(s.walkStatePath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("walk state of %s: %w", root, err)
	}
	return b, nil
}

// writeWalkStates records the walk states of a committed scan's roots and
// removes those of other roots. Errors are ignored: the next scan walks.
func (s *DB) writeWalkStates(roots []*rootChanges) {
	dir := filepath.Join(filepath.Dir(s.path), walkStateDir)
	keep := make(map[string]bool, len(roots))
	made := false
	for _, rc := range roots {
		p := s.walkStatePath(rc.root)
		keep[filepath.Base(p)] = true
		switch {
		case rc.keepWalk:
		case rc.walk == nil:
			os.Remove(p)
		default:
			if !made {
				if os.MkdirAll(dir, 0o700) != nil {
					return
				}
				made = true
			}
			writeFileAtomic(dir, p, rc.walk)
		}
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if keep[name] {
			continue
		}
		// A temporary file may be another scan's, being written; one an
		// hour old was left by a scan that stopped.
		if strings.HasPrefix(name, ".tmp-") {
			if fi, err := de.Info(); err != nil || time.Since(fi.ModTime()) < time.Hour {
				continue
			}
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// writeFileAtomic writes data to path through a temporary file in dir.
func writeFileAtomic(dir, path string, data []byte) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

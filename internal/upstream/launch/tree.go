package launch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Bounds on a fetched tree. A real MCP server with its dependencies is a
// few thousand files and tens of megabytes; these leave room for the
// largest and stop a package that unpacks without end.
const (
	// DefaultMaxBytes bounds the bytes of one fetched tree.
	DefaultMaxBytes = 1 << 30
	// DefaultMaxFiles bounds the files (and links) of one fetched tree.
	DefaultMaxFiles = 200_000
)

// treeLimits bounds a walk of a fetched tree.
type treeLimits struct {
	maxBytes int64
	maxFiles int
}

// TreeDigest returns the digest of the fetched tree in dir: every regular
// file (its path, executable bit, size and content) and every symbolic link
// (its path and target), in path order. A link that leads out of dir, or
// an entry that is neither, is an error: a fetched tree holds nothing
// else.
func TreeDigest(ctx context.Context, dir string) (string, error) {
	return treeDigest(ctx, dir, treeLimits{DefaultMaxBytes, DefaultMaxFiles})
}

func treeDigest(ctx context.Context, dir string, lim treeLimits) (string, error) {
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var files int
	var total int64
	err := walkTree(dir, func(rel string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		files++
		if files > lim.maxFiles {
			return fmt.Errorf("%s holds more than %d files", dir, lim.maxFiles)
		}
		full := filepath.Join(dir, rel)
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			if err := linkInside(dir, rel, target); err != nil {
				return err
			}
			writeEntry(h, 'L', rel, 0, target)
			return nil
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			if total > lim.maxBytes {
				return fmt.Errorf("%s holds more than %d bytes", dir, lim.maxBytes)
			}
			kind := byte('F')
			if info.Mode()&0o111 != 0 {
				kind = 'X'
			}
			writeEntry(h, kind, rel, info.Size(), "")
			f, err := os.Open(full)
			if err != nil {
				return err
			}
			defer f.Close()
			n, err := io.CopyBuffer(h, io.LimitReader(f, info.Size()), buf)
			if err == nil && n != info.Size() {
				err = fmt.Errorf("%s changed while being read", rel)
			}
			return err
		default:
			return fmt.Errorf("%s is a %s, not a file or a link", rel, typeName(t))
		}
	})
	if err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// typeName names the type of an entry that is neither a regular file, a
// link nor a directory.
func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "file of type " + t.Type().String()
}

// writeEntry writes one entry's header: its kind, path, size and, for a
// link, its target, each length-prefixed so no two trees collide.
func writeEntry(h hash.Hash, kind byte, rel string, size int64, target string) {
	var n [8]byte
	h.Write([]byte{kind})
	binary.BigEndian.PutUint64(n[:], uint64(len(rel)))
	h.Write(n[:])
	h.Write([]byte(filepath.ToSlash(rel)))
	binary.BigEndian.PutUint64(n[:], uint64(size))
	h.Write(n[:])
	if kind == 'L' {
		binary.BigEndian.PutUint64(n[:], uint64(len(target)))
		h.Write(n[:])
		h.Write([]byte(target))
	}
}

// linkInside refuses a link at rel (in dir) whose target leads out of dir.
func linkInside(dir, rel, target string) error {
	if filepath.IsAbs(target) {
		return fmt.Errorf("%s links to the absolute path %s, outside the fetched tree", rel, target)
	}
	joined := filepath.Join(filepath.Dir(rel), target)
	if !filepath.IsLocal(joined) {
		return fmt.Errorf("%s links to %s, outside the fetched tree", rel, target)
	}
	return nil
}

// walkTree calls fn for every entry below dir but directories, in lexical
// order, with its path relative to dir. Links are not followed.
func walkTree(dir string, fn func(rel string, d fs.DirEntry) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return fn(rel, d)
	})
}

// Verifier checks fetched trees against the digests approved for them
// before their servers start. The first check of a tree hashes every file;
// later ones compare a fingerprint of every entry's metadata (size, mode,
// modification and change times, inode) with the one taken when the tree
// last hashed right, and hash again only when it differs, so a server
// start costs a walk, not a read of every dependency. Writing a file
// changes its change time, which no unprivileged process can set back. A
// Verifier is safe for concurrent use; the zero value is ready.
type Verifier struct {
	mu   sync.Mutex
	good map[string]string // dir + "\x00" + digest → fingerprint
}

// Verify returns nil when dir hashes to want, and an error wrapping
// [ErrDrift] that says what differs otherwise (a missing tree included).
func (v *Verifier) Verify(ctx context.Context, dir, want string) error {
	key := dir + "\x00" + want
	fp, err := fingerprint(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrDrift, dir, err)
	}
	v.mu.Lock()
	seen := v.good[key]
	v.mu.Unlock()
	if seen != "" && seen == fp {
		return nil
	}
	got, err := TreeDigest(ctx, dir)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s: %w", ErrDrift, dir, err)
	}
	if got != want {
		return fmt.Errorf("%w: %s hashes to %s, approved %s", ErrDrift, dir, got, want)
	}
	v.mu.Lock()
	if v.good == nil {
		v.good = map[string]string{}
	}
	v.good[key] = fp
	v.mu.Unlock()
	return nil
}

// fingerprint hashes the metadata of every entry below dir: each
// directory's entries (name, size, mode, modification and change times,
// inode) and, for a subdirectory, its own fingerprint, so that
// directories are read concurrently (a start waits on thousands of
// lstat calls, which run in parallel on every core).
func fingerprint(dir string) (string, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("the fetched tree is missing")
	}
	sem := make(chan struct{}, fingerprintWorkers)
	sum, err := fingerprintDir(dir, sem)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errors.New("the fetched tree is missing")
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum), nil
}

// entryMeta is what a fingerprint keeps of an entry.
type entryMeta struct{ size, mode, mtime, ino, ctime uint64 }

// fingerprintWorkers bounds the directories read at once.
const fingerprintWorkers = 8

// fingerprintDir is the fingerprint of dir's subtree; sem bounds the
// goroutines reading subdirectories.
func fingerprintDir(dir string, sem chan struct{}) ([]byte, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	metas := make([]entryMeta, len(ents))
	subs := make([][]byte, len(ents))
	errs := make([]error, len(ents))
	var wg sync.WaitGroup
	for i, e := range ents {
		if metas[i], errs[i] = statAt(d, dir, e.Name()); errs[i] != nil {
			continue
		}
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		select {
		case sem <- struct{}{}:
			wg.Add(1)
			go func() {
				defer wg.Done()
				subs[i], errs[i] = fingerprintDir(sub, sem)
				<-sem
			}()
		default: // every worker busy: read it here
			subs[i], errs[i] = fingerprintDir(sub, sem)
		}
	}
	wg.Wait()
	h := sha256.New()
	var n [8]byte
	put := func(v uint64) {
		binary.BigEndian.PutUint64(n[:], v)
		h.Write(n[:])
	}
	for i, e := range ents {
		if errs[i] != nil {
			return nil, errs[i]
		}
		m := metas[i]
		h.Write([]byte(e.Name()))
		h.Write([]byte{0})
		put(m.size)
		put(m.mode)
		put(m.mtime)
		put(m.ino)
		put(m.ctime)
		h.Write(subs[i])
	}
	return h.Sum(nil), nil
}

// digestOf is "sha256:" and the hex SHA-256 of b.
func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Package blobsync copies skill trees between a [blob.Store] and other
// places: from one store prefix to another (a mirror), out of a store into
// a new local directory (a cache), and reads a prefix as an [fs.FS] so that
// a tree's digest can be computed where it is stored.
//
// Everything read from a store is hostile: keys are validated with
// [blob.ValidateKey] (the stores skip invalid keys when listing, and this
// package checks again), and every copy out of a store is bounded by
// [Limits] before a byte is written. A tree written to a directory appears
// whole or not at all: it is written under a temporary sibling name and
// renamed into place.
package blobsync

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// ErrLimit means a tree is over one of its [Limits]; the message names the
// limit and the tree's measure.
var ErrLimit = errors.New("blobsync: tree over its limits")

// Limits bound one tree copied out of a store.
type Limits struct {
	// MaxFiles bounds the objects of the tree.
	MaxFiles int
	// MaxBytes bounds their total size.
	MaxBytes int64
	// MaxDepth bounds the directory levels below the tree's prefix (a file
	// at the top is at depth 0).
	MaxDepth int
}

// DefaultLimits are the bounds of one skill tree (those discovery applies
// to a scanned skill: 10,000 files, 256 MiB, 16 levels).
var DefaultLimits = Limits{MaxFiles: skill.DefaultTreeLimits.MaxFiles, MaxBytes: skill.DefaultTreeLimits.MaxBytes, MaxDepth: 16}

// Check reports whether objs (a listing of prefix) fit lim: an error
// wrapping [ErrLimit] or [blob.ErrInvalidKey] otherwise.
func Check(prefix string, objs []blob.Info, lim Limits) error {
	if lim.MaxFiles > 0 && len(objs) > lim.MaxFiles {
		return fmt.Errorf("%w: more than %d files (limit %d)", ErrLimit, lim.MaxFiles, lim.MaxFiles)
	}
	var total int64
	for _, o := range objs {
		rel, ok := strings.CutPrefix(o.Key, prefix)
		if !ok || blob.ValidateKey(rel) != nil {
			return fmt.Errorf("%w: %q is not under %q", blob.ErrInvalidKey, o.Key, prefix)
		}
		if o.Size < 0 {
			return fmt.Errorf("%w: %q has a negative size", ErrLimit, rel)
		}
		total += o.Size
		if lim.MaxBytes > 0 && total > lim.MaxBytes {
			return fmt.Errorf("%w: more than %d bytes (limit %d)", ErrLimit, lim.MaxBytes, lim.MaxBytes)
		}
		if d := strings.Count(rel, "/"); lim.MaxDepth > 0 && d > lim.MaxDepth {
			return fmt.Errorf("%w: %q is %d levels deep (limit %d)", ErrLimit, rel, d, lim.MaxDepth)
		}
	}
	return nil
}

// Copy stores the objects keys (relative to srcPrefix) of src under
// dstPrefix in dst, each atomically. A key that left src meanwhile is an
// error wrapping [blob.ErrNotFound].
func Copy(ctx context.Context, dst blob.Store, dstPrefix string, src blob.Store, srcPrefix string, keys []string) error {
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		rc, info, err := src.Get(ctx, srcPrefix+k)
		if err != nil {
			return err
		}
		err = dst.Put(ctx, dstPrefix+k, rc, info.Size)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Prune deletes the objects under prefix of st whose key, relative to
// prefix, keep does not hold, and returns how many it deleted.
func Prune(ctx context.Context, st blob.Store, prefix string, keep map[string]bool) (int, error) {
	objs, err := st.List(ctx, prefix, 0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if keep[strings.TrimPrefix(o.Key, prefix)] {
			continue
		}
		if err := st.Delete(ctx, o.Key); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Materialize writes the objects objs (a listing of prefix in src) as the
// new directory dir: each object at its key relative to prefix. It checks
// objs against lim first and writes nothing when they do not fit. The tree
// is written under a temporary sibling of dir (a dot-name, which scans
// skip) and renamed into place, replacing whatever dir held: a crash
// leaves the old tree, no tree, or the new one, never a mix. An object
// whose size changed since the listing is an error (the tree is being
// uploaded: try again later).
func Materialize(ctx context.Context, src blob.Store, prefix string, objs []blob.Info, dir string, lim Limits) error {
	if err := Check(prefix, objs, lim); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".sync-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	for _, o := range objs {
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := strings.TrimPrefix(o.Key, prefix)
		if err := writeObject(ctx, src, o, filepath.Join(tmp, filepath.FromSlash(rel))); err != nil {
			return err
		}
	}
	if err := replaceDir(tmp, dir); err != nil {
		return err
	}
	ok = true
	return nil
}

// writeObject copies object o of src to the new file name, refusing a body
// of another size than the listing's.
func writeObject(ctx context.Context, src blob.Store, o blob.Info, name string) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("%w: %q: %v", blob.ErrConflict, o.Key, err)
	}
	rc, info, err := src.Get(ctx, o.Key)
	if err != nil {
		return err
	}
	defer rc.Close()
	if info.Size != o.Size {
		return fmt.Errorf("%w: %q changed while being copied (%d bytes, listed %d)", blob.ErrSizeMismatch, o.Key, info.Size, o.Size)
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", blob.ErrConflict, o.Key, err)
	}
	n, err := io.Copy(f, io.LimitReader(rc, o.Size+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("blobsync: copy %q: %w", o.Key, err)
	}
	if n != o.Size {
		return fmt.Errorf("%w: %q gave %d bytes, listed %d", blob.ErrSizeMismatch, o.Key, n, o.Size)
	}
	return nil
}

// replaceDir renames the complete tree tmp to dir, moving an existing dir
// aside first and removing it afterwards.
func replaceDir(tmp, dir string) error {
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = filepath.Join(filepath.Dir(dir), ".old-"+rand.Text())
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// RemoveStale removes what [Materialize] leaves under dir when a process
// dies mid-copy: temporary trees (".sync-…", ".old-…") older than age.
func RemoveStale(dir string, age time.Duration, now time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".sync-") && !strings.HasPrefix(e.Name(), ".old-") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > age {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// FS returns a read-only [fs.FS] over the objects under prefix of st: Open
// of "a/b.md" reads the object prefix+"a/b.md". It supports opening files
// only (what [skill.Digest] needs), not directories.
func FS(ctx context.Context, st blob.Store, prefix string) fs.FS {
	return blobFS{ctx: ctx, st: st, prefix: prefix}
}

// blobFS is the fs.FS of FS.
type blobFS struct {
	ctx    context.Context
	st     blob.Store
	prefix string
}

// Open implements [fs.FS] for files: the object prefix+name.
func (b blobFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	rc, info, err := b.st.Get(b.ctx, b.prefix+name)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			err = fs.ErrNotExist
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &blobFile{ReadCloser: rc, info: fileInfo{name: path.Base(name), size: info.Size, mod: info.ModTime}}, nil
}

// blobFile is an object open for reading.
type blobFile struct {
	io.ReadCloser
	info fileInfo
}

// Stat implements [fs.File].
func (f *blobFile) Stat() (fs.FileInfo, error) { return f.info, nil }

// fileInfo is the [fs.FileInfo] of an object.
type fileInfo struct {
	name string
	size int64
	mod  time.Time
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return i.mod }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

// Digest computes the content digest ([skill.Digest]) of the tree of files
// (sorted by path) stored under prefix of st.
func Digest(ctx context.Context, st blob.Store, prefix string, files []skill.File) (string, error) {
	return skill.Digest(ctx, FS(ctx, st, prefix), files)
}

// Files lists the objects under prefix of st as the sorted file list of a
// tree ([skill.File] paths relative to prefix), bounded by lim.
func Files(ctx context.Context, st blob.Store, prefix string, lim Limits) ([]skill.File, error) {
	max := 0
	if lim.MaxFiles > 0 {
		max = lim.MaxFiles + 1
	}
	objs, err := st.List(ctx, prefix, max)
	if err != nil {
		return nil, err
	}
	if err := Check(prefix, objs, lim); err != nil {
		return nil, err
	}
	files := make([]skill.File, len(objs))
	for i, o := range objs {
		files[i] = skill.File{Path: strings.TrimPrefix(o.Key, prefix), Size: o.Size}
	}
	skill.SortFiles(files)
	return files, nil
}

// Package local implements [blob.Store] over a local directory.
//
// Every access goes through an [os.Root] opened on the directory, so no key
// can reach a file outside it: ".." is rejected by [blob.ValidateKey] before
// any I/O, and a symbolic link is followed only while it stays inside the
// root. A link that leaves the root gives [blob.ErrEscape] (for Stat, Get,
// Put) or is skipped (in listings). Symbolic links to directories are never
// descended by List, which keeps walks finite.
//
// Writes are atomic: the content goes to a temporary file under the reserved
// top-level directory ".skillgate-tmp", is fsynced, renamed over the target
// and the parent directory is fsynced. Readers therefore see the old or the
// new file, and a crash leaves no torn object. Keys whose first segment is
// ".skillgate-tmp" are reserved ([blob.ErrInvalidKey]).
//
// The namespace is hierarchical: "a" cannot be a file while "a/b" exists.
// Put reports such clashes as [blob.ErrConflict]. Delete removes directories
// left empty, so deleted trees leave no trace in listings. Directories created
// by other tools may be empty; ListDir reports them as they are.
package local

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

// DefaultMaxObjectSize is the largest object a Store reads or writes unless
// [Options.MaxObjectSize] says otherwise.
const DefaultMaxObjectSize = 64 << 20

// tmpDir is the reserved top-level directory for in-flight writes.
const tmpDir = ".skillgate-tmp"

// staleTmpAge is how old a leftover temporary file must be before Open
// removes it; younger ones may belong to another process writing right now.
const staleTmpAge = time.Hour

// Options configures a Store. The zero value (or nil) means the defaults.
type Options struct {
	// MaxObjectSize bounds every object read or written, in bytes.
	// Zero means DefaultMaxObjectSize.
	MaxObjectSize int64
	// FileMode is the permission of new files; zero means 0o644.
	FileMode fs.FileMode
	// DirMode is the permission of new directories; zero means 0o755.
	DirMode fs.FileMode
	// ReadOnly opens an existing directory without writing to it: Open
	// neither creates it nor its temporary directory, nor removes stale
	// temporary files, and Put and Delete return [blob.ErrReadOnly].
	ReadOnly bool
}

// Store is a [blob.Store] over one local directory. It is safe for concurrent
// use, also by several processes sharing the directory.
type Store struct {
	root     *os.Root
	maxSize  int64
	fileMode fs.FileMode
	dirMode  fs.FileMode
	readOnly bool
	// escapeErr is the error value os.Root uses for "path escapes from
	// parent". The os package does not export it, so Open captures it once by
	// asking the root for "..", and errors.Is matches it afterwards.
	escapeErr error
}

var (
	_ blob.Store     = (*Store)(nil)
	_ blob.DirLister = (*Store)(nil)
	_ blob.DirOpener = (*Store)(nil)
)

// Open opens (creating it if needed) the directory dir as a Store. opts may be
// nil. Temporary files older than an hour left by crashed writers are removed.
// With [Options.ReadOnly], dir must exist (an error wrapping
// [fs.ErrNotExist] otherwise) and nothing is written to it.
// Close the Store to release the directory handle.
func Open(dir string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxObjectSize <= 0 {
		o.MaxObjectSize = DefaultMaxObjectSize
	}
	if o.FileMode == 0 {
		o.FileMode = 0o644
	}
	if o.DirMode == 0 {
		o.DirMode = 0o755
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(dir, o.DirMode); err != nil {
			return nil, fmt.Errorf("local: create %s: %w", dir, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("local: open %s: %w", dir, err)
	}
	s := &Store{root: root, maxSize: o.MaxObjectSize, fileMode: o.FileMode, dirMode: o.DirMode, readOnly: o.ReadOnly}
	if _, err := root.Stat(".."); err != nil {
		s.escapeErr = errors.Unwrap(err)
	}
	if o.ReadOnly {
		return s, nil
	}
	if err := root.MkdirAll(tmpDir, 0o700); err != nil {
		root.Close()
		return nil, fmt.Errorf("local: create %s/%s: %w", dir, tmpDir, err)
	}
	s.removeStaleTemps(time.Now())
	return s, nil
}

// Close releases the directory handle. Operations after Close fail.
func (s *Store) Close() error { return s.root.Close() }

// Dir returns the directory the Store was opened on.
func (s *Store) Dir() string { return s.root.Name() }

func (s *Store) removeStaleTemps(now time.Time) {
	d, err := s.root.Open(tmpDir)
	if err != nil {
		return
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range ents {
		info, err := e.Info()
		if err == nil && now.Sub(info.ModTime()) > staleTmpAge {
			_ = s.root.Remove(tmpDir + "/" + e.Name())
		}
	}
}

func (s *Store) checkKey(key string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	if key == tmpDir || len(key) > len(tmpDir) && key[:len(tmpDir)+1] == tmpDir+"/" {
		return fmt.Errorf("%w: %q is reserved by the local store", blob.ErrInvalidKey, key)
	}
	return nil
}

func (s *Store) checkPrefix(prefix string) error {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return err
	}
	if prefix != "" {
		return s.checkKey(prefix[:len(prefix)-1])
	}
	return nil
}

// mapErr translates os errors into the blob sentinels.
func (s *Store) mapErr(op, key string, err error) error {
	switch {
	case s.escapeErr != nil && errors.Is(err, s.escapeErr):
		return fmt.Errorf("%w: %s %q: a symbolic link leaves the root", blob.ErrEscape, op, key)
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%w: %s %q: too many symbolic links", blob.ErrEscape, op, key)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	}
	return fmt.Errorf("local: %s %q: %w", op, key, err)
}

func infoOf(key string, fi fs.FileInfo) blob.Info {
	return blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
}

// Stat implements [blob.Store.Stat].
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := s.checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	fi, err := s.root.Stat(key)
	if err != nil {
		return blob.Info{}, s.mapErr("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		return blob.Info{}, fmt.Errorf("%w: %q is not a regular file", blob.ErrNotFound, key)
	}
	return infoOf(key, fi), nil
}

// Get implements [blob.Store.Get]. The file is opened non-blocking so that a
// FIFO planted in the tree cannot hang the caller; anything but a regular
// file is reported as not found.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := s.checkKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, blob.Info{}, err
	}
	f, err := s.root.OpenFile(key, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, blob.Info{}, s.mapErr("open", key, err)
	}
	return s.checkOpened(f, key)
}

// checkOpened accepts an opened file only if it is a regular file within
// the size limit.
func (s *Store) checkOpened(f *os.File, key string) (io.ReadCloser, blob.Info, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, blob.Info{}, s.mapErr("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, blob.Info{}, fmt.Errorf("%w: %q is not a regular file", blob.ErrNotFound, key)
	}
	if fi.Size() > s.maxSize {
		f.Close()
		return nil, infoOf(key, fi), fmt.Errorf("%w: %q is %d bytes, limit %d", blob.ErrTooLarge, key, fi.Size(), s.maxSize)
	}
	return f, infoOf(key, fi), nil
}

// OpenDir implements [blob.DirOpener]: the directory is opened once as a
// nested os.Root, so each Get through the handle is a single openat.
func (s *Store) OpenDir(ctx context.Context, prefix string) (blob.DirHandle, error) {
	if err := s.checkPrefix(prefix); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sub, err := s.root.OpenRoot(prefixDir(prefix))
	if err != nil {
		return nil, s.mapErr("open", prefix, err)
	}
	return &dirHandle{s: s, sub: sub, prefix: prefix}, nil
}

type dirHandle struct {
	s      *Store
	sub    *os.Root
	prefix string
}

// Get implements [blob.DirHandle.Get]. A symbolic link is resolved against
// the directory first; if that would leave the directory, the lookup is
// redone against the store root, so the rules are exactly those of
// [Store.Get].
func (d *dirHandle) Get(ctx context.Context, name string) (io.ReadCloser, blob.Info, error) {
	key := d.prefix + name
	if strings.IndexByte(name, '/') >= 0 {
		return nil, blob.Info{}, fmt.Errorf("%w: %q is not a single segment", blob.ErrInvalidKey, name)
	}
	if err := d.s.checkKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, blob.Info{}, err
	}
	f, err := d.sub.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		if d.s.escapeErr != nil && errors.Is(err, d.s.escapeErr) {
			return d.s.Get(ctx, key)
		}
		return nil, blob.Info{}, d.s.mapErr("open", key, err)
	}
	return d.s.checkOpened(f, key)
}

// Close implements [blob.DirHandle.Close].
func (d *dirHandle) Close() error { return d.sub.Close() }

// entry is one directory entry classified for listing.
type entry struct {
	name  string
	isDir bool
	info  fs.FileInfo // files only
}

// sortKey orders entries so that a depth-first walk yields keys in byte
// order: a directory "a" contributes keys "a/…", which sort after "a-b".
func (e entry) sortKey() string {
	if e.isDir {
		return e.name + "/"
	}
	return e.name
}

// readDir lists dir (relative to the root), classifying entries: regular
// files and symbolic links that resolve to regular files inside the root are
// files; real directories are directories; everything else (links leaving
// the root, links to directories, devices, FIFOs, sockets) is skipped.
// A missing directory, or a path that is a file, reads as empty.
func (s *Store) readDir(dir string) ([]entry, error) {
	d, err := s.root.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, nil
		}
		return nil, s.mapErr("open", dir, err)
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		return nil, nil
	}
	des, err := d.ReadDir(-1)
	if err != nil {
		return nil, s.mapErr("readdir", dir, err)
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if dir == "." && name == tmpDir {
			continue
		}
		switch t := de.Type(); {
		case t.IsDir():
			out = append(out, entry{name: name, isDir: true})
		case t.IsRegular():
			fi, err := de.Info()
			if err != nil {
				continue // removed meanwhile
			}
			out = append(out, entry{name: name, info: fi})
		case t&fs.ModeSymlink != 0:
			fi, err := s.root.Stat(path.Join(dir, name))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out = append(out, entry{name: name, info: fi})
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Compare(a.sortKey(), b.sortKey()) })
	return out, nil
}

func prefixDir(prefix string) string {
	if prefix == "" {
		return "."
	}
	return prefix[:len(prefix)-1]
}

// List implements [blob.Store.List] with a depth-first walk in key order, so
// a limited listing stops early instead of walking the whole tree.
func (s *Store) List(ctx context.Context, prefix string, limit int) ([]blob.Info, error) {
	if err := s.checkPrefix(prefix); err != nil {
		return nil, err
	}
	var out []blob.Info
	if err := s.walk(ctx, prefixDir(prefix), prefix, limit, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Store) walk(ctx context.Context, dir, keyPrefix string, limit int, out *[]blob.Info) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ents, err := s.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if limit > 0 && len(*out) >= limit {
			return nil
		}
		key := keyPrefix + e.name
		if blob.ValidateKey(key) != nil {
			continue
		}
		if e.isDir {
			if err := s.walk(ctx, path.Join(dir, e.name), key+"/", limit, out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, infoOf(key, e.info))
	}
	return nil
}

// ListDir implements [blob.DirLister] with a single directory read.
func (s *Store) ListDir(ctx context.Context, prefix string, limit int) (blob.Dir, error) {
	if err := s.checkPrefix(prefix); err != nil {
		return blob.Dir{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Dir{}, err
	}
	ents, err := s.readDir(prefixDir(prefix))
	if err != nil {
		return blob.Dir{}, err
	}
	var d blob.Dir
	for _, e := range ents {
		if limit > 0 && len(d.Files)+len(d.Dirs) >= limit {
			break
		}
		key := prefix + e.name
		if blob.ValidateKey(key) != nil {
			continue
		}
		if e.isDir {
			d.Dirs = append(d.Dirs, e.name)
		} else {
			d.Files = append(d.Files, infoOf(key, e.info))
		}
	}
	return d, nil
}

// Put implements [blob.Store.Put]: temporary file, fsync, rename, fsync of
// the parent directory.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := s.checkKey(key); err != nil {
		return err
	}
	if s.readOnly {
		return fmt.Errorf("%w: put %q in %s", blob.ErrReadOnly, key, s.root.Name())
	}
	if size < 0 {
		return fmt.Errorf("%w: %q: negative size %d", blob.ErrSizeMismatch, key, size)
	}
	if size > s.maxSize {
		return fmt.Errorf("%w: %q is %d bytes, limit %d", blob.ErrTooLarge, key, size, s.maxSize)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	tmp, err := s.writeTemp(key, r, size)
	if err != nil {
		return err
	}
	if err := s.install(tmp, key); err != nil {
		_ = s.root.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp copies exactly size bytes of r into a new synced temporary file
// and returns its name relative to the root.
func (s *Store) writeTemp(key string, r io.Reader, size int64) (string, error) {
	name := tmpDir + "/" + rand.Text()
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.fileMode)
	if errors.Is(err, fs.ErrNotExist) { // someone removed the temp dir
		if err = s.root.MkdirAll(tmpDir, 0o700); err == nil {
			f, err = s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, s.fileMode)
		}
	}
	if err != nil {
		return "", fmt.Errorf("local: create temporary file for %q: %w", key, err)
	}
	fail := func(err error) (string, error) {
		f.Close()
		_ = s.root.Remove(name)
		return "", err
	}
	n, err := io.CopyN(f, r, size)
	if errors.Is(err, io.EOF) {
		return fail(fmt.Errorf("%w: %q: reader gave %d bytes, declared %d", blob.ErrSizeMismatch, key, n, size))
	}
	if err != nil {
		return fail(fmt.Errorf("local: write %q: %w", key, err))
	}
	var one [1]byte
	if k, _ := io.ReadFull(r, one[:]); k > 0 {
		return fail(fmt.Errorf("%w: %q: reader gave more than the declared %d bytes", blob.ErrSizeMismatch, key, size))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("local: sync %q: %w", key, err))
	}
	if err := f.Close(); err != nil {
		_ = s.root.Remove(name)
		return "", fmt.Errorf("local: close %q: %w", key, err)
	}
	return name, nil
}

// install renames tmp to key, creating parent directories. A concurrent
// Delete may prune a parent between MkdirAll and Rename, so a vanished parent
// is recreated a few times before giving up.
func (s *Store) install(tmp, key string) error {
	dir := path.Dir(key)
	var err error
	for range 3 {
		if dir != "." {
			if err = s.root.MkdirAll(dir, s.dirMode); err != nil {
				return s.conflictErr(key, err)
			}
		}
		err = s.root.Rename(tmp, key)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return s.conflictErr(key, err)
		}
	}
	if err != nil {
		return fmt.Errorf("local: rename into %q: %w", key, err)
	}
	if d, err := s.root.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("local: sync directory of %q: %w", key, err)
		}
	}
	return nil
}

func (s *Store) conflictErr(key string, err error) error {
	switch {
	case s.escapeErr != nil && errors.Is(err, s.escapeErr):
		return fmt.Errorf("%w: put %q: a symbolic link leaves the root", blob.ErrEscape, key)
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, fs.ErrExist),
		errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTEMPTY):
		return fmt.Errorf("%w: %q: %v", blob.ErrConflict, key, err)
	}
	return fmt.Errorf("local: put %q: %w", key, err)
}

// Delete implements [blob.Store.Delete] and prunes parent directories left
// empty (up to, not including, the root).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.checkKey(key); err != nil {
		return err
	}
	if s.readOnly {
		return fmt.Errorf("%w: delete %q in %s", blob.ErrReadOnly, key, s.root.Name())
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := s.root.Lstat(key)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return s.mapErr("delete", key, err)
	}
	if fi.IsDir() {
		return nil // a directory is not an object
	}
	if err := s.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.mapErr("delete", key, err)
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		// Only real directories are pruned: removing a symbolic link to a
		// directory would unlink the link itself.
		if fi, err := s.root.Lstat(dir); err != nil || !fi.IsDir() {
			break
		}
		if s.root.Remove(dir) != nil {
			break // not empty (or gone): stop pruning
		}
	}
	return nil
}

package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/storage/blob"
)

// errReadOnly is returned by the write methods of a [tree].
var errReadOnly = errors.New("session: skill trees are read-only")

// tree is a read-only [blob.Store] over one skill directory that serves
// exactly the files the registry recorded for the skill's version: the
// regular files the scan saw, nested skills, dot-entries and symbolic links
// excluded. Contents are read live from the directory, through an [os.Root]
// opened on it, so nothing outside the skill directory is reachable; a
// recorded file that has since been replaced by a symbolic link or a
// directory, or removed, is not found. Nothing is ever written into the
// directory: skill roots may be read-only and are never touched.
//
// The root is opened per operation, so a tree holds no file descriptors and
// needs no closing. A tree is safe for concurrent use.
type tree struct {
	dir   string
	keys  []string // recorded files, sorted
	known map[string]bool
	// allowHardLinks serves files with more than one name; otherwise
	// they are not found (see [LocalSource]).
	allowHardLinks bool
	// beforeOpen, when set (by tests), runs between Get's Lstat and its
	// open: the window in which a file can be swapped.
	beforeOpen func(key string)
	// digests, when set (see verifyFiles), are the recorded files' own
	// digests, checked on every read.
	digests map[string]string
	// files are the recorded files, as the scan listed them.
	files []skill.File
}

var (
	_ blob.Store     = (*tree)(nil)
	_ blob.DirLister = (*tree)(nil)
	_ blob.DirOpener = (*tree)(nil)
)

// newTree returns the tree of the skill in dir whose recorded file list
// (store.Version.Files: a JSON array of {path, size}) is filesJSON.
func newTree(dir string, filesJSON json.RawMessage) (*tree, error) {
	var files []skill.File
	if len(filesJSON) > 0 {
		if err := json.Unmarshal(filesJSON, &files); err != nil {
			return nil, fmt.Errorf("session: file list of %s: %w", dir, err)
		}
	}
	t := &tree{dir: dir, known: make(map[string]bool, len(files)), files: files}
	for _, f := range files {
		if blob.ValidateKey(f.Path) != nil || t.known[f.Path] {
			continue
		}
		t.known[f.Path] = true
		t.keys = append(t.keys, f.Path)
	}
	sort.Strings(t.keys)
	return t, nil
}

// lstat returns the metadata of a recorded regular file.
func (t *tree) lstat(root *os.Root, key string) (fs.FileInfo, error) {
	return t.lstatIn(root, key, key)
}

// lstatIn is lstat of key, found as name in r (the skill directory, or the
// key's directory opened in it).
func (t *tree) lstatIn(r *os.Root, key, name string) (fs.FileInfo, error) {
	fi, err := r.Lstat(name)
	if err != nil {
		if gone(err) {
			return nil, fmt.Errorf("%w: %q", blob.ErrNotFound, key)
		}
		return nil, fmt.Errorf("session: stat %s in %s: %w", key, t.dir, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %q is not a regular file", blob.ErrNotFound, key)
	}
	if err := t.checkLinks(key, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// checkLinks refuses a file with more than one name unless the tree allows
// hard links.
func (t *tree) checkLinks(key string, fi fs.FileInfo) error {
	if n := fileinfo.LinkCount(fi); n > 1 && !t.allowHardLinks {
		return fmt.Errorf("%w: %q is a hard link (the file has %d names), not served from %s; list its root under hard_links roots if that is intended", blob.ErrNotFound, key, n, t.dir)
	}
	return nil
}

// gone reports errors that mean the recorded file is no longer there as a
// file of the tree: missing, a path component that is now a file or a loop,
// or a symbolic link that leaves the directory (os.Root's "path escapes
// from parent", which the os package does not export).
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) ||
		strings.Contains(err.Error(), "path escapes from parent")
}

func (t *tree) open() (*os.Root, error) {
	root, err := os.OpenRoot(t.dir)
	if err != nil {
		return nil, fmt.Errorf("session: open skill directory %s: %w", t.dir, err)
	}
	return root, nil
}

func (t *tree) check(key string) error {
	if err := blob.ValidateKey(key); err != nil {
		return err
	}
	if !t.known[key] {
		return fmt.Errorf("%w: %q", blob.ErrNotFound, key)
	}
	return nil
}

// Stat implements [blob.Store].
func (t *tree) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	if err := t.check(key); err != nil {
		return blob.Info{}, err
	}
	root, err := t.open()
	if err != nil {
		return blob.Info{}, err
	}
	defer root.Close()
	fi, err := t.lstat(root, key)
	if err != nil {
		return blob.Info{}, err
	}
	return blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Get implements [blob.Store]. The file is opened without blocking and kept
// only when the opened descriptor is still the regular file that Lstat saw:
// a symbolic link or a FIFO swapped in between is refused, never followed or
// waited on.
func (t *tree) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, blob.Info{}, err
	}
	if err := t.check(key); err != nil {
		return nil, blob.Info{}, err
	}
	root, err := t.open()
	if err != nil {
		return nil, blob.Info{}, err
	}
	defer root.Close()
	return t.getIn(root, key, key)
}

// getIn is Get of the recorded key, found as name in r (the skill
// directory, or the key's directory opened in it).
func (t *tree) getIn(r *os.Root, key, name string) (io.ReadCloser, blob.Info, error) {
	lfi, err := t.lstatIn(r, key, name)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if t.beforeOpen != nil {
		t.beforeOpen(key)
	}
	f, err := r.OpenFile(name, os.O_RDONLY|fileinfo.OpenNonblock, 0)
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("%w: %q: %v", blob.ErrNotFound, key, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !os.SameFile(lfi, fi) {
		f.Close()
		return nil, blob.Info{}, fmt.Errorf("%w: %q changed while being opened", blob.ErrNotFound, key)
	}
	if err := t.checkLinks(key, fi); err != nil {
		f.Close()
		return nil, blob.Info{}, err
	}
	info := blob.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
	if want, ok := t.digests[key]; ok {
		return verified(f, info, want)
	}
	return f, info, nil
}

// verifyFiles makes every read of the tree check the file against the
// digest the scan recorded for it, when the scan recorded one for every
// file: a file changed since the scan is not found, never served.
func (t *tree) verifyFiles() {
	d := make(map[string]string, len(t.files))
	for _, f := range t.files {
		if f.Digest == "" {
			return
		}
		d[f.Path] = f.Digest
	}
	t.digests = d
}

// maxVerifiedRead bounds the files read whole to be checked before they
// are served; larger ones are checked as they are read, the error coming
// at their end.
const maxVerifiedRead = 16 << 20

// verified returns f's content checked against want (skill.FileDigest).
func verified(f *os.File, info blob.Info, want string) (io.ReadCloser, blob.Info, error) {
	changed := fmt.Errorf("%w: %q changed since the scan", blob.ErrNotFound, info.Key)
	if info.Size > maxVerifiedRead {
		return &hashReader{f: f, h: sha256.New(), want: want, changed: changed}, info, nil
	}
	defer f.Close()
	b := make([]byte, info.Size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, blob.Info{}, changed
	}
	if skill.FileDigest(b) != want {
		return nil, blob.Info{}, changed
	}
	return io.NopCloser(bytes.NewReader(b)), info, nil
}

// hashReader checks a large file's digest as it is read.
type hashReader struct {
	f       *os.File
	h       hash.Hash
	want    string
	changed error
}

func (r *hashReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	if err == io.EOF && "sha256:"+hex.EncodeToString(r.h.Sum(nil)) != r.want {
		return n, r.changed
	}
	return n, err
}

func (r *hashReader) Close() error { return r.f.Close() }

// List implements [blob.Store]: the recorded files under prefix that are
// still regular files.
func (t *tree) List(ctx context.Context, prefix string, limit int) ([]blob.Info, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	root, err := t.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	w := dirWalker{t: t, root: root}
	defer w.close()
	i, _ := slices.BinarySearch(t.keys, prefix)
	var out []blob.Info
	for ; i < len(t.keys) && strings.HasPrefix(t.keys[i], prefix); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if limit > 0 && len(out) >= limit {
			break
		}
		fi, err := w.lstat(t.keys[i])
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, blob.Info{Key: t.keys[i], Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return out, nil
}

// ListDir implements [blob.DirLister]: only the files directly under prefix
// are stat'ed; sub-directories come from the recorded list.
func (t *tree) ListDir(ctx context.Context, prefix string, limit int) (blob.Dir, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return blob.Dir{}, err
	}
	root, err := t.open()
	if err != nil {
		return blob.Dir{}, err
	}
	defer root.Close()
	w := dirWalker{t: t, root: root}
	defer w.close()
	var d blob.Dir
	lastDir := ""
	i, _ := slices.BinarySearch(t.keys, prefix)
	for ; i < len(t.keys) && strings.HasPrefix(t.keys[i], prefix); i++ {
		if err := ctx.Err(); err != nil {
			return blob.Dir{}, err
		}
		if limit > 0 && len(d.Files)+len(d.Dirs) >= limit {
			break
		}
		rest := t.keys[i][len(prefix):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			if name := rest[:j]; name != lastDir {
				d.Dirs = append(d.Dirs, name)
				lastDir = name
			}
			continue
		}
		fi, err := w.lstat(t.keys[i])
		if errors.Is(err, blob.ErrNotFound) {
			continue
		}
		if err != nil {
			return blob.Dir{}, err
		}
		d.Files = append(d.Files, blob.Info{Key: t.keys[i], Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return d, nil
}

// Put implements [blob.Store]; skill trees are read-only.
func (t *tree) Put(context.Context, string, io.Reader, int64) error { return errReadOnly }

// Delete implements [blob.Store]; skill trees are read-only.
func (t *tree) Delete(context.Context, string) error { return errReadOnly }

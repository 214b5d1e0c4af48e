// Package blob is skillgate's small storage interface for skill trees, session
// workspaces and artefacts: read-mostly objects addressed by slash-separated
// keys.
//
// A [Store] holds objects (never empty directories): directories are implied
// by the keys, as in S3. Two implementations exist: [github.com/skillgate/skillgate/internal/storage/blob/local]
// (a local directory confined with os.Root, the default) and
// [github.com/skillgate/skillgate/internal/storage/blob/s3] (S3-compatible object storage). Both
// pass the conformance suite in [github.com/skillgate/skillgate/internal/storage/blob/blobtest].
//
// Keys are validated by [ValidateKey] before any I/O: they are relative
// ("a/b.md", never "/a"), have no empty, "." or ".." segments, no backslash, no
// NUL or other control characters, are valid UTF-8 and at most [MaxKeyLen]
// bytes. The skill layout of seed 003 is provided by [SkillPrefix] and
// [WorkspacePrefix].
//
// A tour:
//
//	st, _ := local.Open("/var/lib/skillgate/blobs", nil)
//	prefix, _ := bucket.SkillPrefix("acme", "escrituras", "compraventa")
//	_ = st.Put(ctx, prefix+"SKILL.md", strings.NewReader(body), int64(len(body)))
//	data, info, _ := blob.ReadAll(ctx, st, prefix+"SKILL.md", 1<<20)
//	files, _ := st.List(ctx, prefix, 0)
package blob

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Info describes one object.
type Info struct {
	// Key is the object's key relative to the store (without any prefix the
	// store itself is configured with).
	Key string
	// Size is the exact size of the object in bytes.
	Size int64
	// ModTime is the time the object was last written, as the store reports
	// it (S3 stores report whole seconds).
	ModTime time.Time
	// ETag is the store's tag of the object's content, when it has one
	// (S3 stores; "" for the local store): a listing that shows another
	// ETag at the same key shows another content.
	ETag string
}

// Store is the storage contract shared by the local and S3 implementations.
// Every method takes a context first and honours its cancellation. All methods
// are safe for concurrent use.
type Store interface {
	// Stat returns the metadata of the object at key.
	// Errors: ErrInvalidKey, ErrNotFound (also when key names a directory),
	// ErrEscape.
	Stat(ctx context.Context, key string) (Info, error)

	// Get opens the object at key for reading; the caller must close the
	// reader. The returned Info's Size is exact: the reader yields that many
	// bytes. Errors: ErrInvalidKey, ErrNotFound, ErrTooLarge (the object is
	// larger than the store's maximum object size), ErrEscape.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)

	// List returns the objects whose keys start with prefix, recursively,
	// sorted by key (byte order). prefix is "" (the whole store) or a valid
	// key followed by "/" (see ValidatePrefix). At most limit objects are
	// returned, the first ones in key order; limit <= 0 means no limit. Ask
	// for one more than you show to learn whether the listing was cut. A
	// prefix with no objects gives an empty list, not an error. Objects whose
	// names are not valid keys (written by other tools) are skipped.
	// Errors: ErrInvalidKey.
	List(ctx context.Context, prefix string, limit int) ([]Info, error)

	// Put stores exactly size bytes read from r at key, replacing any object
	// there atomically: a concurrent reader sees the old or the new content,
	// never a mix, and a crash leaves one or the other. Errors: ErrInvalidKey,
	// ErrTooLarge (size over the store's maximum), ErrSizeMismatch (r yielded
	// more or fewer than size bytes; nothing is stored), ErrConflict
	// (hierarchical stores only), ErrEscape.
	Put(ctx context.Context, key string, r io.Reader, size int64) error

	// Delete removes the object at key. Deleting a missing object is not an
	// error, as in S3. Errors: ErrInvalidKey, ErrEscape.
	Delete(ctx context.Context, key string) error
}

// Dir is a one-level listing returned by [ListDir].
type Dir struct {
	// Files are the objects directly under the prefix, sorted by key.
	Files []Info
	// Dirs are the names (single segments, without a trailing slash) of the
	// directories directly under the prefix, sorted.
	Dirs []string
}

// DirLister is an optional [Store] extension that lists one level of the
// hierarchy without walking the whole subtree. Both skillgate stores
// implement it; [ListDir] falls back to [Store.List] for stores that do not.
type DirLister interface {
	// ListDir returns the files and sub-directory names directly under
	// prefix ("" or a valid key followed by "/"), at most limit entries in
	// total (files and directories merged in key order; limit <= 0 means no
	// limit). Errors: ErrInvalidKey.
	ListDir(ctx context.Context, prefix string, limit int) (Dir, error)
}

// DirOpener is an optional [Store] extension for callers that read many
// objects of the same directory, such as grep: the directory is looked up
// once and each object with a single step. The local store implements it
// (one openat per file instead of one per path segment); for stores without
// it, read each object with [Store.Get].
type DirOpener interface {
	// OpenDir returns a handle on the directory prefix ("" or a valid key
	// followed by "/"). Errors: ErrInvalidKey, ErrNotFound, ErrEscape.
	OpenDir(ctx context.Context, prefix string) (DirHandle, error)
}

// DirHandle reads objects directly under one directory. It is not safe for
// concurrent use; open one per goroutine.
type DirHandle interface {
	// Get is [Store.Get] for the key prefix+name, where name is a single
	// segment, with the same errors and the same symbolic-link rules.
	Get(ctx context.Context, name string) (io.ReadCloser, Info, error)
	// Close releases the handle.
	Close() error
}

// ListDir lists one level under prefix, using the store's [DirLister] when it
// has one and otherwise deriving the level from a full recursive listing.
// Errors are those of [DirLister.ListDir].
func ListDir(ctx context.Context, s Store, prefix string, limit int) (Dir, error) {
	if dl, ok := s.(DirLister); ok {
		return dl.ListDir(ctx, prefix, limit)
	}
	if err := ValidatePrefix(prefix); err != nil {
		return Dir{}, err
	}
	all, err := s.List(ctx, prefix, 0)
	if err != nil {
		return Dir{}, err
	}
	return DirFromList(prefix, all, limit), nil
}

// DirFromList derives a one-level listing of prefix from a recursive,
// key-sorted listing of it, keeping at most limit entries (limit <= 0: all).
// Store implementations and [ListDir] share it.
func DirFromList(prefix string, all []Info, limit int) Dir {
	var d Dir
	lastDir := ""
	for _, in := range all {
		if limit > 0 && len(d.Files)+len(d.Dirs) >= limit {
			break
		}
		rest := in.Key[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			name := rest[:i]
			if name != lastDir {
				d.Dirs = append(d.Dirs, name)
				lastDir = name
			}
			continue
		}
		d.Files = append(d.Files, in)
	}
	return d
}

// ReadAll reads the whole object at key into a new slice. It refuses objects
// larger than max bytes with ErrTooLarge before reading them (max <= 0 leaves
// only the store's own bound). Errors are those of [Store.Get], plus I/O
// errors while reading.
func ReadAll(ctx context.Context, s Store, key string, max int64) ([]byte, Info, error) {
	return ReadInto(ctx, s, key, max, nil)
}

// ReadInto is [ReadAll] that reuses buf when it is large enough, so that hot
// loops (grep over many files) read without allocating. The returned slice
// aliases buf when it fits; it is valid until buf is reused.
func ReadInto(ctx context.Context, s Store, key string, max int64, buf []byte) ([]byte, Info, error) {
	rc, info, err := s.Get(ctx, key)
	if err != nil {
		return nil, Info{}, err
	}
	return ReadBody(rc, info, max, buf)
}

// ReadBody reads and closes an object body returned by Get (of a [Store] or
// a [DirHandle]) into buf, reused when large enough, refusing bodies larger
// than max (max <= 0: no bound) with ErrTooLarge.
func ReadBody(rc io.ReadCloser, info Info, max int64, buf []byte) ([]byte, Info, error) {
	defer rc.Close()
	key := info.Key
	if max > 0 && info.Size > max {
		return nil, info, fmt.Errorf("%w: %q is %d bytes, limit %d", ErrTooLarge, key, info.Size, max)
	}
	n := int(info.Size)
	if cap(buf) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, info, fmt.Errorf("blob: read %q: %w", key, err)
	}
	return buf, info, nil
}

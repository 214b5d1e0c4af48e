package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TreeLimits bounds the files of one skill tree.
type TreeLimits struct {
	MaxFiles int   // regular files in the tree
	MaxBytes int64 // their total size
}

// DefaultTreeLimits are generous for real skills and small for abuse.
var DefaultTreeLimits = TreeLimits{MaxFiles: 10000, MaxBytes: 256 << 20}

// File is one regular file of a skill tree.
type File struct {
	// Path is relative to the skill directory, slash-separated.
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"-"`
	// Changed is the file's status change time (ctime), when known. Unlike
	// ModTime it cannot be set back: an edit that keeps the size and
	// restores the modification time still changes it.
	Changed time.Time `json:"-"`
	// Digest is the SHA-256 of the file's content alone, "sha256:<hex>",
	// as [DigestFiles] records it at scan time ("" when not recorded, as
	// for versions scanned before skillgate recorded it). The MCP Skills
	// extension lists it per file; the tree digest does not depend on it.
	Digest string `json:"digest,omitempty"`
}

// Skip reports whether a directory entry is left out of scans and skill
// trees: dot entries (.git, .DS_Store) and node_modules.
func Skip(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

// ListFiles lists the regular files of the skill tree in fsys, sorted by
// path. It leaves out what [Skip] names, symbolic links (never followed) and
// nested skills (subdirectories with their own SKILL.md), which are skills of
// their own.
func ListFiles(ctx context.Context, fsys fs.FS, lim TreeLimits) ([]File, error) {
	var files []File
	var total int64
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if Skip(d.Name()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, n := range FileNames {
				if fi, err := fs.Stat(fsys, p+"/"+n); err == nil && fi.Mode().IsRegular() {
					return fs.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, File{Path: p, Size: fi.Size(), ModTime: fi.ModTime()})
		total += fi.Size()
		if len(files) > lim.MaxFiles {
			return errorOf(ErrTreeLimit, "skill tree has more than %d files; remove generated files or split the skill", lim.MaxFiles)
		}
		if total > lim.MaxBytes {
			return errorOf(ErrTreeLimit, "skill tree has more than %d bytes; keep large assets out of the skill", lim.MaxBytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	SortFiles(files)
	return files, nil
}

// SortFiles sorts by path, bytewise: the order the digest is defined on.
func SortFiles(files []File) {
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// Digest computes the content digest of a skill tree: SHA-256 over, for
// each file in path order, its slash-separated relative path, a NUL byte,
// its size in decimal, a NUL byte and its content. It is "sha256:<hex>" and
// the same for the same tree on any machine. files must be sorted by path
// (as ListFiles returns them); a file whose size changed meanwhile is an
// error, so a digest never describes a tree that did not exist.
func Digest(ctx context.Context, fsys fs.FS, files []File) (string, error) {
	return DigestWith(ctx, fsys, files, "", nil)
}

// DigestWith is [Digest] for a caller that already holds the content of
// one file (typically SKILL.md, just parsed): that file is hashed from
// content instead of being read again. Its size must match the listing.
func DigestWith(ctx context.Context, fsys fs.FS, files []File, knownPath string, known []byte) (string, error) {
	return digestTree(ctx, fsys, files, knownPath, known, nil)
}

// DigestFiles is [DigestWith] that also records each file's own SHA-256 in
// files[i].Digest, computed from the same bytes in the same read (the
// tree digest is unchanged): the scan calls it, so that a skill's files can
// be served with per-file digests without reading them again.
func DigestFiles(ctx context.Context, fsys fs.FS, files []File, knownPath string, known []byte) (string, error) {
	return digestTree(ctx, fsys, files, knownPath, known, sha256.New())
}

// DigestHex returns the 64 lowercase hex digits of a digest written as
// [Digest] and [FileDigest] write them ("sha256:<hex>"), and false for
// anything else: how a digest becomes part of a storage key.
func DigestHex(digest string) (string, bool) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
		return "", false
	}
	return h, true
}

// FileDigest returns the digest [DigestFiles] records for content:
// "sha256:" and the lowercase hex SHA-256 of its bytes.
func FileDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// digestTree computes the tree digest; with fh it records each file's own
// digest in files[i].Digest.
func digestTree(ctx context.Context, fsys fs.FS, files []File, knownPath string, known []byte, fh hash.Hash) (string, error) {
	h := sha256.New()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	for i, f := range files {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		if f.Path == knownPath && knownPath != "" {
			if int64(len(known)) != f.Size {
				return "", fmt.Errorf("digest %s: file changed while being read (%d bytes, expected %d); scan again", f.Path, len(known), f.Size)
			}
			writeHeader(h, f.Path, f.Size)
			h.Write(known)
			if fh != nil {
				files[i].Digest = FileDigest(known)
			}
			continue
		}
		if fh != nil {
			fh.Reset()
		}
		if err := digestFile(h, fh, fsys, f, *bp); err != nil {
			return "", err
		}
		if fh != nil {
			files[i].Digest = "sha256:" + hex.EncodeToString(fh.Sum((*bp)[:0]))
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func writeHeader(h hash.Hash, p string, size int64) {
	_, _ = io.WriteString(h, p)
	h.Write([]byte{0})
	_, _ = io.WriteString(h, strconv.FormatInt(size, 10))
	h.Write([]byte{0})
}

// digestFile hashes f into h and, when fh is not nil, its content alone
// into fh.
func digestFile(h, fh hash.Hash, fsys fs.FS, f File, buf []byte) error {
	if !fs.ValidPath(f.Path) || path.Clean(f.Path) != f.Path {
		return fmt.Errorf("digest: invalid path %q", f.Path)
	}
	r, err := fsys.Open(f.Path)
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	defer r.Close()
	writeHeader(h, f.Path, f.Size)
	// Exactly the listed size is hashed: a file that shrank is an error, and
	// one that grew changes its stat fingerprint, so the next scan sees it.
	for left := f.Size; left > 0; {
		chunk := buf
		if int64(len(chunk)) > left {
			chunk = chunk[:left]
		}
		n, err := io.ReadFull(r, chunk)
		h.Write(chunk[:n])
		if fh != nil {
			fh.Write(chunk[:n])
		}
		left -= int64(n)
		if err != nil {
			return fmt.Errorf("digest %s: file changed while being read (%d bytes short); scan again", f.Path, left)
		}
	}
	return nil
}

// DigestBytes computes the same digest as [Digest] from in-memory content,
// for trees that do not live on a file system (archives, object stores).
func DigestBytes(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		_, _ = io.WriteString(h, p)
		h.Write([]byte{0})
		_, _ = io.WriteString(h, strconv.Itoa(len(files[p])))
		h.Write([]byte{0})
		h.Write(files[p])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

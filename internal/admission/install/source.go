package install

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/registry/signature"
)

// SourceLimits bound what an install source (a directory or an archive) may
// hold. Archives are hostile: the limits apply to what entries claim and to
// what they really expand to.
type SourceLimits struct {
	// MaxFiles is the most regular files. Default 10,000.
	MaxFiles int
	// MaxBytes is the most bytes of file content, expanded. Default 256 MiB.
	MaxBytes int64
	// MaxArchiveBytes is the largest archive file accepted. Default 256 MiB.
	MaxArchiveBytes int64
	// MaxEntries is the most archive entries of any kind. Default 20,000.
	MaxEntries int
	// MaxDepth is the deepest path, in components. Default 16.
	MaxDepth int
	// MaxPathBytes bounds one path. Default 1,024.
	MaxPathBytes int
}

// DefaultSourceLimits match package skill's tree limits.
var DefaultSourceLimits = SourceLimits{
	MaxFiles:        skill.DefaultTreeLimits.MaxFiles,
	MaxBytes:        skill.DefaultTreeLimits.MaxBytes,
	MaxArchiveBytes: 256 << 20,
	MaxEntries:      20000,
	MaxDepth:        16,
	MaxPathBytes:    1024,
}

func (l SourceLimits) withDefaults() SourceLimits {
	d := DefaultSourceLimits
	if l.MaxFiles > 0 {
		d.MaxFiles = l.MaxFiles
	}
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxArchiveBytes > 0 {
		d.MaxArchiveBytes = l.MaxArchiveBytes
	}
	if l.MaxEntries > 0 {
		d.MaxEntries = l.MaxEntries
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	if l.MaxPathBytes > 0 {
		d.MaxPathBytes = l.MaxPathBytes
	}
	return d
}

// Tree is a skill tree read into memory: slash-separated relative paths to
// content, and the name of the directory it came from.
type Tree struct {
	// Name is the skill directory's name (for an archive: its single
	// top-level directory, else the archive's name without extension).
	Name  string
	Files map[string][]byte
	// Signature is the skill's signature file (signature.FileName at its
	// top level), kept apart: like every dot file it is not part of the
	// tree or its digest.
	Signature []byte
	// sigs are signature files found anywhere, by path, until the top
	// level is known (stripTop).
	sigs map[string][]byte
}

// settle picks the top-level signature of t once its paths are final.
func (t *Tree) settle() *Tree {
	t.Signature = t.sigs[signature.FileName]
	t.sigs = nil
	return t
}

// ReadSource reads a skill from a directory, a .tar.gz/.tgz or a .zip file,
// within lim. Symbolic links, hard links (in a directory: regular files with
// more than one name), devices and paths that leave the tree are refused, never followed or extracted; entries that package skill
// skips (dot files, node_modules) are left out, as a scan would.
func ReadSource(ctx context.Context, src string, lim SourceLimits) (*Tree, error) {
	lim = lim.withDefaults()
	fi, err := os.Lstat(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSource, src, err)
	}
	var t *Tree
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%w: %s is a symbolic link; give the path it points to", ErrInvalidSource, src)
	case fi.IsDir():
		t, err = readDir(ctx, src, lim)
	case strings.HasSuffix(src, ".tar.gz") || strings.HasSuffix(src, ".tgz"):
		t, err = readArchive(ctx, src, fi, lim, readTarGz)
	case strings.HasSuffix(src, ".zip"):
		t, err = readArchive(ctx, src, fi, lim, readZip)
	default:
		return nil, fmt.Errorf("%w: %s is neither a directory, a .tar.gz nor a .zip", ErrInvalidSource, src)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// collector applies the limits while files are added.
type collector struct {
	lim   SourceLimits
	files map[string][]byte
	sigs  map[string][]byte
	total int64
	where string
}

// signatureFile reports whether p (a cleaned path) names a skill's
// signature file, which is kept apart though it is a dot file.
func signatureFile(p string) bool { return path.Base(p) == signature.FileName }

// keepSignature reads a signature file into c.sigs, bounded.
func (c *collector) keepSignature(p string, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, signature.MaxEnvelopeBytes+1))
	if err != nil {
		return c.fail("entry %q: %v", p, err)
	}
	if len(data) > signature.MaxEnvelopeBytes {
		return c.fail("entry %q: a signature file larger than %d bytes", p, signature.MaxEnvelopeBytes)
	}
	if c.sigs == nil {
		c.sigs = map[string][]byte{}
	}
	c.sigs[p] = data
	return nil
}

func (c *collector) fail(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidSource, c.where, fmt.Sprintf(format, args...))
}

// clean checks one entry path and returns it cleaned, or "" when the entry
// is to be skipped as a scan would skip it.
func (c *collector) clean(name string) (string, error) {
	if len(name) > c.lim.MaxPathBytes {
		return "", c.fail("entry path longer than %d bytes", c.lim.MaxPathBytes)
	}
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) || strings.Contains(name, "\\") {
		return "", c.fail("entry %q: path must be UTF-8 without NUL or backslash", name)
	}
	if strings.HasPrefix(name, "/") || filepath.IsAbs(name) {
		return "", c.fail("entry %q: absolute path (an archive may only hold relative paths)", name)
	}
	p := path.Clean(strings.TrimPrefix(name, "./"))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", c.fail("entry %q leaves the archive (path traversal)", name)
	}
	if p == "." {
		return "", nil
	}
	parts := strings.Split(p, "/")
	if len(parts) > c.lim.MaxDepth {
		return "", c.fail("entry %q is deeper than %d levels", name, c.lim.MaxDepth)
	}
	for i, part := range parts {
		if skill.Skip(part) && (i < len(parts)-1 || part != signature.FileName) {
			return "", nil
		}
	}
	return p, nil
}

func (c *collector) add(p string, r io.Reader, claimed int64) error {
	if signatureFile(p) {
		return c.keepSignature(p, r)
	}
	if _, dup := c.files[p]; dup {
		return c.fail("entry %q appears twice", p)
	}
	if len(c.files) >= c.lim.MaxFiles {
		return c.fail("more than %d files", c.lim.MaxFiles)
	}
	if claimed > c.lim.MaxBytes-c.total {
		return c.fail("files larger than %d bytes in total", c.lim.MaxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(r, c.lim.MaxBytes-c.total+1))
	if err != nil {
		return c.fail("entry %q: %v", p, err)
	}
	c.total += int64(len(data))
	if c.total > c.lim.MaxBytes {
		return c.fail("files larger than %d bytes in total", c.lim.MaxBytes)
	}
	c.files[p] = data
	return nil
}

func readDir(ctx context.Context, dir string, lim SourceLimits) (*Tree, error) {
	c := &collector{lim: lim, files: map[string][]byte{}, where: dir}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSource, dir, err)
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if skill.Skip(d.Name()) && (d.IsDir() || d.Name() != signature.FileName) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if strings.Count(p, "/")+1 > lim.MaxDepth {
			return c.fail("%s is deeper than %d levels", p, lim.MaxDepth)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return c.fail("%s is a symbolic link; skillgate never follows links in a skill (copy the file instead)", p)
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return c.fail("%s is not a regular file", p)
		}
		f, err := root.OpenFile(p, os.O_RDONLY|fileinfo.OpenNonblock, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return c.fail("%s is not a regular file", p)
		}
		if n := fileinfo.LinkCount(fi); n > 1 {
			return c.fail("%s is a hard link (the file has %d names); skillgate refuses hard links in a skill, since one can expose a file from outside it (copy the file instead)", p, n)
		}
		return c.add(p, f, fi.Size())
	})
	if err != nil {
		if errors.Is(err, ErrInvalidSource) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSource, dir, err)
	}
	abs, _ := filepath.Abs(dir)
	return (&Tree{Name: filepath.Base(abs), Files: c.files, sigs: c.sigs}).settle(), nil
}

type archiveReader func(ctx context.Context, data []byte, c *collector) error

func readArchive(ctx context.Context, src string, fi fs.FileInfo, lim SourceLimits, read archiveReader) (*Tree, error) {
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalidSource, src)
	}
	if fi.Size() > lim.MaxArchiveBytes {
		return nil, fmt.Errorf("%w: %s: archive larger than %d bytes", ErrInvalidSource, src, lim.MaxArchiveBytes)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSource, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, lim.MaxArchiveBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidSource, src, err)
	}
	if int64(len(data)) > lim.MaxArchiveBytes {
		return nil, fmt.Errorf("%w: %s: archive larger than %d bytes", ErrInvalidSource, src, lim.MaxArchiveBytes)
	}
	c := &collector{lim: lim, files: map[string][]byte{}, where: src}
	if err := read(ctx, data, c); err != nil {
		return nil, err
	}
	base := filepath.Base(src)
	for _, ext := range []string{".tar.gz", ".tgz", ".zip"} {
		base = strings.TrimSuffix(base, ext)
	}
	return stripTop(&Tree{Name: base, Files: c.files, sigs: c.sigs}).settle(), nil
}

// stripTop removes a single top-level directory that holds SKILL.md, the way
// most archives of one skill are built (name/SKILL.md).
func stripTop(t *Tree) *Tree {
	for _, n := range skill.FileNames {
		if _, ok := t.Files[n]; ok {
			return t
		}
	}
	top := ""
	for p := range t.Files {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return t
		}
		if top == "" {
			top = p[:i]
		} else if p[:i] != top {
			return t
		}
	}
	if top == "" {
		return t
	}
	out := &Tree{Name: top, Files: make(map[string][]byte, len(t.Files))}
	for p, b := range t.Files {
		out.Files[p[len(top)+1:]] = b
	}
	for p, b := range t.sigs {
		if rest, ok := strings.CutPrefix(p, top+"/"); ok {
			if out.sigs == nil {
				out.sigs = map[string][]byte{}
			}
			out.sigs[rest] = b
		}
	}
	return out
}

// ReadArchiveBytes reads an in-memory archive (kind "tar.gz", "tar" or "zip") with
// the same checks as ReadSource; name is used in messages. It is the entry
// point for fuzzing and for uploads.
func ReadArchiveBytes(ctx context.Context, name, kind string, data []byte, lim SourceLimits) (*Tree, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxArchiveBytes {
		return nil, fmt.Errorf("%w: %s: archive larger than %d bytes", ErrInvalidSource, name, lim.MaxArchiveBytes)
	}
	c := &collector{lim: lim, files: map[string][]byte{}, where: name}
	var err error
	switch kind {
	case "tar.gz":
		err = readTarGz(ctx, data, c)
	case "zip":
		err = readZip(ctx, data, c)
	case "tar":
		err = readTar(ctx, data, c)
	default:
		return nil, fmt.Errorf("%w: %s: unknown archive kind %q", ErrInvalidSource, name, kind)
	}
	if err != nil {
		return nil, err
	}
	return stripTop(&Tree{Name: strings.TrimSuffix(name, "."+kind), Files: c.files, sigs: c.sigs}).settle(), nil
}

// readTarStreamBounded reads a tar stream (git archive's output) with the
// same checks as [ReadArchiveBytes], holding only the files it keeps: a
// stream of more than lim.MaxArchiveBytes stops there with an error
// naming the bound, and an entry larger than what is left of lim.MaxBytes
// is refused from its header, before a byte of it is read. Memory stays
// within the bounds whatever the stream's size.
func readTarStreamBounded(ctx context.Context, name string, r io.Reader, lim SourceLimits) (*Tree, error) {
	lim = lim.withDefaults()
	br := &boundedReader{r: r, left: lim.MaxArchiveBytes}
	c := &collector{lim: lim, files: map[string][]byte{}, where: name}
	err := readTarStream(ctx, br, c)
	if br.over {
		return nil, fmt.Errorf("%w: %s: archive larger than %d bytes", ErrInvalidSource, name, lim.MaxArchiveBytes)
	}
	if err != nil {
		return nil, err
	}
	return stripTop(&Tree{Name: name, Files: c.files, sigs: c.sigs}).settle(), nil
}

// errArchiveBound ends a stream read past its bound.
var errArchiveBound = errors.New("archive bound reached")

// boundedReader reads at most left bytes of r; reading past that fails
// with errArchiveBound and sets over.
type boundedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a stream that ends exactly at the bound
		// from a longer one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			b.over = true
			return 0, errArchiveBound
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func readTarGz(ctx context.Context, data []byte, c *collector) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return c.fail("not a gzip file: %v", err)
	}
	defer zr.Close()
	return readTarStream(ctx, zr, c)
}

func readTar(ctx context.Context, data []byte, c *collector) error {
	return readTarStream(ctx, bytes.NewReader(data), c)
}

func readTarStream(ctx context.Context, r io.Reader, c *collector) error {
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		if n >= c.lim.MaxEntries {
			return c.fail("more than %d entries", c.lim.MaxEntries)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return c.fail("corrupt tar: %v", err)
		}
		p, err := c.clean(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return c.fail("entry %q is a link; an installable skill holds regular files only", h.Name)
		case tar.TypeXGlobalHeader:
			continue
		default:
			return c.fail("entry %q is not a regular file (type %q)", h.Name, string(h.Typeflag))
		}
		if p == "" {
			continue
		}
		if err := c.add(p, tr, h.Size); err != nil {
			return err
		}
	}
}

func readZip(ctx context.Context, data []byte, c *collector) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return c.fail("not a zip file: %v", err)
	}
	if len(zr.File) > c.lim.MaxEntries {
		return c.fail("more than %d entries", c.lim.MaxEntries)
	}
	files := append([]*zip.File(nil), zr.File...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		p, err := c.clean(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return c.fail("entry %q is a symbolic link; an installable skill holds regular files only", f.Name)
		case mode.IsDir() || strings.HasSuffix(f.Name, "/"):
			continue
		case !mode.IsRegular():
			return c.fail("entry %q is not a regular file", f.Name)
		}
		if p == "" {
			continue
		}
		if f.UncompressedSize64 > uint64(c.lim.MaxBytes) {
			return c.fail("entry %q claims %d bytes, more than %d", f.Name, f.UncompressedSize64, c.lim.MaxBytes)
		}
		rc, err := f.Open()
		if err != nil {
			return c.fail("entry %q: %v", f.Name, err)
		}
		err = c.add(p, rc, int64(f.UncompressedSize64))
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

package launch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// WriteArchive writes the fetched tree in dir as a gzip'd tar: its
// directories, regular files (with their executable bit) and links, in
// path order. Object storage keeps a version's packages this way, links
// and modes included, for replicas to restore ([ExtractArchive]).
func WriteArchive(ctx context.Context, w io.Writer, dir string) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, Format: tar.FormatPAX}
		switch t := d.Type(); {
		case t.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, name+"/", 0o755
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := linkInside(dir, rel, target); err != nil {
				return err
			}
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, target, 0o777
		case t.IsRegular():
			h.Typeflag, h.Size, h.Mode = tar.TypeReg, info.Size(), 0o644
			if info.Mode()&0o111 != 0 {
				h.Mode = 0o755
			}
		default:
			return fmt.Errorf("%s is a %s, not a file or a link", rel, t.Type())
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, h.Size)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ExtractArchive unpacks an archive [WriteArchive] wrote into dir, which
// must not exist, within the default bounds of a fetched tree: entries
// are directories, regular files and links only, every path and link
// stays inside dir, and the total size and count are bounded. On error
// nothing is left at dir. Check the result with [TreeDigest].
func ExtractArchive(ctx context.Context, r io.Reader, dir string) (err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("package archive: %w", err)
	}
	tr := tar.NewReader(zr)
	var total int64
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("package archive: %w", err)
		}
		if n >= DefaultMaxFiles {
			return fmt.Errorf("package archive: more than %d entries", DefaultMaxFiles)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if !fs.ValidPath(name) || path.Clean(name) != name || name == "." {
			return fmt.Errorf("package archive: entry %q is not a path inside the tree", h.Name)
		}
		full := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(full, 0o755); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := linkInside(dir, filepath.FromSlash(name), h.Linkname); err != nil {
				return fmt.Errorf("package archive: %w", err)
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, full); err != nil {
				return err
			}
		case tar.TypeReg:
			total += h.Size
			if h.Size < 0 || total > DefaultMaxBytes {
				return fmt.Errorf("package archive: more than %d bytes", DefaultMaxBytes)
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			// O_EXCL: an entry never writes through a link or over
			// another entry.
			f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, cerr := io.CopyN(f, tr, h.Size)
			if err := f.Close(); cerr == nil {
				cerr = err
			}
			if cerr != nil {
				return fmt.Errorf("package archive: %s: %w", name, cerr)
			}
		default:
			return fmt.Errorf("package archive: entry %q is neither a directory, a file nor a link", h.Name)
		}
	}
}

package launch_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/launch"
)

// TestArchiveRoundTrip: a fetched tree written by WriteArchive and
// extracted again hashes to the same digest: files, executable bits and
// links kept.
func TestArchiveRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	for p, c := range map[string]string{"package.json": "{}\n", "node_modules/echo/index.js": "#!/usr/bin/env node\n", "node_modules/echo/lib/a.js": "a\n"} {
		full := filepath.Join(src, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(src, "node_modules/echo/index.js"), 0o755)
	os.MkdirAll(filepath.Join(src, "node_modules/.bin"), 0o755)
	if err := os.Symlink("../echo/index.js", filepath.Join(src, "node_modules/.bin/echo")); err != nil {
		t.Fatal(err)
	}
	want, err := launch.TreeDigest(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := launch.WriteArchive(ctx, &b, src); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := launch.ExtractArchive(ctx, bytes.NewReader(b.Bytes()), dst); err != nil {
		t.Fatal(err)
	}
	if got, err := launch.TreeDigest(ctx, dst); err != nil || got != want {
		t.Fatalf("extracted tree %s, %v; want %s", got, err, want)
	}
	if err := launch.ExtractArchive(ctx, bytes.NewReader(b.Bytes()), dst); err == nil {
		t.Error("extracting over an existing directory succeeded")
	}
}

// tarGz builds an archive of hdrs (each with its body).
func tarGz(t testing.TB, entries ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	for i := 0; i < len(entries); i += 2 {
		h := entries[i].(*tar.Header)
		body := entries[i+1].(string)
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

// TestExtractArchiveRefusals: entries that would leave the tree, write
// through a link, or are neither files, directories nor links are refused,
// and nothing is left.
func TestExtractArchiveRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		archive []byte
		err     string
	}{
		{"dot-dot", tarGz(t, &tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Mode: 0o644}, "x"),
			`package archive: entry "../evil" is not a path inside the tree`},
		{"absolute", tarGz(t, &tar.Header{Name: "/etc/evil", Typeflag: tar.TypeReg, Mode: 0o644}, "x"),
			`package archive: entry "/etc/evil" is not a path inside the tree`},
		{"link out", tarGz(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "../../etc"}, ""),
			"package archive: l links to ../../etc, outside the fetched tree"},
		{"absolute link", tarGz(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, ""),
			"package archive: l links to the absolute path /etc/passwd, outside the fetched tree"},
		{"write through a link", tarGz(t, &tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "x"}, "",
			&tar.Header{Name: "l", Typeflag: tar.TypeReg, Mode: 0o644}, "evil"), "open "},
		{"device", tarGz(t, &tar.Header{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o644}, ""),
			`package archive: entry "dev" is neither a directory, a file nor a link`},
		{"hard link", tarGz(t, &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "x"}, ""),
			`package archive: entry "h" is neither a directory, a file nor a link`},
		{"not gzip", []byte("plain"), "package archive: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), "out")
			err := launch.ExtractArchive(context.Background(), bytes.NewReader(tc.archive), dst)
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if _, serr := os.Lstat(dst); !os.IsNotExist(serr) {
				t.Errorf("left %s behind: %v", dst, serr)
			}
		})
	}
}

// FuzzExtractArchive: whatever the bucket returns, extraction never
// writes outside its directory, and what it accepts is a tree
// TreeDigest reads.
func FuzzExtractArchive(f *testing.F) {
	f.Add(tarGz(f, &tar.Header{Name: "a/b.js", Typeflag: tar.TypeReg, Mode: 0o755}, "x", &tar.Header{Name: "a/l", Typeflag: tar.TypeSymlink, Linkname: "b.js"}, ""))
	f.Add(tarGz(f, &tar.Header{Name: "../x", Typeflag: tar.TypeReg, Mode: 0o644}, "x"))
	f.Add(tarGz(f, &tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, ""))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dst := filepath.Join(parent, "out")
		err := launch.ExtractArchive(context.Background(), bytes.NewReader(data), dst)
		ents, _ := os.ReadDir(parent)
		if err != nil {
			if len(ents) != 0 {
				t.Fatalf("a refused archive left %v", ents)
			}
			return
		}
		if len(ents) != 1 || ents[0].Name() != "out" {
			t.Fatalf("extraction wrote %v beside its directory", ents)
		}
		if _, err := launch.TreeDigest(context.Background(), dst); err != nil {
			t.Fatalf("an accepted archive is no tree: %v", err)
		}
	})
}

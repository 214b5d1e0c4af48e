package skill_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillgate/skillgate/internal/model/skill"
)

// TestDigestFilesRecordsEachFile checks that DigestFiles computes the
// same tree digest as DigestWith and records each file's own SHA-256, for
// the file given by content as for those read, including one larger than
// the read buffer.
func TestDigestFilesRecordsEachFile(t *testing.T) {
	content := map[string]string{
		"SKILL.md":         "---\nname: x\ndescription: y\n---\nbody\n",
		"a/big.bin":        strings.Repeat("0123456789abcdef", 10000), // 160 KB: several reads
		"references/b.md":  "b",
		"references/empty": "",
	}
	fsys := fstest.MapFS{}
	var files []skill.File
	for p, c := range content {
		fsys[p] = &fstest.MapFile{Data: []byte(c)}
		files = append(files, skill.File{Path: p, Size: int64(len(c))})
	}
	skill.SortFiles(files)
	ctx := context.Background()
	want, err := skill.DigestWith(ctx, fsys, files, "SKILL.md", []byte(content["SKILL.md"]))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Digest != "" {
			t.Fatalf("DigestWith recorded a digest for %s", f.Path)
		}
	}
	got, err := skill.DigestFiles(ctx, fsys, files, "SKILL.md", []byte(content["SKILL.md"]))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("DigestFiles tree digest = %s, DigestWith = %s", got, want)
	}
	if bytesDigest := skill.DigestBytes(map[string][]byte{"SKILL.md": []byte(content["SKILL.md"]), "a/big.bin": []byte(content["a/big.bin"]),
		"references/b.md": []byte("b"), "references/empty": nil}); got != bytesDigest {
		t.Errorf("DigestFiles tree digest = %s, DigestBytes = %s", got, bytesDigest)
	}
	for _, f := range files {
		sum := sha256.Sum256([]byte(content[f.Path]))
		if w := "sha256:" + hex.EncodeToString(sum[:]); f.Digest != w {
			t.Errorf("%s: Digest = %q, want %q", f.Path, f.Digest, w)
		}
	}
}

// BenchmarkDigestFiles compares the tree digest alone (DigestWith) with
// the tree digest and every file's own (DigestFiles) on a tree shaped like
// bench/gen's skills (a 10 KB SKILL.md and four 4 KB files), to show what
// recording per-file digests adds to a scan's hashing.
func BenchmarkDigestFiles(b *testing.B) {
	fsys := fstest.MapFS{}
	var files []skill.File
	for p, n := range map[string]int{"SKILL.md": 10 << 10, "scripts/run.sh": 4 << 10, "scripts/helper.py": 4 << 10, "references/REFERENCE.md": 4 << 10, "assets/template.txt": 4 << 10} {
		fsys[p] = &fstest.MapFile{Data: []byte(strings.Repeat("x", n))}
		files = append(files, skill.File{Path: p, Size: int64(n)})
	}
	skill.SortFiles(files)
	ctx := context.Background()
	known := fsys["SKILL.md"].Data
	b.Run("tree", func(b *testing.B) {
		for b.Loop() {
			if _, err := skill.DigestWith(ctx, fsys, files, "SKILL.md", known); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tree+files", func(b *testing.B) {
		for b.Loop() {
			if _, err := skill.DigestFiles(ctx, fsys, files, "SKILL.md", known); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package skill_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillgate/skillgate/skill"
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

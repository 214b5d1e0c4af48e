package vfsbench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
)

// TestPeerReadFormat checks the peer's read_file against the formatting
// skillgate's read_file tool uses (vfs.FormatContent, vfs.TruncateOutput), so that the benchmark
// compares the same work: whole files, offsets and limits.
func TestPeerReadFormat(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "bench", "s1", "references")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	content := hundredKB()
	if err := os.WriteFile(filepath.Join(dir, "big.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p := NewPeer(root)
	for _, tc := range []struct{ offset, limit int }{{0, 0}, {0, 10}, {1990, 0}, {5, 3}, {1999, 1}} {
		want, err := vfs.FormatContent([]byte(content), tc.offset, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		want = vfs.TruncateOutput(want) // as the read_file tool does
		got, err := p.Read("/skills/s1/references/big.md", tc.offset, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("offset %d limit %d: the peer's text differs from vfs.FormatContent:\n%.200q\n%.200q", tc.offset, tc.limit, got, want)
		}
	}
	if got, err := p.Grep("vendedora", "/skills"); err != nil || got != "/skills/s1/references/big.md" {
		t.Fatalf("Grep = %q, %v", got, err)
	}
	if got, err := p.Grep("absent", "/skills"); err != nil || got != "No matches found" {
		t.Fatalf("Grep = %q, %v", got, err)
	}
}

//go:build unix

package fileinfo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLinkCount counts a file's names as a hard link is added.
func TestLinkCount(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for want, link := range []string{"", filepath.Join(dir, "b")} {
		if link != "" {
			if err := os.Link(a, link); err != nil {
				t.Fatal(err)
			}
		}
		fi, err := os.Lstat(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := LinkCount(fi); got != uint64(want+1) {
			t.Errorf("LinkCount = %d, want %d", got, want+1)
		}
	}
}

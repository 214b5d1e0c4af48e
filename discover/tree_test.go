package discover_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/discover"
)

// TestOpenTreeRefusesLinks checks that a file or directory replaced by a
// link after the walk is not followed when the tree is read.
func TestOpenTreeRefusesLinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.txt": "secret", "dir/x.md": "x"})
	dir := writeTree(t, map[string]string{"SKILL.md": "s", "ok/file.md": "ok"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	tree, err := discover.OpenTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	f, err := tree.Open("ok/file.md")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "ok" {
		t.Errorf("read %q", b)
	}
	for _, p := range []string{"link.txt", "linkdir/x.md", "../" + filepath.Base(outside) + "/secret.txt"} {
		if f, err := tree.Open(p); err == nil {
			f.Close()
			t.Errorf("%s: opened through a link or out of the tree", p)
		}
	}
}

package discover_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
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

// TestTreesRefuseLinks checks the trees opened from a shared root: files
// read as from the tree itself, and a link anywhere on the way, the skill
// directory or a directory above it, is refused, never followed.
func TestTreesRefuseLinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"SKILL.md": "outside", "secret.txt": "secret"})
	root := writeTree(t, map[string]string{
		"cat/skill/SKILL.md":       "s",
		"cat/skill/ok/file.md":     "ok",
		"other/skill/SKILL.md":     "o",
		"moved/skill/SKILL.md":     "m",
		"cat/skill2/SKILL.md":      "s2",
		"cat/skill2/refs/file.txt": "r",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "cat/skill/link.txt")); err != nil {
		t.Fatal(err)
	}
	// A skill directory, and a directory above one, swapped for links
	// after the walk.
	if err := os.RemoveAll(filepath.Join(root, "other/skill")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "other/skill")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "skill", "SKILL.md"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	trees := discover.OpenTrees(root)
	defer trees.Close()
	read := func(dir, name string) (string, error) {
		tree, err := trees.Open(filepath.Join(root, dir))
		if err != nil {
			return "", err
		}
		defer tree.Close()
		f, err := tree.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}
	for _, tc := range []struct{ dir, name, want string }{
		{"cat/skill", "SKILL.md", "s"},
		{"cat/skill", "ok/file.md", "ok"},
		{"cat/skill2", "refs/file.txt", "r"},
	} {
		got, err := read(tc.dir, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%s/%s: got %q, %v; want %q", tc.dir, tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ dir, name string }{
		{"cat/skill", "link.txt"},
		{"cat/skill", "../skill2/SKILL.md"},
		{"other/skill", "SKILL.md"},
		{"moved/skill", "SKILL.md"},
	} {
		if got, err := read(tc.dir, tc.name); err == nil {
			t.Errorf("%s/%s: read %q through a link or out of the tree", tc.dir, tc.name, got)
		}
	}
	// A directory outside the root is opened on its own.
	if got, err := func() (string, error) {
		tree, err := trees.Open(outside)
		if err != nil {
			return "", err
		}
		defer tree.Close()
		f, err := tree.Open("SKILL.md")
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}(); err != nil || got != "outside" {
		t.Errorf("tree outside the root: got %q, %v", got, err)
	}
}

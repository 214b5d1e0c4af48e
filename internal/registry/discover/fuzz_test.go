package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// FuzzWalk builds a small tree from fuzzed paths (some of them skills, some
// links pointing out of the root) and checks the walk's invariants: every
// candidate is inside the root, its files are sorted, regular and inside
// it, and nothing outside the root is ever listed.
func FuzzWalk(f *testing.F) {
	f.Add("a/SKILL.md\nb/c/SKILL.md\nb/c/d.txt", "a/link")
	f.Add("x/skill.md\nx/y/SKILL.md\nx/y/z/w.md\n.git/SKILL.md", "x/y/out")
	f.Add("node_modules/m/SKILL.md\nn/SKILL.md", "n")
	f.Fuzz(func(t *testing.T, files, link string) {
		root := t.TempDir()
		outside := t.TempDir()
		os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("---\nname: out\n---\n"), 0o644)
		n := 0
		for _, p := range strings.Split(files, "\n") {
			if n >= 20 || !validRel(p) {
				continue
			}
			n++
			full := filepath.Join(root, filepath.FromSlash(p))
			if os.MkdirAll(filepath.Dir(full), 0o755) != nil {
				continue
			}
			os.WriteFile(full, []byte("---\nname: x\ndescription: y\n---\n"), 0o644)
		}
		if validRel(link) {
			full := filepath.Join(root, filepath.FromSlash(link))
			if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
				os.Symlink(outside, full)
			}
		}
		res, err := discover.Walk(context.Background(), discover.Root{Path: root}, discover.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Candidates {
			if !strings.HasPrefix(c.Dir, root+string(os.PathSeparator)) {
				t.Fatalf("candidate %s outside root %s", c.Dir, root)
			}
			if !sort.SliceIsSorted(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path }) {
				t.Fatalf("files of %s not sorted", c.Rel)
			}
			for _, fl := range c.Files {
				fi, err := os.Lstat(filepath.Join(c.Dir, filepath.FromSlash(fl.Path)))
				if err != nil || !fi.Mode().IsRegular() {
					t.Fatalf("%s/%s is not a regular file inside the skill: %v", c.Rel, fl.Path, err)
				}
			}
			tree, err := discover.OpenTree(c.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := skill.Digest(context.Background(), tree, c.Files); err != nil {
				t.Fatalf("digest %s: %v", c.Rel, err)
			}
			tree.Close()
		}
	})
}

func validRel(p string) bool {
	if p == "" || len(p) > 200 || strings.ContainsAny(p, "\x00\\") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." || len(s) > 60 {
			return false
		}
	}
	return true
}

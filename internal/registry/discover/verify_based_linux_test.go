package discover_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// basedTree is a root with one category of 80 skills (161 directories, more
// than two stat blocks hold, so that the second block, s31 to s62, has its
// base in "cat") and one skill elsewhere.
func basedTree(t *testing.T) string {
	t.Helper()
	files := map[string]string{"other/x/SKILL.md": sk("x")}
	for i := range 80 {
		s := fmt.Sprintf("s%02d", i)
		files["cat/"+s+"/SKILL.md"] = sk(s)
		files["cat/"+s+"/refs/r.md"] = "ref " + s
	}
	return writeTree(t, files)
}

// TestVerifyBasedSameAsPlain checks the verification's fast path, which
// stats a block's paths from the directory all of them are in, against
// the plain path, which stats every path from the root: after each change
// both give the same answer, and the answer a walk would (verified only
// when nothing changed).
func TestVerifyBasedSameAsPlain(t *testing.T) {
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		want   bool
	}{
		{"nothing changed", func(*testing.T, string) {}, true},
		{"a file edited in place, same size and mtime", func(t *testing.T, root string) {
			p := filepath.Join(root, "cat/s40/refs/r.md")
			fi, err := os.Stat(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte("REF s40"), 0o644))
			must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}, false},
		{"a file added", func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "cat/s41/new.md"), []byte("n"), 0o644))
		}, false},
		{"a directory removed", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "cat/s42/refs")))
		}, false},
		{"a file's mode changed", func(t *testing.T, root string) {
			must(t, os.Chmod(filepath.Join(root, "cat/s43/SKILL.md"), 0o755))
		}, false},
		{"the base replaced by a link to a copy", func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "cat"), filepath.Join(root, "cat.moved")))
			must(t, os.Symlink("cat.moved", filepath.Join(root, "cat")))
		}, false},
		{"the base replaced by a file", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "cat")))
			must(t, os.WriteFile(filepath.Join(root, "cat"), []byte("x"), 0o644))
		}, false},
		{"the base removed", func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "cat")))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			root := basedTree(t)
			settle()
			var c memCache
			if _, err := discover.Scan(ctx, discover.Root{Path: root}, discover.DefaultLimits, &c); err != nil || !discover.HasStateForTest(c.get(root), root) {
				t.Fatalf("scan: %v, no state", err)
			}
			rec := c.get(root)
			if _, based, err := discover.VerifyStatsForTest(ctx, rec, root, true); err != nil || based == 0 {
				t.Fatalf("%d blocks with a base (%v): the tree does not exercise the fast path", based, err)
			}
			tt.change(t, root)
			fast, _, ferr := discover.VerifyStatsForTest(ctx, rec, root, true)
			plain, _, perr := discover.VerifyStatsForTest(ctx, rec, root, false)
			if fast != plain || (ferr == nil) != (perr == nil) {
				t.Fatalf("fast path %v (%v), plain path %v (%v)", fast, ferr, plain, perr)
			}
			if fast != tt.want || ferr != nil {
				t.Fatalf("verified %v (%v), want %v", fast, ferr, tt.want)
			}
		})
	}
}

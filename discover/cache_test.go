package discover_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/skillgate/skillgate/discover"
)

// backdate sets every directory's modification time an hour back, so its
// listing may be cached.
func backdate(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

func TestWalkCached(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listing cache is Linux-only")
	}
	root := writeTree(t, map[string]string{"a/SKILL.md": sk("a"), "a/scripts/run.sh": "echo"})
	backdate(t, root)
	ctx := context.Background()
	first, err := discover.WalkCached(ctx, discover.Root{Path: root}, discover.DefaultLimits, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Listings) != 3 {
		t.Fatalf("listings %d, want 3 (root, a, a/scripts)", len(first.Listings))
	}
	// A file edited in place is seen although its directory's listing is reused.
	os.WriteFile(filepath.Join(root, "a/scripts/run.sh"), []byte("echo longer"), 0o644)
	backdate(t, root)
	second, err := discover.WalkCached(ctx, discover.Root{Path: root}, discover.DefaultLimits, first.Listings)
	if err != nil {
		t.Fatal(err)
	}
	if second.Candidates[0].Fingerprint == first.Candidates[0].Fingerprint {
		t.Error("in-place edit not seen")
	}
	// A listing is trusted while its mtime matches: a fake entry shows it is reused.
	fake := discover.Cache{}
	for p, l := range second.Listings {
		fake[p] = l
	}
	l := fake[filepath.Join(root, "a")]
	l.Entries += "fghost.md\x00"
	fake[filepath.Join(root, "a")] = l
	third, _ := discover.WalkCached(ctx, discover.Root{Path: root}, discover.DefaultLimits, fake)
	if third.Candidates[0].Problem == "" {
		t.Error("cached listing was not used (the ghost file should fail to stat)")
	}
	// A new skill changes its parent's mtime, so the parent is read again.
	writeTree2(t, root, map[string]string{"b/SKILL.md": sk("b")})
	fourth, _ := discover.WalkCached(ctx, discover.Root{Path: root}, discover.DefaultLimits, second.Listings)
	if len(fourth.Candidates) != 2 {
		t.Errorf("new skill not found: %d candidates", len(fourth.Candidates))
	}
	// A directory changed within the last moments is not cached.
	if _, ok := fourth.Listings[root]; ok {
		t.Error("just-modified root listing was cached")
	}
}

func writeTree2(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

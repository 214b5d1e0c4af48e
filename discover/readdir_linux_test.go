package discover

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadDirComplete lists directories that need one, several and many
// getdents batches, by absolute path and relative to a root.
func TestReadDirComplete(t *testing.T) {
	for _, n := range []int{0, 1, 100, 117, 400} {
		dir := t.TempDir()
		want := map[string]bool{}
		for i := 0; i < n; i++ {
			// Long names fill the 32 KiB buffer after about 120 entries.
			name := fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 240))
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			want[name] = true
		}
		self, parent := newDirReader(dir), newDirReader(filepath.Dir(dir))
		defer self.close()
		defer parent.close()
		for _, dr := range []dirReader{self, parent, {}} {
			es, _, _, err := dr.readDirCached(dir, func([]entry) bool { return true }, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != n {
				t.Fatalf("%d entries: read %d (root %q)", n, len(es), dr.root)
			}
			for _, e := range es {
				if !want[e.name] || !e.isRegular() {
					t.Fatalf("unexpected entry %q", e.name)
				}
			}
		}
	}
}

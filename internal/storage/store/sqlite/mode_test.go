package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestOpenModes checks that a new database and its directory are the
// owner's only, and that a database left 0644 by an earlier version is
// narrowed to 0600 when opened.
func TestOpenModes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "skillgate.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v; want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("reopened: %v %v; want 0600", fi.Mode().Perm(), err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store/postgres/pgtest"
)

// TestStoreSelection: a scan into the store --store names is what ls
// reads from the same store, SQLite file or PostgreSQL database, and the
// data directory's default file is not made; a URL of another kind is a
// usage error.
func TestStoreSelection(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Take notes.\n---\nBody.\n"})
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "elsewhere.db") },
		"postgres": func(t *testing.T) string { return pgtest.NewDatabase(t) },
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			loc := stores[name](t)
			if code, _, errs := run(t, data, "--store", loc, "scan", "--root", root); code != 0 {
				t.Fatalf("scan: %d %s", code, errs)
			}
			code, out, errs := runEnv(t, data, map[string]string{"SKILLGATE_STORE": loc}, "ls")
			if code != 0 || !strings.Contains(out, "notes") {
				t.Fatalf("ls: %d %q %s", code, out, errs)
			}
			if _, err := os.Stat(filepath.Join(data, "skillgate.db")); err == nil {
				t.Error("the data directory's skillgate.db was made")
			}
		})
	}
	code, _, errs := run(t, t.TempDir(), "--store", "mysql://db/skillgate", "ls")
	if want := "Error: --store mysql://…: a store is a postgres:// or postgresql:// URL, or the path of a SQLite file\n"; code != 2 || errs != want {
		t.Errorf("another kind of URL: %d %q, want 2 %q", code, errs, want)
	}
}

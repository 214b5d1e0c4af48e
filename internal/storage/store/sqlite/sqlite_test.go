package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "skillgate.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != sqlite.LatestSchema() || v < 3 {
		t.Fatalf("schema version %d %v", v, err)
	}
	db.Close()
	// Reopening applies nothing twice.
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A database from a newer skillgate is refused, not damaged.
	raw, _ := sql.Open("sqlite", path)
	if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (99, 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := sqlite.Open(ctx, path); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has schema version 99, newer than this skillgate understands (%d): upgrade skillgate", sqlite.LatestSchema())) {
		t.Errorf("newer schema: %v", err)
	}
}

// TestPageSize checks that a new database gets 16 KiB pages in WAL mode
// and that an existing database keeps the page size it was made with.
func TestPageSize(t *testing.T) {
	ctx := context.Background()
	pragmas := func(path string) (int, string) {
		t.Helper()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		var size int
		var mode string
		if err := raw.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return size, mode
	}
	fresh := filepath.Join(t.TempDir(), "skillgate.db")
	db, err := sqlite.Open(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if size, mode := pragmas(fresh); size != 16384 || mode != "wal" {
		t.Errorf("new database: page size %d, journal mode %q; want 16384, wal", size, mode)
	}
	old := filepath.Join(t.TempDir(), "skillgate.db")
	raw, err := sql.Open("sqlite", old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`PRAGMA page_size = 4096; CREATE TABLE keep (x)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err = sqlite.Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v != sqlite.LatestSchema() {
		t.Errorf("existing database: schema version %d, %v", v, err)
	}
	db.Close()
	if size, mode := pragmas(old); size != 4096 || mode != "wal" {
		t.Errorf("existing database: page size %d, journal mode %q; want 4096, wal", size, mode)
	}
}

package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestBulkFirstScan checks when a scan runs without the write-ahead log:
// only the first one into an empty store, only when allowed and when no
// other connection has the database open; and that the store is back in
// WAL mode with the scan's rows after it, committed or rolled back.
func TestBulkFirstScan(t *testing.T) {
	ctx := context.Background()
	v := store.Version{Key: "a", Name: "a", Dir: "/r/a", Rel: "a", File: "/r/a/SKILL.md", Digest: "sha256:1", Fingerprint: "f1", Valid: true, InvokableBy: []string{"T0"}}
	scan := store.RootScan{Root: "/r", Scope: "project", Upserts: []store.Version{v}}
	mode := func(t *testing.T, db *DB) string {
		t.Helper()
		var m string
		if err := db.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	count := func(t *testing.T, db *DB) int {
		t.Helper()
		var n int
		if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM versions`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// scanOnce runs one scan of scan, committed or rolled back, and
	// reports whether it ran in bulk mode.
	scanOnce := func(t *testing.T, db *DB, commit bool) bool {
		t.Helper()
		w, err := db.beginScan(ctx, []string{scan.Root}, true)
		if err != nil {
			t.Fatal(err)
		}
		bulk := w.bulk
		if err := w.Root(ctx, scan); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = w.Commit()
		} else {
			err = w.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		return bulk
	}
	open := func(t *testing.T, allow bool) (*DB, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "s.db")
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		db.BulkFirstScan = allow
		return db, path
	}

	t.Run("first scan, then not", func(t *testing.T) {
		db, _ := open(t, true)
		if !scanOnce(t, db, true) {
			t.Error("the first scan into an empty store did not run in bulk mode")
		}
		if m, n := mode(t, db), count(t, db); m != "wal" || n != 1 {
			t.Errorf("after the first scan: journal mode %q, %d versions; want wal, 1", m, n)
		}
		if scanOnce(t, db, true) {
			t.Error("a scan into a store with skills ran in bulk mode")
		}
	})
	t.Run("rolled back", func(t *testing.T) {
		db, _ := open(t, true)
		if !scanOnce(t, db, false) {
			t.Error("the first scan did not run in bulk mode")
		}
		if m, n := mode(t, db), count(t, db); m != "wal" || n != 0 {
			t.Errorf("after a rolled back first scan: journal mode %q, %d versions; want wal, 0", m, n)
		}
		if !scanOnce(t, db, true) {
			t.Error("the store is still empty: the next scan should run in bulk mode")
		}
	})
	t.Run("not allowed", func(t *testing.T) {
		db, _ := open(t, false)
		if scanOnce(t, db, true) {
			t.Error("a scan ran in bulk mode without BulkFirstScan")
		}
	})
	t.Run("another connection", func(t *testing.T) {
		db, path := open(t, true)
		other, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		if scanOnce(t, db, true) {
			t.Error("a scan ran in bulk mode while another connection had the store open")
		}
		var n int
		if err := other.QueryRowContext(ctx, `SELECT count(*) FROM versions`).Scan(&n); err != nil || n != 1 {
			t.Errorf("the other connection sees %d versions, %v; want 1", n, err)
		}
	})
}

package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlite"
)

// TestListingsPacked checks that listings survive the packed row through
// puts, removals and a root that is also a path prefix of another.
func TestListingsPacked(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]store.Listing{
		"/r":         {MTime: 1, Entries: "dskills\x00"},
		"/r/a":       {MTime: -5, Entries: "fSKILL.md\x00dscripts\x00"},
		"/r/a/b":     {MTime: 1 << 62, Entries: ""},
		"/r/é ü":     {MTime: 7, Entries: "fx\x00"},
		"/elsewhere": {MTime: 3, Entries: "fy\x00"},
	}
	apply := func(put map[string]store.Listing, gone []string) {
		t.Helper()
		if err := db.ApplyScans(ctx, []store.RootScan{
			{Root: "/r", Scope: "project", PutListings: put, GoneListings: gone},
			{Root: "/r2", Scope: "project", Position: 1, PutListings: map[string]store.Listing{"/r2/x": {MTime: 9, Entries: "fz\x00"}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	check := func() {
		t.Helper()
		got, err := db.Listings(ctx, "/r")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("listings\n%v\nwant\n%v", got, want)
		}
		other, err := db.Listings(ctx, "/r2")
		if err != nil || len(other) != 1 || other["/r2/x"].MTime != 9 {
			t.Fatalf("listings of /r2: %v, %v", other, err)
		}
	}
	apply(want, nil)
	check()
	apply(map[string]store.Listing{"/r/a": {MTime: 2, Entries: "fSKILL.md\x00"}, "/r/c": {MTime: 4}}, []string{"/r/a/b"})
	want["/r/a"] = store.Listing{MTime: 2, Entries: "fSKILL.md\x00"}
	want["/r/c"] = store.Listing{MTime: 4}
	delete(want, "/r/a/b")
	check()
	apply(nil, nil) // nothing changed: nothing written
	check()
}

// TestListingsUnpacked checks that listings stored one row per directory
// (before they were packed) are read, and packed at the next change.
func TestListingsUnpacked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `INSERT INTO roots (path, scope, position, last_scan) VALUES ('/r', 'project', 0, 0);
		INSERT INTO dir_listings (root, path, mtime, entries) VALUES ('/r', '/r', 1, CAST('da'||char(0) AS BLOB)), ('/r', '/r/a', 2, CAST('' AS BLOB))`); err != nil {
		t.Fatal(err)
	}
	want := map[string]store.Listing{"/r": {MTime: 1, Entries: "da\x00"}, "/r/a": {MTime: 2, Entries: ""}}
	if got, err := db.Listings(ctx, "/r"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("listings %v, %v; want %v", got, err, want)
	}
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", PutListings: map[string]store.Listing{"/r/b": {MTime: 3}}}}); err != nil {
		t.Fatal(err)
	}
	want["/r/b"] = store.Listing{MTime: 3}
	if got, err := db.Listings(ctx, "/r"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("listings %v, %v; want %v", got, err, want)
	}
	var rows int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM dir_listings WHERE root = '/r'`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d rows (%v), want the packed one", rows, err)
	}
}

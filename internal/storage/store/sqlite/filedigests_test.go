package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestMigrationFileDigests checks that the migration to per-file digests
// clears the fingerprint of a current valid version whose file list has no
// digests (so the next scan parses it again), and of no other version.
func TestMigrationFileDigests(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	legacy := store.Version{Key: "a", Name: "a", Dir: "/r/a", Rel: "a", File: "/r/a/SKILL.md", Digest: "sha256:1", Fingerprint: "fa", Valid: true,
		InvokableBy: []string{"T0"}, Files: json.RawMessage(`[{"path":"SKILL.md","size":3}]`)}
	recorded := legacy
	recorded.Key, recorded.Name, recorded.Dir, recorded.Rel, recorded.File, recorded.Fingerprint = "b", "b", "/r/b", "b", "/r/b/SKILL.md", "fb"
	recorded.Files = json.RawMessage(`[{"path":"SKILL.md","size":3,"digest":"sha256:00"}]`)
	rejected := legacy
	rejected.Key, rejected.Dir, rejected.Rel, rejected.File, rejected.Fingerprint, rejected.Valid = "!c", "/r/c", "c", "/r/c/SKILL.md", "fc", false
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{legacy, recorded, rejected}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Make the database one of before the migration, holding a legacy row.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// Migration 14 and those after it are undone (15: the changes queue).
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE version >= 14;
		DROP TABLE registered_backends; DROP TABLE registered_executors; DROP TABLE changes;`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	refs, err := db.Refs(ctx, "/r")
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"/r/a": "", "/r/b": "fb", "/r/c": "fc"} {
		if got := refs[dir].Fingerprint; got != want {
			t.Errorf("%s: fingerprint %q after the migration, want %q", dir, got, want)
		}
	}
	// The scan that parses it again finds the same tree digest: the same
	// row is updated, with the file list that has digests.
	again := legacy
	again.Files = json.RawMessage(`[{"path":"SKILL.md","size":3,"digest":"sha256:11"}]`)
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{again}}}); err != nil {
		t.Fatal(err)
	}
	vs, err := db.Versions(ctx, store.Filter{Dir: "/r/a", History: true})
	if err != nil || len(vs) != 1 || string(vs[0].Files) != string(again.Files) || vs[0].Fingerprint != "fa" || !vs[0].Current {
		t.Fatalf("after the re-parse: %+v %v", vs, err)
	}
}

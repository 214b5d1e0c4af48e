package sqlite_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/store"
	"github.com/skillgate/skillgate/store/sqlite"
)

// TestRootTrust: a root's trust is recorded with it (imported when the
// scan gives none) and every version under it has it; a change of trust
// alone moves the registry generation; ApplyRoot records one root and
// leaves the others; a scan never forgets the root of ScopeImported.
func TestRootTrust(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v := func(dir, key string) store.Version {
		return store.Version{Key: key, Name: key, Dir: dir, Rel: key, File: dir + "/SKILL.md", Digest: "sha256:" + key, Fingerprint: key,
			Valid: true, Diagnostics: json.RawMessage("[]")}
	}
	scan := func(fpTrust string) {
		t.Helper()
		if err := db.ApplyScans(ctx, []store.RootScan{
			{Root: "/fp", Scope: "project", Trust: fpTrust, Position: 0, Upserts: []store.Version{v("/fp/github", "github")}},
			{Root: "/other", Scope: "user", Position: 1, Upserts: []store.Version{v("/other/notes", "notes")}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	type row struct{ Key, Scope, Trust string }
	rows := func(f store.Filter) []row {
		t.Helper()
		vs, err := db.Versions(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, v := range vs {
			out = append(out, row{v.Key, v.Scope, v.Trust})
		}
		return out
	}
	scan("first_party")
	if got, want := rows(store.Filter{}), []row{{"github", "project", "first_party"}, {"notes", "user", "imported"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("versions %v, want %v", got, want)
	}
	if got, want := rows(store.Filter{Trust: "first_party"}), []row{{"github", "project", "first_party"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("filtered %v, want %v", got, want)
	}
	gen, _ := db.RegistryGeneration(ctx)
	scan("imported")
	if g, _ := db.RegistryGeneration(ctx); g == gen {
		t.Error("a change of a root's trust did not move the registry generation")
	}
	if got := rows(store.Filter{Trust: "first_party"}); got != nil {
		t.Errorf("first_party after the change: %v", got)
	}
	// The installs' root is recorded alone and survives scans.
	if err := db.ApplyRoot(ctx, store.RootScan{Root: "/data/imported", Scope: store.ScopeImported, Trust: "imported", Position: 1 << 30,
		Upserts: []store.Version{v("/data/imported/v1/skill", "todo")}}); err != nil {
		t.Fatal(err)
	}
	scan("first_party")
	roots, err := db.Roots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for _, r := range roots {
		got = append(got, row{r.Path, r.Scope, r.Trust})
	}
	if want := []row{{"/fp", "project", "first_party"}, {"/other", "user", "imported"}, {"/data/imported", "imported", "imported"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("roots %v, want %v", got, want)
	}
	if got, want := rows(store.Filter{Scope: store.ScopeImported}), []row{{"todo", "imported", "imported"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("imported %v, want %v", got, want)
	}
}

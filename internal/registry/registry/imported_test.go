package registry_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestSyncImported: the enabled installs are listed with scope and trust
// imported, below a configured root in precedence; scans of the
// configured roots never forget them; a sync without them removes them;
// the managed directory's name ("skill") is not checked against theirs.
func TestSyncImported(t *testing.T) {
	ctx := context.Background()
	reg, db := open(t)
	root, managed := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{"notes/SKILL.md": sk("notes", "")})
	write(t, managed, map[string]string{
		"v1/skill/SKILL.md": sk("notes", ""),
		"v2/skill/SKILL.md": sk("todo", ""),
		"v3/skill/SKILL.md": sk("pending", ""), // an install not enabled
	})
	enabled := []registry.Imported{{Key: "notes", Name: "notes", Dir: filepath.Join(managed, "v1", "skill")}, {Key: "todo", Name: "todo", Dir: filepath.Join(managed, "v2", "skill")}}
	type row struct{ Key, Scope, Trust, Dir, Diagnostics string }
	list := func() []row {
		t.Helper()
		es, err := reg.List(ctx, registry.Query{Shadowed: true, Disabled: true, Rejected: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, e := range es {
			out = append(out, row{e.Key, e.Scope, e.Trust, e.Dir, string(e.Diagnostics)})
		}
		return out
	}
	scan := func() {
		t.Helper()
		rep, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Forgotten) != 0 {
			t.Fatalf("the scan forgot %v", rep.Forgotten)
		}
	}
	scan()
	if err := reg.SyncImported(ctx, managed, enabled); err != nil {
		t.Fatal(err)
	}
	gen, _ := db.RegistryGeneration(ctx)
	want := []row{
		{"notes", "project", "imported", filepath.Join(root, "notes"), "[]"},
		{"todo", "imported", "imported", filepath.Join(managed, "v2", "skill"), "[]"},
		{"notes", "imported", "imported", filepath.Join(managed, "v1", "skill"), "[]"}, // shadowed by the configured root
	}
	if got := list(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after sync:\n got %v\nwant %v", got, want)
	}
	// A sync that changes nothing writes nothing.
	if err := reg.SyncImported(ctx, managed, enabled); err != nil {
		t.Fatal(err)
	}
	if g, _ := db.RegistryGeneration(ctx); g != gen {
		t.Errorf("an idle sync moved the registry generation from %d to %d", gen, g)
	}
	scan()
	if got := list(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a rescan:\n got %v\nwant %v", got, want)
	}
	// Disabling todo leaves notes.
	if err := reg.SyncImported(ctx, managed, enabled[:1]); err != nil {
		t.Fatal(err)
	}
	if got := list(); !reflect.DeepEqual(got, []row{want[0], want[2]}) {
		t.Fatalf("after todo left:\n got %v", got)
	}
	if err := reg.SyncImported(ctx, managed, nil); err != nil {
		t.Fatal(err)
	}
	if got := list(); !reflect.DeepEqual(got, want[:1]) {
		t.Fatalf("after every install left:\n got %v", got)
	}
}

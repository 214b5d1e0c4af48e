package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestScanCountsForgottenRoots checks that a scan leaving out roots of the
// last scan (or finding them gone) counts their skills as removed and
// names the roots, and that skills found again under another root are not
// counted.
func TestScanCountsForgottenRoots(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	a, b := filepath.Join(top, "a"), filepath.Join(top, "b")
	write(t, a, map[string]string{"one/SKILL.md": sk("one", ""), "two/SKILL.md": sk("two", ""), "bad/SKILL.md": "---\nname: bad\n---\n"})
	write(t, b, map[string]string{"three/SKILL.md": sk("three", "")})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := registry.New(db, registry.Options{})
	root := func(p string) discover.Root { return discover.Root{Path: p, Scope: discover.ScopeProject} }
	type counts struct {
		skills, removed int
		forgotten       []registry.ForgottenRoot
	}
	steps := []struct {
		name   string
		roots  []discover.Root
		before func()
		want   counts
	}{
		{"both", []discover.Root{root(a), root(b)}, nil, counts{4, 0, []registry.ForgottenRoot{}}},
		{"b only", []discover.Root{root(b)}, nil, counts{1, 3, []registry.ForgottenRoot{{Path: a, Scope: "project", Skills: 3}}}},
		{"both again", []discover.Root{root(a), root(b)}, nil, counts{4, 0, []registry.ForgottenRoot{}}},
		// a's skills are found again under top: nothing is lost, b's one
		// is found again too.
		{"parent", []discover.Root{{Path: top, Scope: discover.ScopeUser}}, nil, counts{4, 0, []registry.ForgottenRoot{{Path: a, Scope: "project"}, {Path: b, Scope: "project"}}}},
		{"both, b gone", []discover.Root{root(a), root(b)}, func() { os.RemoveAll(b) }, counts{3, 1, []registry.ForgottenRoot{{Path: top, Scope: "user", Skills: 1}}}},
		{"nothing", nil, nil, counts{0, 3, []registry.ForgottenRoot{{Path: a, Scope: "project", Skills: 3}}}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		rep, err := reg.Scan(ctx, st.roots, nil)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got := counts{rep.Skills, rep.Removed, rep.Forgotten}
		if !reflect.DeepEqual(got, st.want) {
			t.Errorf("%s: %+v; want %+v", st.name, got, st.want)
		}
	}
}

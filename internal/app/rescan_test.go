package app

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestRescanKeepsTrust: a running server rescans the roots of the last
// scan with the trust each was recorded with, and never the root of the
// installs' skills (which no scan walks).
func TestRescanKeepsTrust(t *testing.T) {
	ctx := context.Background()
	shipped, other, data := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, shipped, map[string]string{"github/SKILL.md": "---\nname: github\ndescription: GitHub.\n---\n"})
	a := New(Options{Data: data})
	defer a.Close()
	reg, closeFn, err := a.OpenRegistry(ctx, discover.DefaultLimits, false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	// What 'skillgate scan --root SHIPPED --trust first_party' does.
	scanRoots(t, a, reg, []string{shipped}, "first_party")
	// The installs' root, as the install service records it.
	write(t, filepath.Join(data, "imported"), map[string]string{"v1/skill/SKILL.md": "---\nname: notes\ndescription: Notes.\n---\n"})
	if err := reg.SyncImported(ctx, filepath.Join(data, "imported"), []registry.Imported{{Key: "notes", Name: "notes", Dir: filepath.Join(data, "imported", "v1", "skill")}}); err != nil {
		t.Fatal(err)
	}
	if roots, _ := reg.Roots(ctx); len(roots) != 2 {
		t.Fatalf("recorded roots: %+v", roots)
	}
	tests := []struct {
		name      string
		flagRoots []string
		flagTrust string
		want      []discover.Root
	}{
		{"recorded", nil, "", []discover.Root{{Path: shipped, Scope: discover.ScopeProject, Trust: capability.TrustFirstParty}}},
		{"flags", []string{other}, "", []discover.Root{{Path: other, Scope: discover.ScopeProject, Trust: capability.TrustImported}}},
		{"flags first_party", []string{other + "=user"}, "first_party", []discover.Root{{Path: other, Scope: discover.ScopeUser, Trust: capability.TrustFirstParty}}},
	}
	for _, tc := range tests {
		got, err := a.rescanRoots(ctx, reg, tc.flagRoots, tc.flagTrust)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v %v\nwant %+v", tc.name, got, err, tc.want)
		}
	}
}

// scanRoots scans roots (DIR[=scope], of trust) into reg as 'skillgate scan
// --root' does.
func scanRoots(t *testing.T, a *App, reg *registry.Registry, roots []string, trust string) {
	t.Helper()
	cfg, err := a.Config()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := a.Roots(roots, trust, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ScanAll(context.Background(), reg, rs, cfg, ScanOptions{}, nil); err != nil {
		t.Fatal(err)
	}
}

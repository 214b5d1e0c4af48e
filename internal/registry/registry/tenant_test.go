package registry_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
)

// TestTenantSnapshot checks who sees a tenant library's skills: its
// tenant (where they win over shared skills of the same identity), and
// nobody else.
func TestTenantSnapshot(t *testing.T) {
	ctx := context.Background()
	shared, libs := t.TempDir(), t.TempDir()
	write(t, shared, map[string]string{
		"escrituras/compraventa/SKILL.md": sk("compraventa", ""),
		"pdf/SKILL.md":                    sk("pdf", ""),
	})
	write(t, libs, map[string]string{
		"acme/escrituras/compraventa/SKILL.md":    sk("compraventa", "version: 2.0.0\n"),
		"acme/secreto/SKILL.md":                   sk("secreto", ""),
		"globex/contratos/arrendamiento/SKILL.md": sk("arrendamiento", ""),
		"globex/secreto/SKILL.md":                 sk("secreto", "version: 9.9.9\n"),
	})
	reg, _ := open(t)
	rep, err := reg.Scan(ctx, []discover.Root{
		{Path: shared, Scope: discover.ScopeProject},
		{Path: filepath.Join(libs, "acme"), Scope: discover.ScopeTenant},
		{Path: filepath.Join(libs, "globex"), Scope: discover.ScopeTenant},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two tenants' skills never shadow each other, nor the shared ones in
	// the registry's own view.
	if len(rep.Shadowed) != 0 || rep.Valid != 6 {
		t.Fatalf("scan: shadowed %+v, valid %d", rep.Shadowed, rep.Valid)
	}
	type seen struct{ Key, Dir, Version string }
	view := func(tenant string) []seen {
		s, err := reg.TenantSnapshot(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		var out []seen
		s.Skills(skill.T3, "", func(b registry.Brief) bool {
			dir, _ := filepath.Rel(shared, b.Dir)
			if d, err := filepath.Rel(libs, b.Dir); err == nil && d[0] != '.' {
				dir = "libs/" + d
			}
			out = append(out, seen{b.Key, dir, b.Version})
			return true
		})
		return out
	}
	for _, tc := range []struct {
		tenant string
		want   []seen
	}{
		{"", []seen{{"escrituras/compraventa", "escrituras/compraventa", ""}, {"pdf", "pdf", ""}}},
		{"initech", []seen{{"escrituras/compraventa", "escrituras/compraventa", ""}, {"pdf", "pdf", ""}}},
		{"acme", []seen{{"escrituras/compraventa", "libs/acme/escrituras/compraventa", "2.0.0"}, {"pdf", "pdf", ""}, {"secreto", "libs/acme/secreto", ""}}},
		{"globex", []seen{{"contratos/arrendamiento", "libs/globex/contratos/arrendamiento", ""}, {"escrituras/compraventa", "escrituras/compraventa", ""},
			{"pdf", "pdf", ""}, {"secreto", "libs/globex/secreto", "9.9.9"}}},
	} {
		t.Run("tenant "+tc.tenant, func(t *testing.T) {
			if got := view(tc.tenant); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	sharedSnap, _ := reg.Snapshot(ctx)
	if s, _ := reg.TenantSnapshot(ctx, "initech"); s != sharedSnap {
		t.Fatal("a tenant without a library must get the shared snapshot")
	}
	if s, _ := reg.TenantSnapshot(ctx, "acme"); s.Tenant() != "acme" || s.Len(skill.T3) != 3 {
		t.Fatalf("acme's snapshot: tenant %q, %d skills", s.Tenant(), s.Len(skill.T3))
	}
	if _, ok := sharedSnap.Lookup(skill.T3, "secreto"); ok {
		t.Fatal("a library skill is in the shared catalog")
	}

	// A change in a library changes what agents see (the shared
	// fingerprint), though the shared catalog is the same.
	before := sharedSnap.Fingerprint()
	write(t, libs, map[string]string{"acme/secreto/SKILL.md": sk("secreto", "version: 3.0.0\n")})
	if _, err := reg.Scan(ctx, []discover.Root{
		{Path: shared, Scope: discover.ScopeProject},
		{Path: filepath.Join(libs, "acme"), Scope: discover.ScopeTenant},
		{Path: filepath.Join(libs, "globex"), Scope: discover.ScopeTenant},
	}, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := reg.Snapshot(ctx)
	if after.Fingerprint() == before {
		t.Fatal("a library change left the fingerprint as it was")
	}
	if got := view("acme"); got[2] != (seen{"secreto", "libs/acme/secreto", "3.0.0"}) {
		t.Fatalf("acme after the change: %+v", got)
	}
}

// TestListTenant checks the registry's listing of one tenant's view.
func TestListTenant(t *testing.T) {
	ctx := context.Background()
	shared, libs := t.TempDir(), t.TempDir()
	write(t, shared, map[string]string{"escrituras/compraventa/SKILL.md": sk("compraventa", "")})
	write(t, libs, map[string]string{
		"acme/escrituras/compraventa/SKILL.md": sk("compraventa", ""),
		"globex/secreto/SKILL.md":              sk("secreto", ""),
	})
	reg, _ := open(t)
	if _, err := reg.Scan(ctx, []discover.Root{
		{Path: shared, Scope: discover.ScopeProject},
		{Path: filepath.Join(libs, "acme"), Scope: discover.ScopeTenant},
		{Path: filepath.Join(libs, "globex"), Scope: discover.ScopeTenant},
	}, nil); err != nil {
		t.Fatal(err)
	}
	type row struct{ Key, Scope, State string }
	for _, tc := range []struct {
		name string
		q    registry.Query
		want []row
	}{
		{"everything", registry.Query{}, []row{{"escrituras/compraventa", "project", "enabled"}, {"escrituras/compraventa", "tenant", "enabled"}, {"secreto", "tenant", "enabled"}}},
		{"acme", registry.Query{Tenant: "acme"}, []row{{"escrituras/compraventa", "tenant", "enabled"}}},
		{"acme with shadowed", registry.Query{Tenant: "acme", Shadowed: true}, []row{{"escrituras/compraventa", "project", "shadowed"}, {"escrituras/compraventa", "tenant", "enabled"}}},
		{"globex", registry.Query{Tenant: "globex"}, []row{{"escrituras/compraventa", "project", "enabled"}, {"secreto", "tenant", "enabled"}}},
		{"initech", registry.Query{Tenant: "initech"}, []row{{"escrituras/compraventa", "project", "enabled"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := reg.List(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []row
			for _, e := range es {
				got = append(got, row{e.Key, e.Scope, e.State()})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

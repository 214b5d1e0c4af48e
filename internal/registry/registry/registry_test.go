package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

func write(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sk(name, extra string) string {
	return "---\nname: " + name + "\ndescription: " + name + " does things.\n" + extra + "---\nBody of " + name + "\n"
}

func open(t testing.TB) (*registry.Registry, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return registry.New(db, registry.Options{}), db
}

func names(es []registry.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	return out
}

func TestIncrementalScan(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{
		"alpha/SKILL.md":       sk("alpha", ""),
		"alpha/scripts/run.sh": "echo",
		"beta/SKILL.md":        sk("beta", "metadata:\n  tier: '1'\n"),
		"legal/gamma/SKILL.md": sk("gamma", "tier: 3\n"),
		"broken/SKILL.md":      "---\nname: broken\n---\n",
	})
	reg, _ := open(t)
	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	rep, err := reg.Scan(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skills != 4 || rep.Valid != 3 || rep.Rejected != 1 || rep.Parsed != 4 || rep.Unchanged != 0 {
		t.Fatalf("first scan: %+v", rep)
	}
	if want := []registry.Rejection{{Dir: filepath.Join(root, "broken"), Name: "broken", Errors: []string{"Missing required field in frontmatter: description"}}}; !reflect.DeepEqual(rep.Rejections, want) {
		t.Errorf("rejections %+v", rep.Rejections)
	}
	// No change: nothing is parsed.
	rep, err = reg.Scan(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parsed != 0 || rep.Unchanged != 4 || rep.Removed != 0 {
		t.Fatalf("rescan: %+v", rep)
	}
	// A changed resource re-parses only that skill and keeps history.
	before, _ := reg.Show(ctx, "alpha")
	time.Sleep(10 * time.Millisecond)
	write(t, root, map[string]string{"alpha/scripts/run.sh": "echo changed"})
	rep, _ = reg.Scan(ctx, roots, nil)
	if rep.Parsed != 1 || rep.Unchanged != 3 {
		t.Fatalf("after change: %+v", rep)
	}
	after, _ := reg.Show(ctx, "alpha")
	if after.Entry.Digest == before.Entry.Digest || len(after.History) != 1 || after.History[0].Digest != before.Entry.Digest {
		t.Errorf("history: before %s after %s history %+v", before.Entry.Digest, after.Entry.Digest, after.History)
	}
	// Disabling survives a new version; a deleted directory leaves.
	if err := reg.SetEnabled(ctx, "beta", false); err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"beta/extra.md": "x"})
	if err := os.RemoveAll(filepath.Join(root, "alpha")); err != nil {
		t.Fatal(err)
	}
	rep, _ = reg.Scan(ctx, roots, nil)
	if rep.Removed != 1 || rep.Skills != 3 {
		t.Fatalf("after delete: %+v", rep)
	}
	es, _ := reg.List(ctx, registry.Query{})
	if got := names(es); !reflect.DeepEqual(got, []string{"legal/gamma"}) {
		t.Errorf("enabled skills %q", got)
	}
	es, _ = reg.List(ctx, registry.Query{Disabled: true, Rejected: true})
	if got := names(es); !reflect.DeepEqual(got, []string{"!broken", "beta", "legal/gamma"}) {
		t.Errorf("all skills %q", got)
	}
	if _, err := reg.Get(ctx, "alpha"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("deleted skill: %v", err)
	}
}

func TestPrecedenceAndPools(t *testing.T) {
	ctx := context.Background()
	user, canon, mirror := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, user, map[string]string{"shared/SKILL.md": sk("shared", ""), "mine/SKILL.md": sk("mine", "metadata:\n  tier: '1'\n")})
	write(t, canon, map[string]string{"shared/SKILL.md": sk("shared", ""), "admin/SKILL.md": sk("admin", "metadata:\n  tier: '3'\n")})
	write(t, mirror, map[string]string{"shared/SKILL.md": sk("shared", "")})
	reg, _ := open(t)
	rep, err := reg.Scan(ctx, []discover.Root{
		{Path: user, Scope: discover.ScopeUser},
		{Path: canon, Scope: discover.ScopeProject},
		{Path: mirror, Scope: discover.ScopeProject},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantShadows := []registry.Shadow{
		{Key: "shared", Winner: filepath.Join(canon, "shared"), WinScope: "project", Loser: filepath.Join(mirror, "shared"), Scope: "project"},
		{Key: "shared", Winner: filepath.Join(canon, "shared"), WinScope: "project", Loser: filepath.Join(user, "shared"), Scope: "user"},
	}
	if !reflect.DeepEqual(rep.Shadowed, wantShadows) {
		t.Errorf("shadowed\n got %+v\nwant %+v", rep.Shadowed, wantShadows)
	}
	e, err := reg.Get(ctx, "shared")
	if err != nil || e.Dir != filepath.Join(canon, "shared") {
		t.Fatalf("shared: %+v %v", e, err)
	}
	tests := []struct {
		tier skill.AgentTier
		want []string
	}{
		{skill.T0, []string{"admin", "mine", "shared"}},
		{skill.T2, []string{"mine", "shared"}},
		{skill.T4, []string{"mine"}},
	}
	for _, tc := range tests {
		es, err := reg.List(ctx, registry.Query{AgentTier: tc.tier})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(es); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("pool %s = %q, want %q", tc.tier, got, tc.want)
		}
	}
	es, _ := reg.List(ctx, registry.Query{Scope: "user"})
	if got := names(es); !reflect.DeepEqual(got, []string{"mine"}) {
		t.Errorf("user scope: %q (the shadowed user copy of shared must not appear)", got)
	}
	es, _ = reg.List(ctx, registry.Query{NamePrefix: "sh", Shadowed: true})
	if len(es) != 3 || es[1].ShadowedBy == "" {
		t.Errorf("with shadowed: %+v", es)
	}
	// Dropping a root forgets its skills.
	if _, err := reg.Scan(ctx, []discover.Root{{Path: user, Scope: discover.ScopeUser}}, nil); err != nil {
		t.Fatal(err)
	}
	e, _ = reg.Get(ctx, "shared")
	if e.Dir != filepath.Join(user, "shared") {
		t.Errorf("after dropping roots, shared is at %s", e.Dir)
	}
}

func TestAmbiguousName(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{"a/x/SKILL.md": sk("x", ""), "b/x/SKILL.md": sk("x", "")})
	reg, _ := open(t)
	if _, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := reg.Get(ctx, "x")
	if !errors.Is(err, registry.ErrAmbiguous) || err.Error() != `skill name is ambiguous: "x" is a/x, b/x; name one of them with its category` {
		t.Errorf("err = %v", err)
	}
	if e, err := reg.Get(ctx, "b/x"); err != nil || e.Category != "b" {
		t.Errorf("b/x: %+v %v", e, err)
	}
}

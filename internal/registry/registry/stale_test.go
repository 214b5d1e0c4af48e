package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
)

// TestStale checks why a registry is older than its roots, step by step:
// empty, scanned, a file edited, a skill added, a root added or left out,
// another trust, a root gone, a scan too close to a change to keep a
// stamp; and that a scan makes it current again.
func TestStale(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	reg, _ := open(t)
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"alpha/SKILL.md": sk("alpha", ""), "alpha/scripts/run.sh": "echo"})
	write(t, b, map[string]string{"beta/SKILL.md": sk("beta", "")})
	missing := filepath.Join(t.TempDir(), "nope")
	one := []discover.Root{{Path: a, Scope: discover.ScopeProject}, {Path: missing, Scope: discover.ScopeUser}}
	two := []discover.Root{{Path: a, Scope: discover.ScopeProject}, {Path: b, Scope: discover.ScopeUser}}
	scan := func(roots []discover.Root) {
		t.Helper()
		settle()
		if _, err := reg.Scan(ctx, roots, nil); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(d time.Duration) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(a, "alpha/scripts/run.sh"), time.Now(), time.Now().Add(d)); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		name  string
		do    func()
		roots []discover.Root
		want  string
	}{
		{"empty registry", nil, one, "the registry is empty"},
		{"only absent roots", nil, []discover.Root{{Path: missing}}, ""},
		{"scanned", func() { scan(one) }, one, ""},
		{"file edited", func() { write(t, a, map[string]string{"alpha/scripts/run.sh": "echo longer"}) }, one, "root " + a + " changed since it was scanned"},
		{"rescanned", func() { scan(one) }, one, ""},
		{"skill added", func() { write(t, a, map[string]string{"gamma/SKILL.md": sk("gamma", "")}) }, one, "root " + a + " changed since it was scanned"},
		{"root added", func() { scan(one) }, two, "root " + b + " was not scanned"},
		{"both scanned", func() { scan(two) }, two, ""},
		{"root left out", nil, two[:1], "root " + b + " is no longer configured"},
		{"other trust", nil, []discover.Root{{Path: a, Scope: discover.ScopeProject, Trust: capability.TrustFirstParty}, two[1]}, "root " + a + " was scanned with another scope, trust or position"},
		{"other order", nil, []discover.Root{two[1], two[0]}, "root " + b + " was scanned with another scope, trust or position"},
		{"root gone: no scan at start, which would forget its skills", func() { os.RemoveAll(b) }, two, ""},
		{"gone root scanned", func() { scan(two) }, two, ""},
		// A time the walk cannot tell apart from a later change (within its
		// racy window; here in the future): the scan keeps no stamp.
		{"scanned too close to a change", func() { touch(time.Hour); scan(one) }, one, "root " + a + " " + discover.NoStamp},
		{"rescanned later", func() { touch(-time.Hour); scan(one) }, one, ""},
	} {
		if step.do != nil {
			step.do()
		}
		got, err := reg.Stale(ctx, step.roots)
		if err != nil || got != step.want {
			t.Errorf("%s: Stale = %q, %v; want %q", step.name, got, err, step.want)
		}
	}
}

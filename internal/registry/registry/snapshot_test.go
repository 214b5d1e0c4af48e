package registry_test

import (
	"context"
	"encoding/base64"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// skd is a SKILL.md with a description of its own.
func skd(name, desc, extra string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n" + extra + "---\nBody of " + name + "\n"
}

// catalogTree is the fixture of the paging tests: eleven skills in three
// categories and none, of every skill tier, one rejected.
var catalogTree = map[string]string{
	"code/delta/SKILL.md":   skd("delta", "Find bugs in Go code.", "tier: 1\n"),
	"code/epsilon/SKILL.md": skd("epsilon", "Fill PDF forms from code.", "tier: 2\n"),
	"code/zeta/SKILL.md":    skd("zeta", "Deploy code to production.", "tier: 3\n"),
	"docs/alpha/SKILL.md":   skd("alpha", "Write documentation.", "tier: 2\n"),
	"docs/beta/SKILL.md":    skd("beta", "Proofread DOCUMENTS and pdf files.", "tier: 1\n"),
	"docs/gamma/SKILL.md":   skd("gamma", "Translate documentation.", "tier: 2\n"),
	"kappa/SKILL.md":        skd("kappa", "General helper.", "tier: 1\n"),
	"lambda/SKILL.md":       skd("lambda", "Another helper.", "tier: 2\n"),
	"ops/eta/SKILL.md":      skd("eta", "Watch dashboards.", "tier: 1\n"),
	"ops/iota/SKILL.md":     skd("iota", "Rotate logs.", "tier: 2\n"),
	"ops/theta/SKILL.md":    skd("theta", "Restart the PDF renderer.", "tier: 3\n"),
	"ops/broken/SKILL.md":   "---\nname: broken\n---\n",
}

// scanned returns a registry that scanned catalogTree, and its root.
func scanned(t testing.TB) (*registry.Registry, *sqlite.DB, []discover.Root) {
	t.Helper()
	root := t.TempDir()
	write(t, root, catalogTree)
	reg, db := open(t)
	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	if _, err := reg.Scan(context.Background(), roots, nil); err != nil {
		t.Fatal(err)
	}
	return reg, db, roots
}

func keys(bs []registry.Brief) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Key)
	}
	return out
}

// pages follows the cursors from q and returns every page's keys and the
// totals the pages reported.
func pages(t *testing.T, snap *registry.Snapshot, q registry.PageQuery) ([][]string, []int) {
	t.Helper()
	var got [][]string
	var totals []int
	for i := 0; ; i++ {
		p, err := snap.Page(q)
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		got = append(got, keys(p.Skills))
		totals = append(totals, p.Total)
		if p.NextCursor == "" || i > 20 {
			return got, totals
		}
		q.Cursor = p.NextCursor
	}
}

func TestSnapshotPages(t *testing.T) {
	reg, _, _ := scanned(t)
	snap, err := reg.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		q     registry.PageQuery
		pages [][]string
		total int
	}{
		{"T3 default limit: one page", registry.PageQuery{AgentTier: skill.T3},
			[][]string{{"code/delta", "code/epsilon", "docs/alpha", "docs/beta", "docs/gamma", "kappa", "lambda", "ops/eta", "ops/iota"}}, 9},
		{"T3 by four", registry.PageQuery{AgentTier: skill.T3, Limit: 4},
			[][]string{{"code/delta", "code/epsilon", "docs/alpha", "docs/beta"}, {"docs/gamma", "kappa", "lambda", "ops/eta"}, {"ops/iota"}}, 9},
		{"exact multiple: no empty last page", registry.PageQuery{AgentTier: skill.T4, Limit: 2},
			[][]string{{"code/delta", "docs/beta"}, {"kappa", "ops/eta"}}, 4},
		{"T1 sees tier 3", registry.PageQuery{AgentTier: skill.T1, Limit: 1000},
			[][]string{{"code/delta", "code/epsilon", "code/zeta", "docs/alpha", "docs/beta", "docs/gamma", "kappa", "lambda", "ops/eta", "ops/iota", "ops/theta"}}, 11},
		{"category", registry.PageQuery{AgentTier: skill.T3, Category: "docs", Limit: 2},
			[][]string{{"docs/alpha", "docs/beta"}, {"docs/gamma"}}, 3},
		{"category and tier", registry.PageQuery{AgentTier: skill.T3, Category: "docs", Tier: 2},
			[][]string{{"docs/alpha", "docs/gamma"}}, 2},
		{"tier", registry.PageQuery{AgentTier: skill.T3, Tier: 1, Limit: 3},
			[][]string{{"code/delta", "docs/beta", "kappa"}, {"ops/eta"}}, 4},
		{"tier the agent may not use", registry.PageQuery{AgentTier: skill.T3, Tier: 3},
			[][]string{{}}, 0},
		{"query ignores case, tier pool", registry.PageQuery{AgentTier: skill.T3, Query: "pdf"},
			[][]string{{"code/epsilon", "docs/beta"}}, 2},
		{"query at T1, ranked", registry.PageQuery{AgentTier: skill.T1, Query: "PDF"},
			[][]string{{"ops/theta", "code/epsilon", "docs/beta"}}, 3},
		{"query by one", registry.PageQuery{AgentTier: skill.T3, Query: "DoC", Limit: 1},
			[][]string{{"docs/alpha"}, {"docs/beta"}, {"docs/gamma"}}, 3},
		{"query matches words, not parts of words", registry.PageQuery{AgentTier: skill.T1, Query: "eta"},
			[][]string{{"ops/eta"}}, 1},
		{"query and category", registry.PageQuery{AgentTier: skill.T1, Query: "pdf", Category: "ops"},
			[][]string{{"ops/theta"}}, 1},
		{"no match", registry.PageQuery{AgentTier: skill.T3, Query: "kubernetes"},
			[][]string{{}}, 0},
		{"unknown category", registry.PageQuery{AgentTier: skill.T3, Category: "nope"},
			[][]string{{}}, 0},
		{"unknown agent tier", registry.PageQuery{AgentTier: "T9"},
			[][]string{{}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, totals := pages(t, snap, tc.q)
			if !reflect.DeepEqual(got, tc.pages) {
				t.Errorf("pages = %q, want %q", got, tc.pages)
			}
			for i, n := range totals {
				if n != tc.total {
					t.Errorf("page %d total = %d, want %d", i, n, tc.total)
				}
			}
		})
	}
}

func TestSnapshotPageErrors(t *testing.T) {
	reg, _, _ := scanned(t)
	snap, err := reg.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	badCursor := "bad page request: cursor is not one that skill_list returned; omit it to start from the first page"
	tests := []struct {
		name string
		q    registry.PageQuery
		want string
	}{
		{"negative limit", registry.PageQuery{Limit: -1}, "bad page request: limit must be between 1 and 1000 (default 100), got -1"},
		{"limit above the maximum", registry.PageQuery{Limit: 1001}, "bad page request: limit must be between 1 and 1000 (default 100), got 1001"},
		{"tier 4", registry.PageQuery{Tier: 4}, "bad page request: tier must be 1, 2 or 3 (or omitted for all), got 4"},
		{"negative tier", registry.PageQuery{Tier: -1}, "bad page request: tier must be 1, 2 or 3 (or omitted for all), got -1"},
		{"cursor not base64", registry.PageQuery{Cursor: "!!!"}, badCursor},
		{"cursor without its prefix", registry.PageQuery{Cursor: base64.RawURLEncoding.EncodeToString([]byte("docs/beta"))}, badCursor},
		{"cursor too long", registry.PageQuery{Cursor: strings.Repeat("a", 4096)}, badCursor},
		{"query too long", registry.PageQuery{Query: strings.Repeat("a", 513)}, "bad page request: query must be valid UTF-8 of at most 512 bytes"},
		{"query not UTF-8", registry.PageQuery{Query: "\xff"}, "bad page request: query must be valid UTF-8 of at most 512 bytes"},
		{"category too long", registry.PageQuery{Category: strings.Repeat("c", 600)}, "bad page request: category must be valid UTF-8 of at most 512 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.AgentTier = skill.T3
			_, err := snap.Page(tc.q)
			if err == nil || err.Error() != tc.want || !errors.Is(err, registry.ErrBadPage) {
				t.Fatalf("err = %v, want %q (ErrBadPage)", err, tc.want)
			}
		})
	}
}

// TestSnapshotCursorAcrossChanges: a cursor names the last identity
// returned, so the next page is right after the registry changed: nothing
// before it moves the page, a skill removed after it leaves it.
func TestSnapshotCursorAcrossChanges(t *testing.T) {
	ctx := context.Background()
	reg, _, _ := scanned(t)
	snap, err := reg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := snap.Page(registry.PageQuery{AgentTier: skill.T3, Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.SetEnabled(ctx, "docs/alpha", false); err != nil { // before the cursor
		t.Fatal(err)
	}
	if err := reg.SetEnabled(ctx, "kappa", false); err != nil { // on the next page
		t.Fatal(err)
	}
	next, err := reg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if next == snap || next.Generation() <= snap.Generation() {
		t.Fatalf("generation %d → %d: the snapshot was not rebuilt", snap.Generation(), next.Generation())
	}
	p, err := next.Page(registry.PageQuery{AgentTier: skill.T3, Limit: 4, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p.Skills), []string{"docs/gamma", "lambda", "ops/eta", "ops/iota"}; !reflect.DeepEqual(got, want) || p.Total != 7 || p.NextCursor != "" {
		t.Errorf("page after the change = %q total %d next %q, want %q total 7, the last", got, p.Total, p.NextCursor, want)
	}
}

// TestSnapshotShared: the snapshot is built once per generation and shared;
// a rescan that changed nothing keeps it, and its fingerprint.
func TestSnapshotShared(t *testing.T) {
	ctx := context.Background()
	reg, db, roots := scanned(t)
	a, err := reg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := reg.Snapshot(ctx); b != a {
		t.Fatal("a second call built another snapshot")
	}
	gen, _ := db.RegistryGeneration(ctx)
	if _, err := reg.Scan(ctx, roots, nil); err != nil {
		t.Fatal(err)
	}
	if g, _ := db.RegistryGeneration(ctx); g != gen {
		t.Errorf("a rescan that changed nothing moved the generation %d → %d", gen, g)
	}
	if b, _ := reg.Snapshot(ctx); b != a {
		t.Error("a rescan that changed nothing rebuilt the snapshot")
	}
	// Enabling an enabled skill changes nothing either.
	if err := reg.SetEnabled(ctx, "kappa", true); err != nil {
		t.Fatal(err)
	}
	if b, _ := reg.Snapshot(ctx); b != a {
		t.Error("enabling an enabled skill rebuilt the snapshot")
	}
	if err := db.SetEnabled(ctx, "nope", false); err == nil || err.Error() != `skill "nope": not found` {
		t.Errorf("SetEnabled of an unknown key: %v", err)
	}
	if got, want := a.Len(skill.T3), 9; got != want {
		t.Errorf("Len(T3) = %d, want %d", got, want)
	}
	if e, ok := a.Lookup(skill.T3, "docs/beta"); !ok || e.Name != "beta" || e.Description != "Proofread DOCUMENTS and pdf files." || e.Tier != 1 || e.Scope != "project" {
		t.Errorf("Lookup(T3, docs/beta) = %+v, %v", e, ok)
	}
	if _, ok := a.Lookup(skill.T3, "code/zeta"); ok {
		t.Error("Lookup(T3, code/zeta) found a tier-3 skill")
	}
	if got := keys(a.Named(skill.T1, "eta")); !reflect.DeepEqual(got, []string{"ops/eta"}) {
		t.Errorf("Named(T1, eta) = %q", got)
	}
}

// TestRegistryGeneration: every change of what the registry serves moves
// the generation once, in the same transaction; nothing else does.
func TestRegistryGeneration(t *testing.T) {
	ctx := context.Background()
	reg, db, roots := scanned(t)
	gen := func() int64 {
		t.Helper()
		g, err := db.RegistryGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	steps := []struct {
		name   string
		change func()
		bumps  int64
	}{
		{"rescan, nothing changed", func() { mustScan(t, reg, roots) }, 0},
		{"a skill changed", func() {
			write(t, roots[0].Path, map[string]string{"kappa/SKILL.md": skd("kappa", "General helper, now better.", "tier: 1\n")})
			mustScan(t, reg, roots)
		}, 1},
		{"disable", func() { mustEnable(t, reg, "kappa", false) }, 1},
		{"disable again", func() { mustEnable(t, reg, "kappa", false) }, 0},
		{"enable", func() { mustEnable(t, reg, "kappa", true) }, 1},
		{"a root's scope changed", func() {
			mustScan(t, reg, []discover.Root{{Path: roots[0].Path, Scope: discover.ScopeUser}})
		}, 1},
		{"the root forgotten", func() { mustScan(t, reg, nil) }, 1},
		{"nothing left to forget", func() { mustScan(t, reg, nil) }, 0},
	}
	for _, s := range steps {
		before := gen()
		s.change()
		if got := gen() - before; got != s.bumps {
			t.Errorf("%s: generation moved by %d, want %d", s.name, got, s.bumps)
		}
	}
}

// TestSnapshotSeesOtherProcess: a change made through another store handle
// on the same file (another process: the CLI) is served after it commits,
// at the cost of one read per call while nothing changes.
func TestSnapshotSeesOtherProcess(t *testing.T) {
	ctx := context.Background()
	reg, db, _ := scanned(t)
	before, err := reg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := sqlite.Open(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := registry.New(other, registry.Options{}).SetEnabled(ctx, "docs/beta", false); err != nil {
		t.Fatal(err)
	}
	after, err := reg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Generation() != before.Generation()+1 {
		t.Errorf("generation %d → %d, want one bump", before.Generation(), after.Generation())
	}
	if _, ok := after.Lookup(skill.T4, "docs/beta"); ok {
		t.Error("a skill disabled by another process is still served")
	}
	if _, ok := before.Lookup(skill.T4, "docs/beta"); !ok {
		t.Error("the old snapshot changed: snapshots must be immutable")
	}
	if after.Fingerprint() == before.Fingerprint() {
		t.Error("the fingerprint did not change with a skill disabled")
	}
}

func mustScan(t *testing.T, reg *registry.Registry, roots []discover.Root) {
	t.Helper()
	if _, err := reg.Scan(context.Background(), roots, nil); err != nil {
		t.Fatal(err)
	}
}

func mustEnable(t *testing.T, reg *registry.Registry, name string, on bool) {
	t.Helper()
	if err := reg.SetEnabled(context.Background(), name, on); err != nil {
		t.Fatal(err)
	}
}

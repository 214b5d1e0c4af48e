package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// testApplyScansHistory: a new digest for a directory retires the old
// version, kept as history; refs follow the current one.
func testApplyScansHistory(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	v := store.Version{Key: "a", Name: "a", Dir: "/r/a", Rel: "a", File: "/r/a/SKILL.md", Digest: "sha256:1", Fingerprint: "f1", Valid: true, InvokableBy: []string{"T0"}}
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{v}}}); err != nil {
		t.Fatal(err)
	}
	v2 := v
	v2.Digest, v2.Fingerprint = "sha256:2", "f2"
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{v2}}}); err != nil {
		t.Fatal(err)
	}
	vs, err := db.Versions(ctx, store.Filter{History: true})
	if err != nil || len(vs) != 2 || vs[0].Current || !vs[1].Current || vs[1].Digest != "sha256:2" {
		t.Fatalf("history: %+v %v", vs, err)
	}
	if err := db.SetEnabled(ctx, "nope", false); !errors.Is(err, store.ErrNotFound) || err.Error() != `skill "nope": not found` {
		t.Errorf("SetEnabled missing: %v", err)
	}
	refs, err := db.Refs(ctx, "/r")
	if err != nil || len(refs) != 1 || refs["/r/a"].Fingerprint != "f2" {
		t.Errorf("refs %v %v", refs, err)
	}
	// Disabling moves the registry generation once; disabling again does
	// not.
	g0, _ := db.RegistryGeneration(ctx)
	for range 2 {
		if err := db.SetEnabled(ctx, "a", false); err != nil {
			t.Fatal(err)
		}
	}
	if g1, _ := db.RegistryGeneration(ctx); g1 != g0+1 {
		t.Errorf("generation %d → %d after one change", g0, g1)
	}
	if vs, _ := db.Versions(ctx, store.Filter{Key: "a"}); len(vs) != 1 || vs[0].Enabled {
		t.Errorf("after disable: %+v", vs)
	}
	// A gone directory leaves the registry with its history.
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Gone: []string{"/r/a"}}}); err != nil {
		t.Fatal(err)
	}
	if vs, err := db.Versions(ctx, store.Filter{History: true}); err != nil || len(vs) != 0 {
		t.Errorf("after gone: %+v %v", vs, err)
	}
}

// testRootTrust: a root's trust is recorded with it (imported when the
// scan gives none) and every version under it has it; a change of trust
// alone moves the registry generation; ApplyRoot records one root and
// leaves the others; a scan never forgets the root of ScopeImported.
func testRootTrust(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
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
	// A brief read leaves the bulky columns out; a summary too.
	full := v("/fp/github", "github")
	full.Frontmatter, full.Files = json.RawMessage(`{"name":"github"}`), json.RawMessage(`[{"path":"SKILL.md","size":1}]`)
	full.Digest = "sha256:github2"
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/fp", Scope: "project", Trust: "first_party", Upserts: []store.Version{full}}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []store.Filter{{Key: "github"}, {Key: "github", Brief: true}} {
		vs, err := db.Versions(ctx, f)
		if err != nil || len(vs) != 1 {
			t.Fatalf("%+v: %+v %v", f, vs, err)
		}
		fm, files, diags := string(vs[0].Frontmatter), string(vs[0].Files), string(vs[0].Diagnostics)
		want := [3]string{`{"name":"github"}`, `[{"path":"SKILL.md","size":1}]`, "[]"}
		if f.Brief {
			want = [3]string{"", "", "[]"}
		}
		if [3]string{fm, files, diags} != want {
			t.Errorf("%+v: frontmatter, files, diagnostics %q, want %q", f, [3]string{fm, files, diags}, want)
		}
	}
	sums, err := db.Versions(ctx, store.Filter{Summary: true})
	if err != nil || len(sums) != 2 || sums[0].Key != "github" || sums[1].Key != "todo" || !sums[0].Current || sums[0].Frontmatter != nil || sums[0].Scope != "project" {
		t.Errorf("summaries %+v %v", sums, err)
	}
}

// testRegistryGenerationShared: a change made through one handle moves
// the generation that another handle on the same store reads.
func testRegistryGenerationShared(t *testing.T, h Harness) {
	ctx := context.Background()
	a := h.Open(t, nil)
	b := h.Share(t, a)
	g0, err := b.RegistryGeneration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := store.Version{Key: "a", Name: "a", Dir: "/r/a", Rel: "a", File: "/r/a/SKILL.md", Digest: "sha256:1", Fingerprint: "f1", Valid: true}
	if err := a.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project", Upserts: []store.Version{v}}}); err != nil {
		t.Fatal(err)
	}
	g1, _ := b.RegistryGeneration(ctx)
	if g1 <= g0 {
		t.Fatalf("generation %d → %d after another handle's scan", g0, g1)
	}
	if err := a.SetEnabled(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	if g2, _ := b.RegistryGeneration(ctx); g2 != g1+1 {
		t.Fatalf("generation %d → %d after another handle's disable", g1, g2)
	}
	// An unchanged rescan moves nothing.
	if err := a.ApplyScans(ctx, []store.RootScan{{Root: "/r", Scope: "project"}}); err != nil {
		t.Fatal(err)
	}
	if g3, _ := b.RegistryGeneration(ctx); g3 != g1+1 {
		t.Fatalf("generation moved on an unchanged scan: %d", g3)
	}
}

// testScanCache: the store keeps discover's records as they are,
// replaces and removes them as told, keeps them through a rolled back
// scan, and forgets those of roots a committed scan drops.
func testScanCache(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	read := func(root string) string {
		t.Helper()
		r, err := db.ReadScanCache(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			return ""
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil || len(b) == 0 {
			t.Fatalf("record %q: %v", b, err)
		}
		return string(b)
	}
	write := func(root, rec string) {
		t.Helper()
		if err := db.WriteScanCache(ctx, root, []byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if read("/a") != "" {
		t.Fatal("a record before any scan")
	}
	write("/a", "A1")
	write("/b", "B1\x00\xff")
	if read("/a") != "A1" || read("/b") != "B1\x00\xff" {
		t.Fatalf("records %q %q", read("/a"), read("/b"))
	}
	write("/a", "A2")
	write("/b", "")
	if read("/a") != "A2" || read("/b") != "" {
		t.Fatalf("records %q %q", read("/a"), read("/b"))
	}
	write("/b", "") // removing what is not there is no error
	write("/b", "B2")
	w, err := db.BeginScan(ctx, []string{"/a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Rollback(); err != nil {
		t.Fatal(err)
	}
	if read("/a") != "A2" || read("/b") != "B2" {
		t.Fatalf("records after a rollback %q %q", read("/a"), read("/b"))
	}
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/a"}}); err != nil {
		t.Fatal(err)
	}
	if read("/b") != "" || read("/a") != "A2" {
		t.Fatalf("records after /b was dropped %q %q", read("/a"), read("/b"))
	}
}

// testPing: a store that is open answers.
func testPing(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := db.SchemaVersion(ctx); err != nil || v < 1 {
		t.Fatalf("schema version %d %v", v, err)
	}
}

// testHostileNames: a directory whose name is not UTF-8 (any bytes but
// NUL and '/' make a name on Linux), or holds '%', is kept exactly: its
// versions, refs, filters, enable state, removal and scan cache record
// see the same bytes the scan gave, and it fails nothing else.
func testHostileNames(t *testing.T, h Harness) {
	ctx := context.Background()
	db := h.Open(t, nil)
	const root = "/r/\xfe"
	bad := store.Version{Key: "bad\xff", Name: "bad\xff", Dir: root + "/bad\xff", Rel: "bad\xff", File: root + "/bad\xff/SKILL.md", Digest: "sha256:1",
		Fingerprint: "f\xff", Valid: false, Diagnostics: json.RawMessage(`[{"message":"bad"}]`)}
	pct := store.Version{Key: "100%", Name: "100%", Dir: root + "/100%", Rel: "100%", File: root + "/100%/SKILL.md", Digest: "sha256:2",
		Fingerprint: "f2", Valid: true, Description: "\x01 first byte"}
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: root, Scope: "project", Upserts: []store.Version{bad, pct}}}); err != nil {
		t.Fatal(err)
	}
	vs, err := db.Versions(ctx, store.Filter{Dir: bad.Dir})
	if err != nil || len(vs) != 1 || vs[0].Key != bad.Key || vs[0].Name != bad.Name || vs[0].Root != root || vs[0].Rel != bad.Rel ||
		vs[0].File != bad.File || vs[0].Fingerprint != bad.Fingerprint || string(vs[0].Diagnostics) != string(bad.Diagnostics) {
		t.Fatalf("by dir: %+v %v", vs, err)
	}
	if vs, err := db.Versions(ctx, store.Filter{Key: "100%"}); err != nil || len(vs) != 1 || vs[0].Dir != pct.Dir || vs[0].Description != pct.Description {
		t.Fatalf("by key: %+v %v", vs, err)
	}
	refs, err := db.Refs(ctx, root)
	if err != nil || len(refs) != 2 || refs[bad.Dir].Fingerprint != "f\xff" || refs[bad.Dir].Key != bad.Key || refs[pct.Dir].Key != "100%" {
		t.Fatalf("refs %+v %v", refs, err)
	}
	if err := db.SetEnabled(ctx, bad.Key, false); err != nil {
		t.Fatal(err)
	}
	roots, err := db.Roots(ctx)
	if err != nil || len(roots) != 1 || roots[0].Path != root {
		t.Fatalf("roots %+v %v", roots, err)
	}
	if err := db.WriteScanCache(ctx, root, []byte("record")); err != nil {
		t.Fatal(err)
	}
	if r, err := db.ReadScanCache(ctx, root); err != nil || r == nil {
		t.Fatalf("scan cache: %v %v", r, err)
	} else {
		r.Close()
	}
	// A rescan that finds the directory gone removes it; the scan cache
	// record of the root, still configured, stays.
	g0, _ := db.RegistryGeneration(ctx)
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: root, Scope: "project", Gone: []string{bad.Dir}}}); err != nil {
		t.Fatal(err)
	}
	if g1, _ := db.RegistryGeneration(ctx); g1 != g0+1 {
		t.Errorf("generation %d → %d after removing one skill", g0, g1)
	}
	if vs, err := db.Versions(ctx, store.Filter{History: true}); err != nil || len(vs) != 1 || vs[0].Key != "100%" {
		t.Fatalf("after gone: %+v %v", vs, err)
	}
	if r, err := db.ReadScanCache(ctx, root); err != nil || r == nil {
		t.Fatalf("scan cache after the rescan: %v %v", r, err)
	} else {
		r.Close()
	}
}

package registry_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// The SQLite store keeps discover's scan cache.
var _ discover.Cache = (*sqlite.DB)(nil)

// walkingStore counts the scans that walked a root (and wrote its scan
// cache record again) instead of verifying the record of its last walk.
type walkingStore struct {
	*sqlite.DB
	walks atomic.Int32
}

func (s *walkingStore) WriteScanCache(ctx context.Context, root string, rec []byte) error {
	s.walks.Add(1)
	return s.DB.WriteScanCache(ctx, root, rec)
}

// settle waits until what was just written can be told apart from a later
// change, so that a scan keeps the state of its walk.
func settle() { time.Sleep(150 * time.Millisecond) }

// TestRescanVerified checks that a rescan of an unchanged tree verifies
// the last walk instead of walking, reports what a walk would, and that
// every change is still seen when a verified state is there to be trusted.
func TestRescanVerified(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{
		"alpha/SKILL.md":          sk("alpha", ""),
		"alpha/scripts/run.sh":    "echo",
		"alpha/references/ref.md": "ref",
		"legal/beta/SKILL.md":     sk("beta", ""),
		"legal/beta/assets/a.txt": "asset",
		"gamma/SKILL.md":          sk("gamma", ""),
		"broken/SKILL.md":         "---\nname: broken\n---\n",
	})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &walkingStore{DB: db}
	reg := registry.New(st, registry.Options{})
	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	scan := func(step string) *registry.ScanReport {
		t.Helper()
		rep, err := reg.Scan(ctx, roots, nil)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		rep.DurationMS, rep.Phases.WalkMS, rep.Phases.ParseMS, rep.Phases.IndexMS = 0, 0, 0, 0
		return rep
	}
	// scanned scans after a change, once the change settled, and checks
	// that the scan walked, then that the next one verifies.
	scanned := func(step string, parsed, removed int) *registry.ScanReport {
		t.Helper()
		settle()
		before := st.walks.Load()
		rep := scan(step)
		if rep.Parsed != parsed || rep.Removed != removed {
			t.Errorf("%s: parsed %d removed %d, want %d and %d", step, rep.Parsed, rep.Removed, parsed, removed)
		}
		if st.walks.Load() == before {
			t.Errorf("%s: the scan did not walk", step)
		}
		again := scan(step + ", again")
		if st.walks.Load() != before+1 {
			t.Errorf("%s, again: the scan walked", step)
		}
		if again.Parsed != 0 || again.Unchanged != rep.Skills || again.Removed != 0 {
			t.Errorf("%s, again: %+v", step, again)
		}
		again.Parsed, again.Unchanged, again.Removed = rep.Parsed, rep.Unchanged, rep.Removed
		if !reflect.DeepEqual(again, rep) {
			t.Errorf("%s: verified report\n%+v\nwalked report\n%+v", step, again, rep)
		}
		return rep
	}
	first := scanned("first scan", 4, 0)
	if first.Skills != 4 || first.Rejected != 1 || len(first.Rejections) != 1 {
		t.Fatalf("first scan: %+v", first)
	}
	beta := func() string {
		e, err := reg.Get(ctx, "legal/beta")
		if err != nil {
			t.Fatal(err)
		}
		return e.Digest
	}
	digest := beta()
	// A resource edited in place, keeping its size.
	write(t, root, map[string]string{"legal/beta/assets/a.txt": "ASSET"})
	scanned("resource edited", 1, 0)
	if beta() == digest {
		t.Error("the edited resource is not in the new digest")
	}
	// Edited again, same size, and its modification time set back.
	digest = beta()
	asset := filepath.Join(root, "legal/beta/assets/a.txt")
	fi, err := os.Stat(asset)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, map[string]string{"legal/beta/assets/a.txt": "AS5ET"})
	if err := os.Chtimes(asset, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	scanned("resource edited, time restored", 1, 0)
	if beta() == digest {
		t.Error("the edit with its time restored is not in the new digest")
	}
	write(t, root, map[string]string{"alpha/scripts/new.sh": "new"})
	scanned("file added", 1, 0)
	if err := os.Remove(filepath.Join(root, "alpha/references/ref.md")); err != nil {
		t.Fatal(err)
	}
	scanned("file removed", 1, 0)
	write(t, root, map[string]string{"broken/SKILL.md": sk("broken", "")})
	if rep := scanned("rejected skill fixed", 1, 0); rep.Rejected != 0 {
		t.Errorf("rejected skill fixed: %+v", rep)
	}
	if err := os.RemoveAll(filepath.Join(root, "gamma")); err != nil {
		t.Fatal(err)
	}
	if rep := scanned("skill removed", 0, 1); rep.Skills != 3 {
		t.Errorf("skill removed: %+v", rep)
	}
	if _, err := reg.Get(ctx, "gamma"); err == nil {
		t.Error("a removed skill is still in the registry")
	}
	// A damaged record is refused: the scan walks.
	for _, p := range mustGlob(t, filepath.Join(filepath.Dir(db.Path()), "scan-cache", "*")) {
		if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scanned("damaged record", 0, 0)
	// Other limits make the scan walk.
	before := st.walks.Load()
	lim := discover.DefaultLimits
	lim.MaxDirs = 10
	if _, err := registry.New(st, registry.Options{Limits: lim}).Scan(ctx, roots, nil); err != nil {
		t.Fatal(err)
	}
	if st.walks.Load() == before {
		t.Error("a scan with other limits did not walk")
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	ps, err := filepath.Glob(pattern)
	if err != nil || len(ps) == 0 {
		t.Fatalf("%s: %v %v", pattern, ps, err)
	}
	return ps
}

// TestFirstScanKeepsRecord checks that a first scan, streamed into the
// store, leaves a scan cache record with which the next scan of the
// unchanged tree verifies instead of walking, and reports the same.
func TestFirstScanKeepsRecord(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{
		"alpha/SKILL.md":          sk("alpha", ""),
		"alpha/scripts/run.sh":    "echo",
		"alpha/references/ref.md": "ref",
		"legal/beta/SKILL.md":     sk("beta", ""),
		"legal/beta/assets/a.txt": "asset",
		"gamma/SKILL.md":          sk("gamma", ""),
	})
	settle() // directories changed just now are not cached
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &walkingStore{DB: db}
	reg := registry.New(st, registry.Options{})
	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	first, err := reg.Scan(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := db.ReadScanCache(ctx, root)
	if err != nil || rec == nil || st.walks.Load() != 1 {
		t.Fatalf("record %v, %v, %d writes", rec, err, st.walks.Load())
	}
	rec.Close()
	again, err := reg.Scan(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.walks.Load() != 1 || again.Parsed != 0 || again.Unchanged != 3 {
		t.Errorf("rescan: %d writes, parsed %d, unchanged %d", st.walks.Load(), again.Parsed, again.Unchanged)
	}
	if first.Roots[0].Dirs != 8 || !reflect.DeepEqual(again.Roots, first.Roots) {
		t.Errorf("roots %+v, first %+v", again.Roots, first.Roots)
	}
}

// writeCountingStore counts the scans that opened a write transaction.
type writeCountingStore struct {
	*sqlite.DB
	writes atomic.Int32
}

func (s *writeCountingStore) BeginScan(ctx context.Context, roots []string) (store.ScanWriter, error) {
	s.writes.Add(1)
	return s.DB.BeginScan(ctx, roots)
}

// TestRescanWritesNothing checks that a rescan that verifies every root
// and finds the store holding what the last walk found opens no write
// transaction and reports what a written scan does; and that whatever
// else changed (the roots' trust or order, a root forgotten, the store
// behind the scan cache) is still written.
func TestRescanWritesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"alpha/SKILL.md": sk("alpha", ""), "broken/SKILL.md": "---\nname: broken\n---\n"})
	write(t, b, map[string]string{"beta/SKILL.md": sk("beta", "")})
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := &writeCountingStore{DB: db}
	reg := registry.New(st, registry.Options{})
	both := []discover.Root{{Path: a, Scope: discover.ScopeProject}, {Path: b, Scope: discover.ScopeUser}}
	settle()
	scan := func(roots []discover.Root) *registry.ScanReport {
		t.Helper()
		rep, err := reg.Scan(ctx, roots, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep.DurationMS, rep.Phases.WalkMS, rep.Phases.ParseMS, rep.Phases.IndexMS = 0, 0, 0, 0
		return rep
	}
	first := scan(both)
	for _, step := range []struct {
		name   string
		roots  []discover.Root
		writes int32 // scans that wrote, from the first on
		parsed int
	}{
		{"unchanged", both, 1, 0},
		{"unchanged again", both, 1, 0},
		{"other order", []discover.Root{both[1], both[0]}, 2, 0},
		{"order back", both, 3, 0},
		{"other trust", []discover.Root{{Path: a, Scope: discover.ScopeProject, Trust: capability.TrustFirstParty}, both[1]}, 4, 2},
		{"trust back", both, 5, 2},
		{"one forgotten", both[:1], 6, 0},
		// b's scan cache record verifies, but the store forgot its
		// skills: they are parsed and written again.
		{"forgotten one back", both, 7, 1},
		{"unchanged at the end", both, 7, 0},
	} {
		rep := scan(step.roots)
		if got := st.writes.Load(); got != step.writes || rep.Parsed != step.parsed {
			t.Errorf("%s: %d scans wrote, parsed %d; want %d and %d", step.name, got, rep.Parsed, step.writes, step.parsed)
		}
		if step.name == "unchanged" || step.name == "unchanged at the end" {
			want := *first
			want.Parsed, want.Unchanged = 0, first.Skills
			if !reflect.DeepEqual(rep, &want) {
				t.Errorf("%s: report\n%+v\nwant\n%+v", step.name, rep, &want)
			}
		}
	}
}

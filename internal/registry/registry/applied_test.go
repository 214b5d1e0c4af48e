package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// TestReportMatchesStore checks that the report a scan computes from what
// it knows (applied) is the report the store's own summary gives, through
// changes, removals, shadowing, rejected skills, dropped and nested roots.
func TestReportMatchesStore(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := New(db, Options{})
	a, b := t.TempDir(), t.TempDir()
	put := func(root, p, c string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sk := func(name string) string {
		return "---\nname: " + name + "\ndescription: does " + name + "\n---\nbody\n"
	}
	put(a, "x/one/SKILL.md", sk("one"))
	put(a, "x/two/SKILL.md", sk("two"))
	put(a, "bad/SKILL.md", "---\nname: bad\n---\n")
	put(a, "worse/SKILL.md", "no frontmatter")
	put(b, "x/one/SKILL.md", sk("one"))
	put(b, "three/SKILL.md", sk("three"))
	put(b, "three/sub/SKILL.md", sk("sub"))

	check := func(step string, roots []discover.Root) {
		t.Helper()
		rep, err := reg.Scan(ctx, roots, nil)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		all, err := db.Versions(ctx, store.Filter{Summary: true})
		if err != nil {
			t.Fatal(err)
		}
		want := &ScanReport{Shadowed: []Shadow{}, Rejections: []Rejection{}}
		summarize(want, currentOf(all))
		got := &ScanReport{Skills: rep.Skills, Valid: rep.Valid, Rejected: rep.Rejected, Shadowed: rep.Shadowed, Rejections: rep.Rejections}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: report\n%+v\nstore says\n%+v", step, got, want)
		}
	}
	both := []discover.Root{{Path: a, Scope: discover.ScopeUser}, {Path: b, Scope: discover.ScopeProject}}
	check("cold", both)
	check("rescan", both)
	put(a, "x/two/SKILL.md", sk("two")+"changed\n")
	put(a, "bad/SKILL.md", sk("bad"))
	put(b, "four/SKILL.md", "---\nname: four\n---\n")
	if err := os.RemoveAll(filepath.Join(b, "three", "sub")); err != nil {
		t.Fatal(err)
	}
	check("changes", both)
	check("swapped scopes", []discover.Root{{Path: a, Scope: discover.ScopeProject}, {Path: b, Scope: discover.ScopeUser}})
	check("reordered", []discover.Root{{Path: b, Scope: discover.ScopeProject}, {Path: a, Scope: discover.ScopeProject}})
	check("one root dropped", []discover.Root{{Path: b, Scope: discover.ScopeProject}, {Path: filepath.Join(a, "missing")}})
	check("nested roots", []discover.Root{{Path: b, Scope: discover.ScopeProject}, {Path: filepath.Join(b, "x"), Scope: discover.ScopeUser}})
	check("nested roots again", []discover.Root{{Path: b, Scope: discover.ScopeProject}, {Path: filepath.Join(b, "x"), Scope: discover.ScopeUser}})
	check("back to both", both)
}

func TestFilesJSON(t *testing.T) {
	type fileJSON struct {
		Path   string `json:"path"`
		Size   int64  `json:"size"`
		Digest string `json:"digest,omitempty"`
	}
	for _, paths := range [][]string{nil, {"SKILL.md"}, {"SKILL.md", "a<b>&c", "é/ü", "q\"\\", "\x01\x7f", "\xff", "x\u2028y"}} {
		var files []skill.File
		ref := []fileJSON{}
		for i, p := range paths {
			d := ""
			if i%2 == 1 {
				d = skill.FileDigest([]byte(p))
			}
			files = append(files, skill.File{Path: p, Size: int64(i * 1000), Digest: d})
			ref = append(ref, fileJSON{p, int64(i * 1000), d})
		}
		want, _ := json.Marshal(ref)
		if got := filesJSON(files); string(got) != string(want) {
			t.Errorf("filesJSON = %s, want %s", got, want)
		}
	}
}

// plainStore hides the streaming of its Store, so scans use ApplyScans.
type plainStore struct{ store.Store }

// failingStore streams scans whose upserts fail.
type failingStore struct{ *sqlite.DB }

func (f failingStore) BeginScan(ctx context.Context, roots []string) (store.ScanWriter, error) {
	w, err := f.DB.BeginScan(ctx, roots)
	return failingWriter{w}, err
}

type failingWriter struct{ store.ScanWriter }

func (failingWriter) Upsert(context.Context, []store.Version) error { return errors.New("disk full") }

func TestScanWithoutStreaming(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for i := 0; i < 150; i++ {
		dir := filepath.Join(root, "c", fmt.Sprintf("s%03d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("---\nname: s%03d\ndescription: skill %d\n---\n", i, i)
		if i%7 == 0 {
			body = "---\nname: x\n---\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	var reports []*ScanReport
	for _, mk := range []func(*sqlite.DB) store.Store{
		func(db *sqlite.DB) store.Store { return db },
		func(db *sqlite.DB) store.Store { return plainStore{db} },
	} {
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rep, err := New(mk(db), Options{}).Scan(ctx, roots, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep.DurationMS, rep.Phases.WalkMS, rep.Phases.ParseMS, rep.Phases.IndexMS = 0, 0, 0, 0
		reports = append(reports, rep)
		all, err := db.Versions(ctx, store.Filter{})
		if err != nil || len(all) != 150 {
			t.Fatalf("%d versions, %v", len(all), err)
		}
	}
	if !reflect.DeepEqual(reports[0], reports[1]) {
		t.Errorf("streamed scan\n%+v\napplied scan\n%+v", reports[0], reports[1])
	}

	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := New(failingStore{db}, Options{}).Scan(ctx, roots, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("scan with failing writes: %v", err)
	}
	if all, err := db.Versions(ctx, store.Filter{}); err != nil || len(all) != 0 {
		t.Fatalf("after a failed scan: %d versions, %v", len(all), err)
	}
}

// TestResolveUnsorted checks that precedence does not depend on the input
// being grouped by key, as the store lists versions.
func TestResolveUnsorted(t *testing.T) {
	sorted := []store.Version{
		{Key: "!bad", Dir: "/u/bad", Scope: "user"},
		{Key: "a/x", Dir: "/u/a/x", Scope: "user"},
		{Key: "a/x", Dir: "/p/a/x", Scope: "project"},
		{Key: "a/x", Dir: "/b/a/x", Scope: "builtin"},
		{Key: "y", Dir: "/p/y", Scope: "project"},
		{Key: "z", Dir: "/u/z", Scope: "user"},
		{Key: "z", Dir: "/u2/z", Scope: "user"},
	}
	wantWinners, wantShadows := resolve(sorted)
	// Keys apart, each key's versions keep their order (root position,
	// then directory), which breaks ties.
	shuffled := []store.Version{sorted[5], sorted[4], sorted[1], sorted[0], sorted[2], sorted[6], sorted[3]}
	gotWinners, gotShadows := resolve(shuffled)
	if !reflect.DeepEqual(gotShadows, wantShadows) || !reflect.DeepEqual(gotWinners, wantWinners) {
		t.Errorf("unsorted input: winners %v shadows %v\nsorted input: winners %v shadows %v", gotWinners, gotShadows, wantWinners, wantShadows)
	}
	if len(wantShadows) != 3 || wantShadows[0].Winner != "/p/a/x" {
		t.Errorf("shadows %+v", wantShadows)
	}
}

// TestShadowsAnyOrder checks that the shadowing a scan report gives does
// not depend on the order of the versions, and is what resolve decides
// over the versions in the store's order.
func TestShadowsAnyOrder(t *testing.T) {
	sorted := []store.Version{
		{Key: "!bad", Dir: "/u/bad", Scope: "user"},
		{Key: "!bad", Dir: "/v/bad", Scope: "project"},
		{Key: "a/x", Dir: "/u/a/x", Scope: "user"},
		{Key: "a/x", Dir: "/p/a/x", Scope: "project"},
		{Key: "a/x", Dir: "/b/a/x", Scope: "builtin"},
		{Key: "y", Dir: "/p/y", Scope: "project"},
		{Key: "z", Dir: "/u/z", Scope: "user"},
		{Key: "z", Dir: "/u2/z", Scope: "user"},
	}
	_, want := resolve(sorted)
	all := currentOf(sorted)
	if got := shadowsOf(all); !reflect.DeepEqual(got, want) {
		t.Errorf("in the store's order: %+v, want %+v", got, want)
	}
	for _, perm := range [][]int{{7, 6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 2, 7, 4, 1, 5}} {
		shuffled := make([]current, len(all))
		for i, j := range perm {
			shuffled[i] = all[j]
		}
		if got := shadowsOf(shuffled); !reflect.DeepEqual(got, want) {
			t.Errorf("order %v: %+v, want %+v", perm, got, want)
		}
	}
}

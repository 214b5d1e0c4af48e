package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/store"
)

// FuzzPackRefs checks that packed refs decode to what was packed, and that
// decoding arbitrary bytes fails cleanly instead of panicking.
func FuzzPackRefs(f *testing.F) {
	f.Add("/r", "/r/a", "/elsewhere", "fp", "key", "name", true, "[]", []byte{1, 2, 0})
	f.Add("/", "/x", "", "", "", "", false, `[{"severity":"error"}]`, []byte{1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, root, dir1, dir2, fp, key, name string, valid bool, diags string, garbage []byte) {
		refs := map[string]store.Ref{
			dir1: {Fingerprint: fp, Key: key, Name: name, Valid: valid},
			dir2: {Fingerprint: fp + "2", Key: key, Name: name, Valid: !valid},
		}
		for dir, r := range refs {
			if !r.Valid {
				r.Diagnostics = json.RawMessage(diags)
				refs[dir] = r
			}
		}
		got, ok := unpackRefs(root, string(packRefs(root, refs)))
		if !ok {
			t.Fatal("packed refs were not unpacked")
		}
		// An empty value and none unpack alike.
		for dir, r := range refs {
			if len(r.Diagnostics) == 0 {
				r.Diagnostics = nil
				refs[dir] = r
			}
			if g := got[dir]; len(g.Diagnostics) == 0 {
				g.Diagnostics = nil
				got[dir] = g
			}
		}
		if !reflect.DeepEqual(got, refs) {
			t.Fatalf("unpacked %v, want %v", got, refs)
		}
		_, _ = unpackRefs(root, string(garbage))
	})
}

// TestPackedRefsAgree checks that the packed refs of every root always
// hold what the versions table says, through first scans, changes,
// removals, roots dropped and added, and nested roots (which keep none).
func TestPackedRefsAgree(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ver := func(root, name, digest string, valid bool) store.Version {
		v := store.Version{Key: name, Name: name, Dir: root + "/" + name, Rel: name, File: root + "/" + name + "/SKILL.md",
			Digest: digest, Fingerprint: "fp-" + digest, Valid: valid}
		if !valid {
			v.Key = "!" + name
			v.Diagnostics = json.RawMessage(`[{"severity":"error","message":"bad ` + name + `"}]`)
		}
		return v
	}
	check := func(step string, roots ...string) {
		t.Helper()
		for _, root := range roots {
			got, err := db.Refs(ctx, root)
			if err != nil {
				t.Fatal(err)
			}
			want, err := queryRefs(ctx, db.db, root)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: refs of %s\n got %v\nwant %v", step, root, got, want)
			}
		}
	}
	packed := func(root string) bool {
		_, ok, err := packedRefs(ctx, db.db, root)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	apply := func(step string, streamed bool, scans ...store.RootScan) {
		t.Helper()
		var err error
		if streamed {
			var roots []string
			for _, sc := range scans {
				roots = append(roots, sc.Root)
			}
			var w store.ScanWriter
			if w, err = db.BeginScan(ctx, roots); err == nil {
				for _, sc := range scans {
					ups := sc.Upserts
					sc.Upserts = nil
					if err = w.Root(ctx, sc); err != nil {
						break
					}
					for len(ups) > 0 && err == nil {
						err = w.Upsert(ctx, ups[:1])
						ups = ups[1:]
					}
				}
				if err == nil {
					err = w.Commit()
				} else {
					w.Rollback()
				}
			}
		} else {
			err = db.ApplyScans(ctx, scans)
		}
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	for _, streamed := range []bool{false, true} {
		a, b := fmt.Sprintf("/a%v", streamed), fmt.Sprintf("/b%v", streamed)
		apply("first", streamed,
			store.RootScan{Root: a, Scope: "project", Upserts: []store.Version{ver(a, "one", "1", true), ver(a, "two", "1", true), ver(a, "bad", "1", false)}},
			store.RootScan{Root: b, Scope: "user", Position: 1, Upserts: []store.Version{ver(b, "one", "1", true)}})
		check("first", a, b)
		if !packed(a) || !packed(b) {
			t.Fatal("a first scan packed no refs")
		}
		apply("nothing changed", streamed, store.RootScan{Root: a, Scope: "project"}, store.RootScan{Root: b, Scope: "user", Position: 1})
		check("nothing changed", a, b)
		apply("changes", streamed,
			store.RootScan{Root: a, Scope: "project", Upserts: []store.Version{ver(a, "two", "2", true), ver(a, "bad", "2", true), ver(a, "new", "1", false)},
				Gone: []string{a + "/one"}},
			store.RootScan{Root: b, Scope: "user", Position: 1, Gone: []string{b + "/one"}})
		check("changes", a, b)
		// An old version coming back is current again.
		apply("revert", streamed, store.RootScan{Root: a, Scope: "project", Upserts: []store.Version{ver(a, "two", "1", true)}})
		check("revert", a)
		// Without packed refs (an older database), they are read once.
		if _, err := db.db.Exec(`DELETE FROM root_refs WHERE root = ?`, a); err != nil {
			t.Fatal(err)
		}
		check("unpacked", a)
		apply("repacked", streamed, store.RootScan{Root: a, Scope: "project"})
		if !packed(a) {
			t.Error("refs were not packed again")
		}
		check("repacked", a)
		// Nested roots keep none; disjoint ones pack again.
		sub := a + "/two"
		apply("nested", streamed, store.RootScan{Root: a, Scope: "project"},
			store.RootScan{Root: sub, Scope: "user", Position: 1, Upserts: []store.Version{ver(sub, "x", "1", true)}})
		if packed(a) || packed(sub) {
			t.Error("nested roots packed refs")
		}
		check("nested", a, sub)
		apply("disjoint again", streamed, store.RootScan{Root: a, Scope: "project"})
		if !packed(a) {
			t.Error("refs were not packed again")
		}
		check("disjoint again", a)
		// A dropped root takes its packed refs with it.
		if packed(b) {
			t.Error("a dropped root kept its packed refs")
		}
	}
}

// TestScanCacheFiles checks what the suite's ScanCache case cannot see:
// records are files beside the database, and a committed scan also removes
// a temporary file left long ago and the walk states of earlier versions.
func TestScanCacheFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, root := range []string{"/a", "/b"} {
		if err := db.WriteScanCache(ctx, root, []byte("record of "+root)); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(dir, scanCacheDir, ".tmp-left")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	longAgo := db.Now().Add(-2 * 3600e9)
	if err := os.Chtimes(old, longAgo, longAgo); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, oldWalkStateDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := db.ApplyScans(ctx, []store.RootScan{{Root: "/a"}}); err != nil {
		t.Fatal(err)
	}
	des, err := os.ReadDir(filepath.Join(dir, scanCacheDir))
	if err != nil || len(des) != 1 || des[0].Name() != filepath.Base(db.scanCachePath("/a")) {
		t.Errorf("scan cache files %v %v, want the record of /a alone", des, err)
	}
	r, err := db.ReadScanCache(ctx, "/a")
	if err != nil || r == nil {
		t.Fatalf("record of /a: %v %v", r, err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "record of /a" {
		t.Errorf("record of /a %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, oldWalkStateDir)); !os.IsNotExist(err) {
		t.Errorf("the walk states of earlier versions were kept: %v", err)
	}
}

package discover_test

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/registry/discover"
)

// settle waits until what was just written is older than the window in
// which a walk cannot tell a later change apart, so that the walk makes a
// state.
func settle() { time.Sleep(150 * time.Millisecond) }

func stateTree(t testing.TB) string {
	t.Helper()
	root := writeTree(t, map[string]string{
		"a/SKILL.md":                sk("a"),
		"a/scripts/run.sh":          "echo",
		"a/references/REFERENCE.md": "ref",
		"a/.git/config":             "x",
		"a/node_modules/m/index.js": "x",
		"a/nested/SKILL.md":         sk("nested"),
		"a/nested/more.md":          "m",
		"legal/deeds/SKILL.md":      sk("deeds"),
		"legal/deeds/assets/t.txt":  "template",
		"legal/README.md":           "not a skill",
		"lower/skill.md":            sk("lower"),
		"empty/README.md":           "no skill",
		"top.md":                    "a file in the root",
	})
	if err := os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return root
}

// sameResult fails unless got is the result want describes.
func sameResult(t *testing.T, got, want *discover.Result) {
	t.Helper()
	if got.Root != want.Root || got.Dirs != want.Dirs || got.Truncated != want.Truncated || got.Missing != want.Missing {
		t.Errorf("verified result %+v, walk %+v", got, want)
	}
	if !reflect.DeepEqual(got.Notes, want.Notes) {
		t.Errorf("notes %q, walk %q", got.Notes, want.Notes)
	}
	if !reflect.DeepEqual(got.Dropped, want.Dropped) {
		t.Errorf("dropped %+v, walk %+v", got.Dropped, want.Dropped)
	}
	if !reflect.DeepEqual(got.Candidates, want.Candidates) {
		t.Errorf("candidates\n %+v\nwalk\n %+v", got.Candidates, want.Candidates)
	}
}

func TestVerify(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	t.Parallel()
	ctx := context.Background()
	root := stateTree(t)
	settle()
	r := discover.Root{Path: root, Scope: discover.ScopeUser}
	var c memCache
	walk, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil {
		t.Fatal(err)
	}
	if walk.Verified || !discover.HasStateForTest(c.get(root), root) {
		t.Fatalf("first scan verified %v; a settled tree made a state: %v", walk.Verified, discover.HasStateForTest(c.get(root), root))
	}
	writes := c.writes
	got, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || !got.Verified || got.CacheError != nil {
		t.Fatalf("an unchanged tree was not verified: %v, %v", err, got.CacheError)
	}
	sameResult(t, got, walk)
	if c.writes != writes {
		t.Error("a verified scan wrote its record again")
	}
	// The root may be named another way.
	rel, err := filepath.Rel(mustGetwd(t), root)
	if err == nil {
		if res, err := discover.Scan(ctx, discover.Root{Path: rel}, discover.DefaultLimits, &c); err != nil || !res.Verified {
			t.Errorf("a relative spelling of the root was not verified: %v", err)
		}
	}
	// Other limits are not verified (the listings are still used), nor
	// is another root's record.
	lim := discover.DefaultLimits
	lim.MaxDirs++
	if res, err := discover.Scan(ctx, r, lim, &c); err != nil || res.Verified || res.CacheError != nil {
		t.Errorf("other limits: %v, verified %v, cache error %v", err, res.Verified, res.CacheError)
	}
	if _, err := discover.Scan(ctx, r, discover.DefaultLimits, &c); err != nil {
		t.Fatal(err)
	}
	other := writeTree(t, map[string]string{"a/SKILL.md": sk("a")})
	var oc memCache
	oc.set(other, c.get(root))
	res, err := discover.Scan(ctx, discover.Root{Path: other}, discover.DefaultLimits, &oc)
	if wantErr := "scan cache of " + other + ": corrupt scan cache: not the record of root " + other + "; the root is walked and its cache written again"; err != nil || res.Verified || res.CacheError == nil || res.CacheError.Error() != wantErr {
		t.Errorf("another root's record: %v, verified %v, cache error %v, want %q", err, res.Verified, res.CacheError, wantErr)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := discover.Scan(cancelled, r, discover.DefaultLimits, &c); !errors.Is(err, context.Canceled) {
		t.Errorf("scan with a cancelled context: %v", err)
	}
}

// TestVerifySeesChanges changes a settled tree in every way a walk would
// see, and some it would not need to, and checks that the state of the
// walk before is never verified, and that a walk after makes a state that
// is.
func TestVerifySeesChanges(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	changes := map[string]func(t *testing.T, root string){
		"SKILL.md edited": func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "a/SKILL.md"), []byte(sk("a")+"more\n"), 0o644))
		},
		"a resource edited in place, same size, same mtime": func(t *testing.T, root string) {
			p := filepath.Join(root, "a/scripts/run.sh")
			fi, err := os.Stat(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte("ECHO"), 0o644))
			must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		},
		"a nested skill's file edited": func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "a/nested/more.md"), []byte("changed"), 0o644))
		},
		"a file added": func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "legal/deeds/assets/new.txt"), []byte("n"), 0o644))
		},
		"a file removed": func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "a/references/REFERENCE.md")))
		},
		"a skill directory removed": func(t *testing.T, root string) {
			must(t, os.RemoveAll(filepath.Join(root, "lower")))
		},
		"a skill added": func(t *testing.T, root string) {
			must(t, os.MkdirAll(filepath.Join(root, "legal/wills"), 0o755))
			must(t, os.WriteFile(filepath.Join(root, "legal/wills/SKILL.md"), []byte(sk("wills")), 0o644))
		},
		"a file replaced by a link": func(t *testing.T, root string) {
			p := filepath.Join(root, "a/scripts/run.sh")
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/passwd", p))
		},
		"a file's mode changed": func(t *testing.T, root string) {
			must(t, os.Chmod(filepath.Join(root, "a/scripts/run.sh"), 0o755))
		},
		"a directory renamed": func(t *testing.T, root string) {
			must(t, os.Rename(filepath.Join(root, "a/scripts"), filepath.Join(root, "a/bin")))
		},
		"a non-skill directory's listing changed": func(t *testing.T, root string) {
			must(t, os.WriteFile(filepath.Join(root, "empty/SKILL.md"), []byte(sk("empty")), 0o644))
		},
		"the root replaced by a link": func(t *testing.T, root string) {
			moved := root + ".moved"
			must(t, os.Rename(root, moved))
			t.Cleanup(func() { os.RemoveAll(moved) })
			must(t, os.Symlink(moved, root))
		},
		"the root removed": func(t *testing.T, root string) {
			must(t, os.RemoveAll(root))
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			root := stateTree(t)
			settle()
			r := discover.Root{Path: root}
			var c memCache
			if _, err := discover.Scan(ctx, r, discover.DefaultLimits, &c); err != nil || !discover.HasStateForTest(c.get(root), root) {
				t.Fatalf("scan: %v, no state", err)
			}
			change(t, root)
			got, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
			want, werr := discover.Walk(ctx, r, discover.DefaultLimits)
			if (err == nil) != (werr == nil) {
				t.Fatalf("scan: %v, walk: %v", err, werr)
			}
			if err != nil {
				return // the root is a link: nothing to verify
			}
			if got.Verified {
				t.Fatal("the state of the walk before the change was verified")
			}
			sameResult(t, got, want)
			if got.Missing {
				if c.get(root) != "" {
					t.Error("a missing root kept its record")
				}
				return
			}
			settle()
			after, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
			if err != nil {
				t.Fatal(err)
			}
			again, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
			if err != nil || !again.Verified {
				t.Fatalf("the state of the walk after the change was not verified: %v", err)
			}
			sameResult(t, again, after)
		})
	}
}

// TestNoStateWhenRacy checks that a walk makes no state when something
// changed too recently for a later change to be told apart.
func TestNoStateWhenRacy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	t.Parallel()
	root := stateTree(t)
	settle()
	ctx := context.Background()
	// A file whose modification time is not yet past (as one changed
	// during the walk has) makes no state.
	soon := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "a/scripts/run.sh"), soon, soon); err != nil {
		t.Fatal(err)
	}
	var c memCache
	_, err := discover.Scan(ctx, discover.Root{Path: root}, discover.DefaultLimits, &c)
	if err != nil {
		t.Fatal(err)
	}
	if discover.HasStateForTest(c.get(root), root) {
		t.Error("a walk that met a file changed after it started made a state")
	}
	// Nor does a tree made just now (when the walk starts within the
	// window, which a slow machine may miss).
	made := time.Now()
	root = stateTree(t)
	_, err = discover.Scan(ctx, discover.Root{Path: root}, discover.DefaultLimits, &c)
	if err != nil {
		t.Fatal(err)
	}
	if rec := c.get(root); rec != "" && discover.HasStateForTest(rec, root) && time.Since(made) < 90*time.Millisecond {
		t.Error("a walk right after the tree was made made a state")
	}
	// A directory that cannot be read makes none either.
	settle()
	if os.Geteuid() != 0 {
		dir := filepath.Join(root, "legal/deeds/assets")
		if err := os.Chmod(dir, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		settle()
		_, err = discover.Scan(ctx, discover.Root{Path: root}, discover.DefaultLimits, &c)
		if err != nil {
			t.Fatal(err)
		}
		if discover.HasStateForTest(c.get(root), root) {
			t.Error("a walk that could not read a directory made a state")
		}
	}
}

// TestScanCorruptRecord damages a record in every way at random and
// checks that the scan refuses what it reads of it (the checksums), says
// so, and finds what a walk finds: never a crash, never a wrong entry.
func TestScanCorruptRecord(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	t.Parallel()
	ctx := context.Background()
	root := stateTree(t)
	settle()
	r := discover.Root{Path: root}
	var c memCache
	walk, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || !discover.HasStateForTest(c.get(root), root) {
		t.Fatalf("scan: %v", err)
	}
	good := c.get(root)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		st := []byte(good)
		switch i % 3 {
		case 0:
			st = st[:rng.Intn(len(st))]
		case 1:
			st[rng.Intn(len(st))] ^= byte(1 + rng.Intn(255))
		case 2:
			j := rng.Intn(len(st))
			st = append(st[:j], st[j+1:]...)
		}
		c.set(root, string(st))
		res, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
		if err != nil {
			t.Fatal(err)
		}
		// Damage to the listings is seen only when they are read: a
		// verified scan does not.
		if !res.Verified && res.CacheError == nil && strings.HasPrefix(string(st), "skillgate scan cache 1\n") {
			t.Fatalf("corrupt record %d: not verified, and no cache error", i)
		}
		sameResult(t, res, walk)
	}
	// Paths that would leave the root are refused even when well formed.
	for _, rel := range []string{"..", "../x", "a/../../x", "/etc", "a//b", "a/./b", ""} {
		if discover.VerifyRelForTest(rel) {
			t.Errorf("%q accepted", rel)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// FuzzScanRecord gives Scan arbitrary records of a real tree (a record is
// a file in the data directory, and may be damaged): it must never panic,
// and what it returns must be what a walk of the root finds.
func FuzzScanRecord(f *testing.F) {
	if runtime.GOOS != "linux" {
		f.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	root := stateTree(f)
	settle()
	r := discover.Root{Path: root, Scope: discover.ScopeUser}
	var c memCache
	walk, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
	if err != nil || !discover.HasStateForTest(c.get(root), root) {
		f.Fatalf("no record to start from: %v", err)
	}
	rec := []byte(c.get(root))
	f.Add(rec)
	f.Add(rec[:len(rec)/2])
	f.Add([]byte("skillgate scan cache 1\n"))
	f.Add([]byte("skillgate walk state 3\n\x00"))
	f.Fuzz(func(t *testing.T, rec []byte) {
		c := memCache{}
		c.set(root, string(rec))
		got, err := discover.Scan(ctx, r, discover.DefaultLimits, &c)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, got, walk)
	})
}

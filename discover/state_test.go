package discover_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/skillgate/skillgate/discover"
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
	walk, err := discover.Walk(ctx, r, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if walk.State == nil {
		t.Fatal("a settled tree made no state")
	}
	got, ok := discover.Verify(ctx, r, discover.DefaultLimits, walk.State)
	if !ok {
		t.Fatal("an unchanged tree was not verified")
	}
	sameResult(t, got, walk)
	if &got.State[0] != &walk.State[0] {
		t.Error("the verified result's state is not the one verified")
	}
	// The root may be named another way.
	rel, err := filepath.Rel(mustGetwd(t), root)
	if err == nil {
		if _, ok := discover.Verify(ctx, discover.Root{Path: rel}, discover.DefaultLimits, walk.State); !ok {
			t.Error("a relative spelling of the root was not verified")
		}
	}
	// Another root, other limits and no state are not verified.
	lim := discover.DefaultLimits
	lim.MaxDirs++
	other := writeTree(t, map[string]string{"a/SKILL.md": sk("a")})
	for name, f := range map[string]func() bool{
		"other root": func() bool {
			_, ok := discover.Verify(ctx, discover.Root{Path: other}, discover.DefaultLimits, walk.State)
			return ok
		},
		"other limits": func() bool { _, ok := discover.Verify(ctx, r, lim, walk.State); return ok },
		"no state":     func() bool { _, ok := discover.Verify(ctx, r, discover.DefaultLimits, nil); return ok },
	} {
		if f() {
			t.Errorf("%s: verified", name)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, ok := discover.Verify(cancelled, r, discover.DefaultLimits, walk.State); ok {
		t.Error("verified with a cancelled context")
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
			before, err := discover.Walk(ctx, r, discover.DefaultLimits)
			if err != nil || before.State == nil {
				t.Fatalf("walk: %v, state %v", err, before.State != nil)
			}
			change(t, root)
			if _, ok := discover.Verify(ctx, r, discover.DefaultLimits, before.State); ok {
				t.Fatal("the state of the walk before the change was verified")
			}
			settle()
			after, err := discover.Walk(ctx, r, discover.DefaultLimits)
			if err != nil {
				return // the root is gone or a link: nothing to verify
			}
			if after.Missing {
				if after.State != nil {
					t.Error("a missing root made a state")
				}
				return
			}
			got, ok := discover.Verify(ctx, r, discover.DefaultLimits, after.State)
			if !ok {
				t.Fatal("the state of the walk after the change was not verified")
			}
			sameResult(t, got, after)
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
	res, err := discover.Walk(ctx, discover.Root{Path: root}, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != nil {
		t.Error("a walk that met a file changed after it started made a state")
	}
	// Nor does a tree made just now (when the walk starts within the
	// window, which a slow machine may miss).
	made := time.Now()
	root = stateTree(t)
	res, err = discover.Walk(ctx, discover.Root{Path: root}, discover.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != nil && time.Since(made) < 90*time.Millisecond {
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
		res, err = discover.Walk(ctx, discover.Root{Path: root}, discover.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if res.State != nil {
			t.Error("a walk that could not read a directory made a state")
		}
	}
}

// TestVerifyCorruptState checks that a damaged state is refused, never
// trusted or a crash.
func TestVerifyCorruptState(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("walk states are Linux-only")
	}
	t.Parallel()
	ctx := context.Background()
	root := stateTree(t)
	settle()
	r := discover.Root{Path: root}
	walk, err := discover.Walk(ctx, r, discover.DefaultLimits)
	if err != nil || walk.State == nil {
		t.Fatalf("walk: %v", err)
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		st := append([]byte(nil), walk.State...)
		switch i % 3 {
		case 0:
			st = st[:rng.Intn(len(st))]
		case 1:
			st[rng.Intn(len(st))] ^= byte(1 + rng.Intn(255))
		case 2:
			j := rng.Intn(len(st))
			st = append(st[:j], st[j+1:]...)
		}
		res, ok := discover.Verify(ctx, r, discover.DefaultLimits, st)
		if !ok {
			continue
		}
		// A change the stats cannot see (in a note, a fingerprint, a
		// file's recorded size) may verify; the result must still be
		// well formed.
		for _, c := range res.Candidates {
			if c.Dir == "" || c.Rel == "" {
				t.Fatalf("corrupt state %d verified with a malformed candidate %+v", i, c)
			}
		}
	}
	// Paths that would leave the root are refused even when well formed.
	for _, rel := range []string{"..", "../x", "a/../../x", "/etc", "a//b", "a/./b"} {
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

// FuzzVerifyState feeds Verify damaged and arbitrary walk states (a state
// is a file in the data directory, and may be damaged): it must never
// panic, and whenever it accepts a state, what it returns must be what a
// walk of the root finds.
func FuzzVerifyState(f *testing.F) {
	if runtime.GOOS != "linux" {
		f.Skip("walk states are Linux-only")
	}
	ctx := context.Background()
	root := stateTree(f)
	settle()
	r := discover.Root{Path: root, Scope: discover.ScopeUser}
	walk, err := discover.Walk(ctx, r, discover.DefaultLimits)
	if err != nil || walk.State == nil {
		f.Fatalf("no state to start from: %v", err)
	}
	f.Add(walk.State)
	f.Add(walk.State[:len(walk.State)/2])
	f.Add([]byte("skillgate walk state 2\n"))
	f.Add([]byte("skillgate walk state 1\n\x00"))
	f.Fuzz(func(t *testing.T, state []byte) {
		got, ok := discover.Verify(ctx, r, discover.DefaultLimits, state)
		if ok {
			sameResult(t, got, walk)
		}
	})
}

package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
)

func mustOpen(t testing.TB, dir string) *local.Store {
	t.Helper()
	st, err := local.Open(dir, &local.Options{MaxObjectSize: blobtest.MaxObjectSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) {
	blobtest.TestStore(t, func(t testing.TB) blob.Store { return mustOpen(t, t.TempDir()) })
}

// layout builds, next to the store root, a secret file and a set of symbolic
// links inside the root: some stay inside, some leave it.
func layout(t *testing.T) (*local.Store, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "skill", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(base, "secret.txt"), []byte("top secret"), 0o644))
	must(os.MkdirAll(filepath.Join(base, "outside"), 0o755))
	must(os.WriteFile(filepath.Join(base, "outside", "o.txt"), []byte("outside"), 0o644))
	must(os.WriteFile(filepath.Join(root, "skill", "real.md"), []byte("real"), 0o644))
	must(os.Symlink("../../secret.txt", filepath.Join(root, "skill", "escape-rel")))
	must(os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "skill", "escape-abs")))
	must(os.Symlink("../../outside", filepath.Join(root, "skill", "escape-dir")))
	must(os.Symlink("/etc", filepath.Join(root, "skill", "etc")))
	must(os.Symlink("real.md", filepath.Join(root, "skill", "inside-link")))
	must(os.Symlink("..", filepath.Join(root, "skill", "sub", "loop")))
	must(os.Symlink("self", filepath.Join(root, "skill", "self")))
	must(os.Symlink("../real.md", filepath.Join(root, "skill", "sub", "up.md")))
	return mustOpen(t, root), base
}

func TestSymlinks(t *testing.T) {
	st, _ := layout(t)
	ctx := context.Background()
	tests := []struct {
		key  string
		want error // nil: readable, content "real"
	}{
		{"skill/real.md", nil},
		{"skill/inside-link", nil},
		{"skill/sub/loop/real.md", nil},
		{"skill/sub/up.md", nil},
		{"skill/escape-rel", blob.ErrEscape},
		{"skill/escape-abs", blob.ErrEscape},
		{"skill/escape-dir/o.txt", blob.ErrEscape},
		{"skill/etc/passwd", blob.ErrEscape},
		{"skill/self", blob.ErrEscape},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			b, _, err := blob.ReadAll(ctx, st, tc.key, 0)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ReadAll(%q) = %q, %v; want %v", tc.key, b, err, tc.want)
			}
			if tc.want == nil && string(b) != "real" {
				t.Fatalf("ReadAll(%q) = %q, want %q", tc.key, b, "real")
			}
			if _, err := st.Stat(ctx, tc.key); !errors.Is(err, tc.want) {
				t.Fatalf("Stat(%q) = %v, want %v", tc.key, err, tc.want)
			}
		})
	}
	// A directory handle applies the same rules: a link that leaves the
	// directory but stays in the root is followed, one that leaves the root
	// is refused.
	for _, tc := range []struct {
		dir, name string
		want      error
	}{
		{"skill/sub/", "up.md", nil},
		{"skill/", "inside-link", nil},
		{"skill/", "escape-rel", blob.ErrEscape},
		{"skill/", "escape-abs", blob.ErrEscape},
	} {
		h, err := st.OpenDir(ctx, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		rc, info, err := h.Get(ctx, tc.name)
		if !errors.Is(err, tc.want) {
			t.Errorf("OpenDir(%q).Get(%q) = %v, want %v", tc.dir, tc.name, err, tc.want)
		}
		if err == nil {
			b, _, _ := blob.ReadBody(rc, info, 0, nil)
			if string(b) != "real" {
				t.Errorf("OpenDir(%q).Get(%q) = %q", tc.dir, tc.name, b)
			}
		}
		h.Close()
	}
	if _, err := st.OpenDir(ctx, "skill/escape-dir/"); !errors.Is(err, blob.ErrEscape) {
		t.Errorf("OpenDir(escaping link) = %v, want ErrEscape", err)
	}
	// Writing through an escaping directory link is refused too.
	if err := st.Put(ctx, "skill/escape-dir/new.txt", strings.NewReader("x"), 1); !errors.Is(err, blob.ErrEscape) {
		t.Errorf("Put through escaping link = %v, want ErrEscape", err)
	}
	// Listings show in-root file links, never escaping links, and never
	// descend directory links (which would loop).
	got, err := st.List(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, in := range got {
		ks = append(ks, in.Key)
	}
	if want := []string{"skill/inside-link", "skill/real.md", "skill/sub/up.md"}; !slices.Equal(ks, want) {
		t.Errorf("List = %q, want %q", ks, want)
	}
	d, err := st.ListDir(ctx, "skill/", 0)
	if err != nil || !slices.Equal(d.Dirs, []string{"sub"}) || len(d.Files) != 2 {
		t.Errorf("ListDir(skill/) = %+v, %v", d, err)
	}
}

func TestDeleteKeepsDirectoryLinks(t *testing.T) {
	st, _ := layout(t)
	ctx := context.Background()
	if err := st.Put(ctx, "skill/sub/loop/tmp.md", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "skill/sub/loop/tmp.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(st.Dir(), "skill", "sub", "loop")); err != nil {
		t.Fatalf("pruning removed the directory link: %v", err)
	}
	if err := st.Delete(ctx, "skill/escape-rel"); err != nil {
		t.Fatalf("Delete(link) = %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(st.Dir()), "secret.txt")); err != nil {
		t.Fatalf("deleting a link removed its target: %v", err)
	}
}

func TestConflict(t *testing.T) {
	st := mustOpen(t, t.TempDir())
	ctx := context.Background()
	if err := st.Put(ctx, "a", strings.NewReader("file"), 4); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "a/b", strings.NewReader("x"), 1); !errors.Is(err, blob.ErrConflict) {
		t.Errorf("Put under a file = %v, want ErrConflict", err)
	}
	if err := st.Put(ctx, "d/e", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "d", strings.NewReader("x"), 1); !errors.Is(err, blob.ErrConflict) {
		t.Errorf("Put over a directory = %v, want ErrConflict", err)
	}
	if err := st.Delete(ctx, "d"); err != nil {
		t.Errorf("Delete(directory) = %v, want nil (not an object)", err)
	}
	if _, err := st.Stat(ctx, "d/e"); err != nil {
		t.Errorf("Delete(directory) removed its content: %v", err)
	}
}

func TestReservedTempDir(t *testing.T) {
	st := mustOpen(t, t.TempDir())
	ctx := context.Background()
	for _, k := range []string{".skillgate-tmp", ".skillgate-tmp/x"} {
		if err := st.Put(ctx, k, strings.NewReader("x"), 1); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if _, err := st.List(ctx, ".skillgate-tmp/", 0); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("List(tmp) = %v, want ErrInvalidKey", err)
	}
	// ".skillgate-tmpx" is an ordinary key.
	if err := st.Put(ctx, ".skillgate-tmpx", strings.NewReader("x"), 1); err != nil {
		t.Errorf("Put(.skillgate-tmpx) = %v", err)
	}
	got, err := st.List(ctx, "", 0)
	if err != nil || len(got) != 1 || got[0].Key != ".skillgate-tmpx" {
		t.Errorf("List = %+v, %v; the temp directory must stay hidden", got, err)
	}
}

func TestStaleTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	st.Close()
	stale := filepath.Join(dir, ".skillgate-tmp", "stale")
	fresh := filepath.Join(dir, ".skillgate-tmp", "fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dir)
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
}

func TestNoTempLeftAfterFailedPut(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	ctx := context.Background()
	_ = st.Put(ctx, "x", strings.NewReader("short"), 100)
	if err := st.Put(ctx, "f", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	_ = st.Put(ctx, "f/under", strings.NewReader("x"), 1) // conflict after the temp file was written
	ents, err := os.ReadDir(filepath.Join(dir, ".skillgate-tmp"))
	if err != nil || len(ents) != 0 {
		t.Errorf("temp dir holds %d entries (%v), want 0", len(ents), err)
	}
}

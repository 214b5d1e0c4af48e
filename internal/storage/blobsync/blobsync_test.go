package blobsync_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/blobsync"
)

func TestCheck(t *testing.T) {
	lim := blobsync.Limits{MaxFiles: 2, MaxBytes: 10, MaxDepth: 1}
	for _, tc := range []struct {
		name string
		objs []blob.Info
		want string
	}{
		{"fits", []blob.Info{{Key: "p/a", Size: 5}, {Key: "p/d/b", Size: 5}}, ""},
		{"too many files", []blob.Info{{Key: "p/a"}, {Key: "p/b"}, {Key: "p/c"}}, "blobsync: tree over its limits: more than 2 files (limit 2)"},
		{"too many bytes", []blob.Info{{Key: "p/a", Size: 6}, {Key: "p/b", Size: 5}}, "blobsync: tree over its limits: more than 10 bytes (limit 10)"},
		{"too deep", []blob.Info{{Key: "p/a/b/c", Size: 1}}, `blobsync: tree over its limits: "a/b/c" is 2 levels deep (limit 1)`},
		{"negative size", []blob.Info{{Key: "p/a", Size: -1}}, `blobsync: tree over its limits: "a" has a negative size`},
		{"outside the prefix", []blob.Info{{Key: "q/a"}}, `blob: invalid key: "q/a" is not under "p/"`},
		{"dot-dot", []blob.Info{{Key: "p/../a"}}, `blob: invalid key: "p/../a" is not under "p/"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := blobsync.Check("p/", tc.objs, lim)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func open(t *testing.T) blob.Store {
	st, err := local.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func put(t *testing.T, st blob.Store, key, body string) {
	t.Helper()
	if err := st.Put(context.Background(), key, strings.NewReader(body), int64(len(body))); err != nil {
		t.Fatal(err)
	}
}

// TestMaterialize writes a tree, replaces it, and refuses one over its
// limits without touching what is there.
func TestMaterialize(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	put(t, st, "s/SKILL.md", "one")
	put(t, st, "s/r/a.md", "a")
	dst := filepath.Join(t.TempDir(), "cache", "skill")
	list := func() []blob.Info {
		objs, err := st.List(ctx, "s/", 0)
		if err != nil {
			t.Fatal(err)
		}
		return objs
	}
	if err := blobsync.Materialize(ctx, st, "s/", list(), dst, blobsync.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if got := files(t, filepath.Dir(dst)); !slices.Equal(got, []string{"skill/SKILL.md=one", "skill/r/a.md=a"}) {
		t.Fatalf("first: %q", got)
	}
	put(t, st, "s/SKILL.md", "two")
	if err := st.Delete(ctx, "s/r/a.md"); err != nil {
		t.Fatal(err)
	}
	if err := blobsync.Materialize(ctx, st, "s/", list(), dst, blobsync.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if got := files(t, filepath.Dir(dst)); !slices.Equal(got, []string{"skill/SKILL.md=two"}) {
		t.Fatalf("replaced: %q", got)
	}
	put(t, st, "s/b.md", "b")
	err := blobsync.Materialize(ctx, st, "s/", list(), dst, blobsync.Limits{MaxFiles: 1})
	if !errors.Is(err, blobsync.ErrLimit) {
		t.Fatalf("over the limit: %v", err)
	}
	if got := files(t, filepath.Dir(dst)); !slices.Equal(got, []string{"skill/SKILL.md=two"}) {
		t.Fatalf("after a refusal: %q", got)
	}
	// A listing that no longer matches the objects (an upload in
	// progress) writes nothing.
	stale := list()
	put(t, st, "s/b.md", "bigger")
	err = blobsync.Materialize(ctx, st, "s/", stale, dst, blobsync.DefaultLimits)
	if !errors.Is(err, blob.ErrSizeMismatch) {
		t.Fatalf("stale listing: %v", err)
	}
	if got := files(t, filepath.Dir(dst)); !slices.Equal(got, []string{"skill/SKILL.md=two"}) {
		t.Fatalf("after a stale listing: %q", got)
	}
}

// TestDigest checks that a tree's digest in a store is the one of the
// same files on disk.
func TestDigest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := local.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put(t, st, "t/SKILL.md", "---\nname: t\n---\n")
	put(t, st, "t/a/b.txt", "bee")
	files, err := blobsync.Files(ctx, st, "t/", blobsync.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	got, err := blobsync.Digest(ctx, st, "t/", files)
	if err != nil {
		t.Fatal(err)
	}
	want, err := skill.Digest(ctx, os.DirFS(filepath.Join(dir, "t")), []skill.File{{Path: "SKILL.md", Size: 16}, {Path: "a/b.txt", Size: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("digest in the store %s, on disk %s", got, want)
	}
	if _, err := blobsync.Files(ctx, st, "t/", blobsync.Limits{MaxFiles: 1}); !errors.Is(err, blobsync.ErrLimit) {
		t.Fatalf("Files over the limit: %v", err)
	}
}

// files lists dir's regular files as path=content, skipping dot-entries.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("left behind: %s", p)
			return nil
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel)+"="+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

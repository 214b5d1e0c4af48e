package local_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
)

// TestOpenReadOnly: a read-only store writes nothing into its directory
// (no temporary directory, no stale-temp cleanup, no Put or Delete), opens a
// directory its user cannot write, and refuses a missing directory instead
// of creating it.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ticket")
	if err := os.MkdirAll(filepath.Join(dir, ".skillgate-tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".skillgate-tmp", "old")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "brief.md"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	st, err := local.Open(dir, &local.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open a directory its user cannot write: %v", err)
	}
	defer st.Close()
	rc, _, err := st.Get(ctx, "brief.md")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "hello" {
		t.Fatalf("Get: %q", b)
	}
	for _, tc := range []struct {
		op   string
		err  error
		want string
	}{
		{"put", st.Put(ctx, "new.md", strings.NewReader("x"), 1), `blob: store is read-only: put "new.md" in ` + dir},
		{"delete", st.Delete(ctx, "brief.md"), `blob: store is read-only: delete "brief.md" in ` + dir},
	} {
		if !errors.Is(tc.err, blob.ErrReadOnly) || tc.err.Error() != tc.want {
			t.Errorf("%s: got %v, want %s", tc.op, tc.err, tc.want)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".skillgate-tmp brief.md" {
		t.Errorf("directory holds %q after read-only use", got)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("a read-only store removed a temporary file of the directory: %v", err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o555 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}

	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := local.Open(missing, &local.Options{ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open a missing directory read-only: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a read-only open created %s", missing)
	}
}

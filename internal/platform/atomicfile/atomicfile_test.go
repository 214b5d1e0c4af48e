package atomicfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/skillgate/skillgate/internal/platform/atomicfile"
)

// entries lists dir's names, to show no temporary file is left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  string // content before, "" for none
		perm fs.FileMode
	}{
		{"new file", "", 0o600},
		{"replaces", "old content", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := atomicfile.Write(path, []byte("new"), tc.perm); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != "new" {
				t.Fatalf("content = %q, %v; want \"new\"", b, err)
			}
			if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != tc.perm {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.perm)
			}
			if got := entries(t, dir); len(got) != 1 {
				t.Errorf("directory holds %q, want only f.json", got)
			}
		})
	}
}

func TestWriteFailureLeavesOldContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory in the target's place: the rename fails, the temporary
	// file goes, and what was there stays.
	sub := filepath.Join(dir, "d")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(sub, []byte("new"), 0o600); err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	if got := entries(t, dir); len(got) != 2 {
		t.Errorf("directory holds %q, want d and f only", got)
	}
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write into a missing directory: err = %v, want fs.ErrNotExist", err)
	}
}

func TestWriteNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	if err := atomicfile.WriteNew(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteNew(path, []byte("second"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteNew over an existing file: err = %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("content = %q, want the first write kept", b)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("directory holds %q, want only key", got)
	}
}

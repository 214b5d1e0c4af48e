package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMountCLI: --mount lends agents an existing directory to read. A
// missing one or a file is a usage error (exit 2) and nothing is created;
// a directory its user cannot write is mounted, and nothing is written
// into it.
func TestMountCLI(t *testing.T) {
	base := t.TempDir()
	readOnly := filepath.Join(base, "ticket")
	if err := os.Mkdir(readOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(readOnly, "brief.md"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(readOnly, 0o755) })
	file := filepath.Join(base, "notes.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "missing")

	for _, tc := range []struct {
		name, dir  string
		code       int
		stderr     string
		wantInside []string // the directory's entries afterwards; nil: it must not exist
	}{
		{"missing", missing, 2, "Error: --mount /ticket=" + missing + ": " + missing + " does not exist; a mount lends agents an existing directory to read: create it or fix the path\n", nil},
		{"file", file, 2, "Error: --mount /ticket=" + file + ": " + file + " is not a directory; a mount lends agents an existing directory to read: create it or fix the path\n", nil},
		{"read-only", readOnly, 0, "", []string{"brief.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, t.TempDir(), "disclose", "--tier", "T3", "--mount", "/ticket="+tc.dir)
			if code != tc.code || stderr != tc.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr, tc.code, tc.stderr)
			}
			if tc.dir == missing {
				if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("--mount created %s", missing)
				}
				return
			}
			if tc.wantInside == nil {
				return
			}
			ents, err := os.ReadDir(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			if len(got) != len(tc.wantInside) || got[0] != tc.wantInside[0] {
				t.Fatalf("%s holds %v after the mount, want %v", tc.dir, got, tc.wantInside)
			}
		})
	}
}

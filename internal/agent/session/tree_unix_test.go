//go:build unix

package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/store"
)

// TestTreeGetFIFOSwappedIn: a FIFO swapped in for a recorded file between
// the tree's check and its open is refused at once, not waited on (an open
// without O_NONBLOCK blocks until a writer appears, which never happens).
func TestTreeGetFIFOSwappedIn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(file, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := newTree(dir, []byte(`[{"path":"notes.md","size":6}]`))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	tr.beforeOpen = func(string) {
		if err := os.Rename(fifo, file); err != nil {
			t.Error(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		rc, _, err := tr.Get(context.Background(), "notes.md")
		if rc != nil {
			rc.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("Get = %v, want blob.ErrNotFound", err)
		}
		const want = `blob: object not found: "notes.md" changed while being opened`
		if err.Error() != want {
			t.Fatalf("Get error = %q, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		// Unblock the open so the goroutine ends, then fail.
		if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("Get blocked on a FIFO swapped in for a skill file")
	}
}

// TestTreeHardLinks: a recorded file with a second name is not served (it
// can name a file from outside the skill), unless its root allows it.
func TestTreeHardLinks(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("operator's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(dir, "notes.md")); err != nil {
		t.Skipf("link: %v", err)
	}
	v := store.Version{Root: "/roots/a", Dir: dir, Files: []byte(`[{"path":"SKILL.md","size":1},{"path":"notes.md","size":17}]`)}
	tests := []struct {
		name    string
		src     LocalSource
		wantGet string
		wantLs  string
	}{
		{"refused", LocalSource{}, `blob: object not found: "notes.md" is a hard link (the file has 2 names), not served from ` + dir + `; list its root under hard_links roots if that is intended`, "SKILL.md"},
		{"other root allowed", LocalSource{HardLinkRoots: []string{"/roots/b"}}, `blob: object not found: "notes.md" is a hard link (the file has 2 names), not served from ` + dir + `; list its root under hard_links roots if that is intended`, "SKILL.md"},
		{"root allowed", LocalSource{HardLinkRoots: []string{"/roots/a"}}, "operator's secret", "SKILL.md notes.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, _, err := tt.src.Mount(ctx, "acme", v)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if b, _, err := blob.ReadAll(ctx, st, "notes.md", 1<<20); err != nil {
				got = err.Error()
			} else {
				got = string(b)
			}
			if got != tt.wantGet {
				t.Errorf("Get = %q, want %q", got, tt.wantGet)
			}
			infos, err := st.List(ctx, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, in := range infos {
				names = append(names, in.Key)
			}
			if ls := strings.Join(names, " "); ls != tt.wantLs {
				t.Errorf("List = %q, want %q", ls, tt.wantLs)
			}
		})
	}
}

// TestTreeGetFIFOSwapLoop: under a loop of FIFOs swapped in for a skill
// file, every Get returns and no descriptor is left open.
func TestTreeGetFIFOSwapLoop(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.md")
	tr, err := newTree(dir, []byte(`[{"path":"notes.md","size":6}]`))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	tr.beforeOpen = func(string) {
		if err := os.Rename(fifo, file); err != nil {
			t.Error(err)
		}
	}
	openFDs := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(ents)
	}
	before := openFDs()
	for i := range 300 {
		if err := os.WriteFile(file, []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			rc, _, err := tr.Get(context.Background(), "notes.md")
			if rc != nil {
				rc.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("swap %d: Get = %v, want blob.ErrNotFound", i, err)
			}
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("swap %d: Get blocked on a FIFO", i)
		}
		os.Remove(file)
	}
	if after := openFDs(); after > before {
		t.Errorf("%d descriptors open after 300 swaps, %d before", after, before)
	}
}

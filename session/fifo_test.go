//go:build unix

package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/blob"
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

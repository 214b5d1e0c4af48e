//go:build unix

package skill

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadFIFO: a SKILL.md that is a FIFO is refused at once instead of
// blocking the reader until a writer appears.
func TestLoadFIFO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fifo-skill")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "SKILL.md"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan *Skill, 1)
	go func() {
		s, err := Load(context.Background(), dir, Options{Mode: Strict})
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	select {
	case s := <-done:
		if len(s.Diagnostics) != 1 || s.Diagnostics[0].Message != "Missing required file: SKILL.md" {
			t.Fatalf("diagnostics = %+v, want the single 'Missing required file: SKILL.md'", s.Diagnostics)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(filepath.Join(dir, "SKILL.md"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("Load blocked on a SKILL.md that is a FIFO")
	}
}

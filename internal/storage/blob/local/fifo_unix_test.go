//go:build unix

package local_test

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

func TestSpecialFilesAreNotObjects(t *testing.T) {
	dir := t.TempDir()
	st := mustOpen(t, dir)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, _, err := st.Get(ctx, "fifo")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get(fifo) = %v, want ErrNotFound", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get(fifo) blocked")
	}
	got, err := st.List(ctx, "", 0)
	if err != nil || len(got) != 0 {
		t.Errorf("List = %+v, %v; want the FIFO skipped", got, err)
	}
}

package stdiotap_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillgate/skillgate/stdiotap"
)

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	var n int
	var err error
	rc, _ := f.SyscallConn()
	rc.Control(func(fd uintptr) { n, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGrowPipe: a pipe grows to PipeBytes from either end, and a 64 KiB
// message then fits in it whole; a file is left alone; nil is no error.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if n := pipeSize(t, r); n >= stdiotap.PipeBytes {
		t.Skipf("pipes already hold %d bytes here", n)
	}
	stdiotap.GrowPipe(r)
	if n := pipeSize(t, w); n != stdiotap.PipeBytes {
		t.Fatalf("pipe size %d after GrowPipe, want %d", n, stdiotap.PipeBytes)
	}
	// The write end is still non-blocking for Go's poller: a message that
	// fits is written without a reader.
	if _, err := w.Write(make([]byte, 70<<10)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdiotap.GrowPipe(f)
	stdiotap.GrowPipe(nil)
}

package pipe_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillgate/skillgate/internal/platform/pipe"
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

// TestGrow: a pipe grows to Capacity from either end, and a 64 KiB
// message then fits in it whole; a file is left alone; nil is no error.
func TestGrow(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if n := pipeSize(t, r); n >= pipe.Capacity {
		t.Skipf("pipes already hold %d bytes here", n)
	}
	pipe.Grow(r)
	if n := pipeSize(t, w); n != pipe.Capacity {
		t.Fatalf("pipe size %d after Grow, want %d", n, pipe.Capacity)
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
	pipe.Grow(f)
	pipe.Grow(nil)
}

// TestPoll: a blocking pipe (what a process's standard input is) comes
// back as another file that the poller reads (a read deadline applies to
// it, which it cannot to a blocking descriptor), reading the same stream;
// a file that is not a pipe, and nil, come back as they are.
func TestPoll(t *testing.T) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	// As a child's standard input: a blocking descriptor, outside the poller.
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "agent")
	defer w.Close()
	if err := r.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("a blocking pipe took a deadline")
	}
	p := pipe.Poll(r)
	if p == r {
		t.Fatal("Poll returned the blocking pipe")
	}
	defer p.Close()
	r.Close() // p has its own descriptor
	if err := p.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatalf("the polled pipe takes no deadline: %v", err)
	}
	buf := make([]byte, 16)
	if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from an empty polled pipe: %v, want the deadline", err)
	}
	if err := p.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "{}\n" {
		t.Fatalf("read %q, %v; want the message", buf[:n], err)
	}
	w.Close()
	if n, err := p.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read at the end %d, %v; want io.EOF", n, err)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := pipe.Poll(f); got != f {
		t.Fatal("a regular file was replaced")
	}
	if got := pipe.Poll(nil); got != nil {
		t.Fatal("nil was replaced")
	}
}

package jsonrpcline

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestConsumed(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string // the parts left, joined by |
	}{
		{0, "ab|cde|f"},
		{1, "b|cde|f"},
		{2, "cde|f"},
		{4, "e|f"},
		{5, "f"},
		{6, ""},
	} {
		parts := [][]byte{[]byte("ab"), []byte("cde"), []byte("f")}
		got := consumed(parts, tc.n)
		var s []string
		for _, p := range got {
			s = append(s, string(p))
		}
		if strings.Join(s, "|") != tc.want {
			t.Errorf("consumed(%d) = %q; want %q", tc.n, strings.Join(s, "|"), tc.want)
		}
	}
}

// TestWriteLineVectored writes messages large enough for writev(2) through
// a pipe of one page, so that each takes many partial writes and waits for
// room, while other goroutines write small messages: every message arrives
// whole, in one piece, with its newline.
func TestWriteLineVectored(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		t.Skipf("cannot shrink the pipe: %v", err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB
	wr := NewWriter(w)
	const n = 20
	errs := make(chan error, 2)
	go func() {
		for i := range n {
			if err := wr.WriteLine([]byte(`{"i":`), []byte{'0' + byte(i%10)}, []byte(`,"text":"`), big, []byte(`"}`)); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() {
		for range n {
			if err := wr.WriteLine([]byte(`{"small":true}`)); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}()
	go func() {
		for range 2 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		w.Close()
	}()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != 2*n {
		t.Fatalf("%d lines; want %d", len(lines), 2*n)
	}
	bigs := 0
	for _, l := range lines {
		switch {
		case string(l) == `{"small":true}`:
		case len(l) == len(big)+len(`{"i":0,"text":""}`) && bytes.Contains(l, big):
			if want := byte('0' + bigs%10); l[5] != want {
				t.Fatalf("big message %d has i %c; want %c", bigs, l[5], want)
			}
			bigs++
		default:
			t.Fatalf("a torn message of %d bytes: %.40q…", len(l), l)
		}
	}
	if bigs != n {
		t.Fatalf("%d big messages; want %d", bigs, n)
	}
}

// TestWriteLineVectoredClosed: a write to a pipe whose reader is gone is
// an error naming the write, as os.File's is.
func TestWriteLineVectoredClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r.Close()
	err = NewWriter(w).WriteLine(bytes.Repeat([]byte("x"), vectorMin))
	if !errors.Is(err, syscall.EPIPE) || !strings.HasPrefix(err.Error(), "write: ") {
		t.Fatalf("WriteLine to a closed pipe: %v; want write: EPIPE", err)
	}
}

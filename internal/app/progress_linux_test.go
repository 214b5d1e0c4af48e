package app

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillgate/skillgate/internal/platform/termtext"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	return master, slave
}

// TestStepProgress: the status line is drawn only on a terminal and not
// with JSON output, replaces itself, renders outside text harmless, and
// is cleared before results print.
func TestStepProgress(t *testing.T) {
	var buf bytes.Buffer
	if s := StepProgress(&buf, false); s != nil {
		t.Fatal("a status line for a buffer")
	}
	var none *Steps
	none.Show("nothing %s", "here")
	none.Clear()

	master, slave := openPTY(t)
	if s := StepProgress(slave, true); s != nil {
		t.Fatal("a status line with --json")
	}
	s := StepProgress(termtext.NewWriter(slave), false)
	if s == nil {
		t.Fatal("no status line on a terminal behind termtext")
	}
	s.Show("fetching %s", "https://git.example.com/x\x1b]0;owned\x07.git")
	s.Show("installing %d of %d: %s", 1, 2, "notes")
	s.Clear()
	s.Clear() // nothing shown: nothing written
	slave.Close()
	var got bytes.Buffer
	b := make([]byte, 4096)
	for {
		n, err := master.Read(b)
		got.Write(b[:n])
		if err != nil {
			break
		}
	}
	want := "\r\x1b[Kfetching https://git.example.com/x\\u001b]0;owned\\u0007.git (0s)" +
		"\r\x1b[Kinstalling 1 of 2: notes (0s)" +
		"\r\x1b[K"
	if got.String() != want {
		t.Errorf("terminal got\n%q\nwant\n%q", got.String(), want)
	}
}

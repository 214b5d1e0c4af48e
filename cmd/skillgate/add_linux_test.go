package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

// TestAddProgressOnTerminal: with stderr on a terminal, add shows the
// repository's fetch and each install on one line, and clears it before
// the reviews; with --json, nothing is drawn.
func TestAddProgressOnTerminal(t *testing.T) {
	root := t.TempDir()
	base := gitServer(t, root)
	skillRepo(t, root, "skills", map[string]string{
		"a/SKILL.md": skillMD("alpha", "First."),
		"b/SKILL.md": skillMD("beta", "Second."),
	})
	repo := base + "/skills.git"
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"install", []string{"add", repo, "--all"}, []string{"\r\x1b[Kfetching git+" + repo + "…", "\r\x1b[Kinstalling 1 of 2: alpha…", "\r\x1b[Kinstalling 2 of 2: beta…"}},
		{"list", []string{"add", repo, "--list"}, []string{"\r\x1b[Kfetching git+" + repo + "…"}},
		{"JSON", []string{"add", repo, "--all", "--json"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			master, slave := openPTY(t)
			data := filepath.Join(t.TempDir(), "data")
			var out bytes.Buffer
			m := &Main{Stdout: &out, Stderr: slave, Getenv: func(k string) string {
				if k == "SKILLGATE_DATA" {
					return data
				}
				return ""
			}}
			code := m.Run(context.Background(), tc.args)
			slave.Close()
			var tty bytes.Buffer
			b := make([]byte, 4096)
			for {
				n, err := master.Read(b)
				tty.Write(b[:n])
				if err != nil {
					break
				}
			}
			if code != 0 {
				t.Fatalf("%d\n%s\n%q", code, out.String(), tty.String())
			}
			got := tty.String()
			if tc.want == nil {
				if got != "" {
					t.Errorf("drawn with --json: %q", got)
				}
				return
			}
			last := 0
			for _, w := range tc.want {
				i := strings.Index(got[last:], w)
				if i < 0 {
					t.Fatalf("the terminal lacks %q after byte %d:\n%q", w, last, got)
				}
				last += i + len(w)
			}
			if !strings.HasSuffix(got, "\r\x1b[K") {
				t.Errorf("the line is not cleared at the end: %q", got)
			}
		})
	}
}

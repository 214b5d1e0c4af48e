//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestNewSession: a confined server gets a session of its own unless
// SameSession says it need not, and SessionNeeded says so only where a
// controlling terminal exists.
func TestNewSession(t *testing.T) {
	look := func(name string) (string, error) { return "/usr/bin/" + name, nil }
	for _, tc := range []struct {
		same bool
		want bool
	}{{false, true}, {true, false}} {
		cmd := exec.Command("/bin/true")
		if err := (sandbox.Bubblewrap{SameSession: tc.same, LookPath: look, MemoryBytes: -1}).Confine(cmd); err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(bwrapOptions(t, cmd), "--new-session"); got != tc.want {
			t.Errorf("SameSession %v: --new-session %v; want %v (%q)", tc.same, got, tc.want, cmd.Args)
		}
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR|syscall.O_NOCTTY, 0); err != nil {
		if sandbox.SessionNeeded() {
			t.Error("SessionNeeded with no controlling terminal")
		}
	} else {
		f.Close()
	}
}

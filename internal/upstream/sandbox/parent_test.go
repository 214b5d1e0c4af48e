package sandbox_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/sandbox"
)

// TestBubblewrapDiesWithParent: a confined server is killed with the
// process that started it (skillgate), even by SIGKILL, which gives
// skillgate no chance to stop it.
func TestBubblewrapDiesWithParent(t *testing.T) {
	requireBwrap(t)
	marker := "sg-sandbox-" + rand.Text()
	cmd := exec.Command("/bin/sh", "-c", "sleep 600; :", marker)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := (sandbox.Bubblewrap{}).Confine(cmd); err != nil {
		t.Fatal(err)
	}
	// The parent stands for skillgate: it starts the confined command and
	// waits for it.
	parent := exec.Command("/bin/sh", append([]string{"-c", `"$@" & wait`, "sh", cmd.Path}, cmd.Args[1:]...)...)
	parent.Env = cmd.Env
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer parent.Wait()
	const wait = 20 * time.Second
	deadline := time.Now().Add(wait)
	// The confined shell, not only the parent or bwrap whose arguments
	// hold the marker too: bwrap arms --die-with-parent once it runs.
	confined := "/bin/sh\x00-c\x00sleep 600; :\x00" + marker
	for len(processesWith(confined)) == 0 {
		if time.Now().After(deadline) {
			parent.Process.Kill()
			t.Fatalf("the confined command did not start within %s", wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// bwrap arms --die-with-parent in its outer process a moment after
	// the confined command may already run (measured: a parent killed
	// at once leaves bwrap running in about 2 of 3 runs); give it that.
	time.Sleep(200 * time.Millisecond)
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(wait)
	for {
		pids := processesWith(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-eo", "pid,ppid,stat,cmd").Output()
			t.Fatalf("confined processes %v outlive their parent by %s:\n%s", pids, wait, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWith lists the pids whose command line holds marker.
func processesWith(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

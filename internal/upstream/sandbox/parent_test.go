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
	// waits for it. It passes on bwrap's options (the descriptor Confine
	// adds), as skillgate's own start of cmd does.
	parent := exec.Command("/bin/sh", append([]string{"-c", `"$@" & wait`, "sh", cmd.Path}, cmd.Args[1:]...)...)
	parent.Env = cmd.Env
	parent.ExtraFiles = cmd.ExtraFiles
	// A file, not a pipe: a bwrap that outlived its parent would hold a
	// pipe open, and Wait with it.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	parent.Stderr = stderr
	said := func() string { b, _ := os.ReadFile(stderr.Name()); return string(b) }
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { parent.Wait(); close(exited) }()
	defer func() { parent.Process.Kill(); <-exited }()
	const wait = 20 * time.Second
	deadline := time.Now().Add(wait)
	// The confined shell itself (its command line starts with its own
	// argv), not the parent or bwrap, whose arguments hold the marker
	// too: bwrap arms --die-with-parent once it runs.
	confined := "/bin/sh\x00-c\x00sleep 600; :\x00" + marker + "\x00"
	for len(processesStarting(confined)) == 0 {
		select {
		case <-exited:
			t.Fatalf("the parent exited before the confined command started: %s", said())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the confined command did not start within %s: %s", wait, said())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A moment for bwrap's outer process to arm --die-with-parent, should
	// it do so after the confined command starts (a parent killed at once
	// passed 10 runs of 10 here; the margin costs little).
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
	return processes(func(cmdline []byte) bool { return bytes.Contains(cmdline, []byte(marker)) })
}

// processesStarting lists the pids whose command line starts with prefix.
func processesStarting(prefix string) []int {
	return processes(func(cmdline []byte) bool { return bytes.HasPrefix(cmdline, []byte(prefix)) })
}

// processes lists the pids whose command line match accepts.
func processes(match func(cmdline []byte) bool) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && match(b) {
			pids = append(pids, pid)
		}
	}
	return pids
}

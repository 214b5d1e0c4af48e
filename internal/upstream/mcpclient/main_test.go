package mcpclient_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestMain doubles as the test server: the tests start this binary again
// with testserver.EnvMode set, so every stdio test talks to a real
// subprocess built from the SDK.
func TestMain(m *testing.M) {
	if os.Getenv(testserver.EnvMode) != "" {
		os.Exit(testserver.Main())
	}
	os.Exit(m.Run())
}

// testLimits are short enough to keep the bad-server tests fast and long
// enough for a race-instrumented subprocess to start on a busy machine.
func testLimits() mcpclient.Limits {
	return mcpclient.Limits{
		InitializeTimeout: 10 * time.Second,
		ListTimeout:       10 * time.Second,
		CallTimeout:       10 * time.Second,
		TerminateTimeout:  200 * time.Millisecond,
	}
}

// testOptions returns options for the test server: nothing inherited but
// what coverage and the race detector need.
func testOptions(limits mcpclient.Limits) *mcpclient.Options {
	return &mcpclient.Options{
		Limits:     limits,
		InheritEnv: []string{"GOCOVERDIR", "GORACE", "TMPDIR"},
	}
}

// tagEnv marks every process a test starts, so assertGone can find
// survivors.
const tagEnv = "SKILLGATE_TESTSERVER_TAG"

// tagCounter makes tags unique within this test process.
var tagCounter atomic.Int64

// testDecl declares the test server in the given mode, with extra env and a
// unique tag.
func testDecl(t testing.TB, id, mode string, env map[string]string) mcpclient.ServerDecl {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{
		testserver.EnvMode: mode,
		tagEnv:             fmt.Sprintf("%d-%d", os.Getpid(), tagCounter.Add(1)),
	}
	for k, v := range env {
		e[k] = v
	}
	return mcpclient.ServerDecl{ID: id, Transport: capability.TransportStdio, Command: exe, Env: e}
}

// assertGone fails the test if any process started for decl (the server or
// a grandchild) is still running. It allows a short grace period: a killed
// grandchild is reaped by init asynchronously.
func assertGone(t testing.TB, decl mcpclient.ServerDecl) {
	t.Helper()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		return // no procfs: nothing to inspect
	}
	marker := []byte(tagEnv + "=" + decl.Env[tagEnv] + "\x00")
	deadline := time.Now().Add(3 * time.Second)
	for {
		pids := processesWith(marker)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of server %q still running: %v", decl.ID, pids)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesWith lists live (non-zombie) processes whose environment contains
// marker.
func processesWith(marker []byte) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, marker) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

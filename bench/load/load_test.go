package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadSmall runs the load test harness at a small scale (10 agents, 200
// skills) so that CI keeps it working: the build, the registry, the
// install, the tokens, the server, the agents' walk, the audit count and
// audit verify. It asserts what does not depend on the machine's speed:
// every agent connected, no error, exactly one audit record per capability
// call, a log that verifies; the timing goals are bench/load.sh's.
func TestLoadSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds skillgate and starts servers; skipped with -short")
	}
	npm := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if npm == "" {
		t.Skip("SKILLGATE_TEST_NPM_DIR is unset; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	if _, err := os.Stat(filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-filesystem")); err != nil {
		t.Skipf("npm server-filesystem is not installed: %v", err)
	}
	var log bytes.Buffer
	rep, err := Run(context.Background(), Config{
		Agents: 10, Skills: 200, Timeout: 3 * time.Minute, NPMDir: npm, Think: 10 * time.Millisecond,
		Repo: filepath.Join("..", ".."), GenDir: filepath.Join(t.TempDir(), "skills"), Log: &log,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())
	if !rep.Correct() {
		t.Fatalf("the load test found errors:\n%s\n%s", out.String(), log.String())
	}
	if rep.CapCalls != 10 || rep.Pages < 10 || rep.Listed == 0 {
		t.Fatalf("calls %d, pages %d, listed %d: every agent should list skills and call the capability once", rep.CapCalls, rep.Pages, rep.Listed)
	}
	for _, op := range Ops {
		if n := len(rep.Latency[op]); n != 10 && op != "skill_list page" {
			t.Errorf("%s: %d samples, want 10", op, n)
		}
	}
}

// TestQuantile pins the quantile the report uses: the sample at
// floor(q·(n−1)) of the sorted samples.
func TestQuantile(t *testing.T) {
	s := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0, 1}, {0.5, 5}, {0.99, 9}, {1, 10}} {
		if got := quantile(s, tc.q); got != tc.want {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile of nothing = %v", got)
	}
}

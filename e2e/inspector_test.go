package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// inspector returns the MCP Inspector CLI installed by
// scripts/setup-inspector.sh in $SKILLGATE_TEST_NPM_DIR, or skips.
func inspector(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if dir == "" {
		t.Skip("SKILLGATE_TEST_NPM_DIR is unset; run `eval \"$(scripts/setup-npm.sh)\" && scripts/setup-inspector.sh \"$SKILLGATE_TEST_NPM_DIR\"` to test with the MCP Inspector CLI")
	}
	p := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is missing; run scripts/setup-inspector.sh %q", p, dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return p
}

// TestInspectorWalk replays the seed walk through the MCP Inspector CLI, an
// outside client: every step is a separate `mcp-inspector --cli` process
// that starts `skillgate mcp`, so the walk also shows that the session
// (loaded skills) persists across connections.
func TestInspectorWalk(t *testing.T) {
	insp := inspector(t)
	f := newFixture(t)
	call := func(t testing.TB, tool string, args map[string]any) (string, bool) {
		t.Helper()
		cmdArgs := []string{"--cli",
			"-e", "SKILLGATE_DATA=" + f.data, "-e", "SKILLGATE_AGENT=drafter", "-e", "SKILLGATE_TIER=T3",
			"-e", "SKILLGATE_TENANT=acme", "-e", "SKILLGATE_SESSION=inspector-walk",
			bin, "mcp", "--method", "tools/call", "--tool-name", tool}
		for k, v := range args {
			cmdArgs = append(cmdArgs, "--tool-arg", fmt.Sprintf("%s=%v", k, v))
		}
		cmd := exec.Command(insp, cmdArgs...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var res struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if jerr := json.Unmarshal(out.Bytes(), &res); jerr != nil {
			t.Fatalf("mcp-inspector %s %v: %v (%v)\nstdout: %s\nstderr: %s", tool, args, jerr, err, out.String(), errb.String())
		}
		// The CLI exits non-zero exactly when the result is an error.
		if (err != nil) != res.IsError {
			t.Errorf("mcp-inspector %s: exit %v but isError %v", tool, err, res.IsError)
		}
		var b strings.Builder
		for _, c := range res.Content {
			b.WriteString(c.Text)
		}
		return b.String(), res.IsError
	}
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, false), call)
}

// TestInspectorStrictSchemas lists the gateway's tools through the MCP
// Inspector CLI with --strict, which reports tool-schema portability
// problems on stderr: there are none (skill_list's output schema used to
// type its lists ["null","array"]).
func TestInspectorStrictSchemas(t *testing.T) {
	insp := inspector(t)
	f := newFixture(t)
	cmd := exec.Command(insp, "--cli",
		"-e", "SKILLGATE_DATA="+f.data, "-e", "SKILLGATE_AGENT=drafter", "-e", "SKILLGATE_TIER=T1", "-e", "SKILLGATE_TENANT=acme",
		bin, "mcp", "--method", "tools/list", "--strict")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-inspector --strict tools/list: %v\nstderr: %s", err, errb.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		// skillgate's own lines (the session; the report of a scan at
		// start) are not the inspector's.
		if !strings.HasPrefix(l, "skillgate mcp: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 {
		t.Errorf("mcp-inspector --strict reported:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(out.String(), `"skill_list"`) {
		t.Errorf("tools/list: %s", out.String())
	}
}

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectorSkillsSession runs the Inspector session of docs/mcp.md
// ("The MCP Skills extension") verbatim: each `$ ` line is run with the
// MCP Inspector CLI against `skillgate mcp` (stdio) or `skillgate serve`
// (HTTP with a T1 bearer token), and every line shown under it must appear
// in its output. A --verify run must pass (exit 0); a command whose shown
// output is an error must fail.
func TestInspectorSkillsSession(t *testing.T) {
	insp := inspector(t)
	f := newFixture(t)
	secret := f.tokenSecret(t, "drafter", "T1", "acme")
	srv := f.serve(t)
	vars := map[string]string{"$DATA": f.data, "$URL": srv.url, "$TOKEN": secret}

	steps := docSession(t, filepath.Join("..", "docs", "mcp.md"), "<!-- e2e: skills-inspector -->")
	if len(steps) < 6 {
		t.Fatalf("docs/mcp.md: %d commands in the skills Inspector session", len(steps))
	}
	for _, st := range steps {
		args := splitCommand(st.cmd)
		if args[0] != "mcp-inspector" {
			t.Fatalf("docs/mcp.md: %q does not run mcp-inspector", st.cmd)
		}
		for i, a := range args {
			if a == "skillgate" {
				args[i] = bin
			}
			for k, v := range vars {
				args[i] = strings.ReplaceAll(args[i], k, v)
			}
		}
		cmd := exec.Command(insp, args[1:]...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		wantFail := strings.Contains(strings.Join(st.want, "\n"), `{"error"`)
		if (err != nil) != wantFail {
			t.Errorf("%s: exit %v, want failure %v\n%s", st.cmd, err, wantFail, out.String())
		}
		for _, w := range st.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q\n%s", st.cmd, w, out.String())
			}
		}
		if strings.Contains(st.cmd, "--verify") && strings.Contains(out.String(), `"ok":false`) {
			t.Errorf("%s: a skill failed verification\n%s", st.cmd, out.String())
		}
	}
}

type docStep struct {
	cmd  string
	want []string
}

// docSession reads the console block after marker in a Markdown file:
// commands ("$ " lines) and the output lines shown under each.
func docSession(t *testing.T, path, marker string) []docStep {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("%s: no %s", path, marker)
	}
	_, rest, _ = strings.Cut(rest, "```console\n")
	block, _, _ := strings.Cut(rest, "```")
	var steps []docStep
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if c, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, docStep{cmd: c})
		} else if len(steps) > 0 && strings.TrimSpace(line) != "" {
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, strings.TrimSpace(line))
		}
	}
	return steps
}

// splitCommand splits a shell command line on spaces, keeping "…" quoted
// words together (all the documented commands need).
func splitCommand(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case r == ' ' && !quoted:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}

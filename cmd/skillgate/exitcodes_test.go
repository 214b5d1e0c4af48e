package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallBlockedExits1 checks that an install whose analysis leaves it
// blocked prints its review and exits 1, as docs/cli.md says.
func TestInstallBlockedExits1(t *testing.T) {
	data := t.TempDir()
	src := filepath.Join(t.TempDir(), "bad")
	write(t, src, map[string]string{
		"SKILL.md": "---\nname: bad\ndescription: A skill whose server cannot start.\n---\nx\n",
		"mcp.json": `{"mcpServers": {"bad": {"command": "/nonexistent/server"}}}`,
	})
	code, out, errs := run(t, data, "install", "--unconfined", src)
	if code != 1 || errs != "" || !strings.HasPrefix(out, "bad  blocked  sha256:") ||
		!strings.Contains(out, "reason: blocked: server bad failed (start)") {
		t.Errorf("install: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = run(t, data, "recheck", "--unconfined", "bad")
	if code != 1 || errs != "" || !strings.HasPrefix(out, "bad  blocked  sha256:") {
		t.Errorf("recheck: %d\n%s\n%s", code, out, errs)
	}
	// Reviewing a blocked install is not a failure.
	if code, _, errs := run(t, data, "review", "bad"); code != 0 {
		t.Errorf("review: %d %s", code, errs)
	}
}

// TestDriftExitCodes checks that a folder that does not exist is a usage
// error (2), apart from drift found (1).
func TestDriftExitCodes(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"x/SKILL.md": "---\nname: x\ndescription: X.\n---\n"})
	missing := filepath.Join(b, "none")
	tests := []struct {
		name string
		args []string
		code int
		errs string
	}{
		{"in sync", []string{"drift", a, a}, 0, ""},
		{"drift", []string{"drift", a, b}, 1, ""},
		{"missing mirror", []string{"drift", a, missing}, 2,
			"Error: drift: " + missing + " does not exist; give two existing skill folders (see 'skillgate drift --help')\n"},
		{"missing canonical", []string{"drift", missing, a}, 2,
			"Error: drift: " + missing + " does not exist; give two existing skill folders (see 'skillgate drift --help')\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := run(t, t.TempDir(), tc.args...)
			if code != tc.code || errs != tc.errs {
				t.Errorf("%d %q; want %d %q", code, errs, tc.code, tc.errs)
			}
		})
	}
}

package main

import (
	"path/filepath"
	"testing"
)

// TestPrincipalFlagsRefused: every CLI flag or argument that names a
// principal goes through the one principal rule: control characters, DEL,
// bidirectional formatting characters and empty '/' segments are usage
// errors (exit 2) with Principal.Validate's message, and nothing is made.
func TestPrincipalFlagsRefused(t *testing.T) {
	data := t.TempDir()
	caps := filepath.Join(t.TempDir(), "caps.json")
	write(t, filepath.Dir(caps), map[string]string{"caps.json": cliCaps})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"token with a bidi override", []string{"token", "add", "--agent", "x\u202ey", "--tier", "T3", "--tenant", "acme"},
			`Error: invalid principal: agent id "x\u202ey" contains a bidirectional formatting character (U+202E)` + "\n"},
		{"token with an empty segment", []string{"token", "add", "--agent", "a//b", "--tier", "T3", "--tenant", "acme"},
			`Error: invalid principal: agent id "a//b" has an empty segment: no '/' at its start or end, nor two in a row` + "\n"},
		{"grant with NUL", []string{"grant", "add", "acme/x\x00y", "tools/fs:fs/delete_file", "--reason", "a reason"},
			`Error: invalid grant: principal: invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8` + "\n"},
		{"grant with ESC", []string{"grant", "add", "acme/x\x1b[2Jy", "tools/fs:fs/delete_file", "--reason", "a reason"},
			`Error: invalid grant: principal: invalid principal: agent id "x\x1b[2Jy" contains control characters or invalid UTF-8` + "\n"},
		{"policy test with DEL", []string{"policy", "test", "--principal", "acme/x\x7fy", "--capability", "tools/fs:fs/read_file", "--capabilities", caps},
			`Error: --principal: invalid principal: agent id "x\x7fy" contains control characters or invalid UTF-8` + "\n"},
		{"policy test with a leading slash", []string{"policy", "test", "--principal", "acme//x", "--capability", "tools/fs:fs/read_file", "--capabilities", caps},
			`Error: --principal: invalid principal: agent id "/x" has an empty segment: no '/' at its start or end, nor two in a row` + "\n"},
	} {
		code, out, errs := run(t, data, tc.args...)
		if code != 2 || out != "" || errs != tc.want {
			t.Errorf("%s: exit %d, stdout %q, stderr %q\n want exit 2, stderr %q", tc.name, code, out, errs, tc.want)
		}
	}
	if code, out, _ := run(t, data, "grant", "ls", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("grants after refusals: %d %q", code, out)
	}
	if code, out, _ := run(t, data, "token", "ls", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("tokens after refusals: %d %q", code, out)
	}
}

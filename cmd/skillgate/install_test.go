package main

import (
	"strings"
	"testing"
)

func TestInstallCommandsCLI(t *testing.T) {
	data := t.TempDir()
	for _, cmd := range []string{"install", "pending", "review", "complete", "approve", "reject", "remove", "recheck", "enable", "disable"} {
		code, out, _ := run(t, data, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Exit codes") || !strings.Contains(out, "--json") {
			t.Errorf("%s --help: %d\n%s", cmd, code, out)
		}
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"install"}, 2, "Error: install needs a SOURCE, or --locked FILE (see 'skillgate install --help')\n"},
		{[]string{"install", "/nonexistent/skill"}, 1, "Error: invalid install source: /nonexistent/skill: lstat /nonexistent/skill: no such file or directory\n"},
		{[]string{"review", "nothing"}, 1, "Error: no such install: \"nothing\"; run skillgate pending to see installs\n"},
		{[]string{"complete", "x", "s/t", "--risk", "read", "--why", "short"}, 2,
			"Error: invalid request: --why must explain the decision in at least 15 characters (got 5): it is kept in the install report and the audit log for whoever reviews this later\n"},
		{[]string{"complete", "x", "s/t", "--why", "a reason long enough"}, 2, "Error: invalid request: give at least one of --risk, --side-effects, --egress\n"},
		{[]string{"reject", "x", "--why", "no"}, 2, "Error: invalid request: --why must explain the decision in at least 15 characters (got 2)"},
		{[]string{"pending"}, 0, "nothing waits for review; install a skill with 'skillgate install PATH'\n"},
	}
	for _, tc := range tests {
		code, _, errs := run(t, data, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: %d %q; want %d %q", tc.args, code, errs, tc.code, tc.err)
		}
	}
	if code, out, _ := run(t, data, "pending", "--json"); code != 0 || out != "[]\n" {
		t.Errorf("pending --json: %d %q", code, out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOversizedSkillFileMessage: a SKILL.md over the 4 MiB bound is
// refused with its real size (as stat reports it) and the bound, by scan
// and by validate alike.
func TestOversizedSkillFileMessage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "big")
	os.MkdirAll(dir, 0o755)
	content := "---\nname: big\ndescription: Big.\n---\n" + strings.Repeat("a", 5_000_000)
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "SKILL.md is 5000036 bytes, over the 4194304-byte limit; move detail into files under references/"
	data := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args []string
		code int
		out  string // a line of stdout or stderr
	}{
		{[]string{"scan", "--root", root}, 0, "  - " + want},
		{[]string{"validate", dir}, 1, "  - " + want},
		{[]string{"validate", "--json", dir}, 1, `"message": "` + want + `"`},
	} {
		code, out, errs := run(t, data, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.out) {
			t.Errorf("%v: %d\n%s%s\nwant %d and the line %q", tc.args, code, out, errs, tc.code, tc.out)
		}
	}
}

// TestUsageMessages: a wrong number of arguments names the command's
// usage (one check for every command), a missing --tier says it is
// required, and counts agree with their nouns.
func TestUsageMessages(t *testing.T) {
	data := t.TempDir()
	root := t.TempDir()
	write(t, root, map[string]string{"one/SKILL.md": "---\nname: one\ndescription: The only skill.\n---\nBody.\n"})
	for _, tc := range []struct {
		args      []string
		code      int
		out, errs string
	}{
		{[]string{"scan", "--root", root}, 0, "1 skill (1 valid, 0 rejected)", ""},
		{[]string{"scan", "--root", root}, 0, "root " + root + " (project): 1 skill, 2 directories\n", ""},
		{[]string{"grant", "add", "acme/drafter"}, 2, "", "Error: skillgate grant add: expected PRINCIPAL CAPABILITY, got 1 argument; see 'skillgate grant add --help'\n"},
		{[]string{"review"}, 2, "", "Error: skillgate review: expected NAME, got 0 arguments; see 'skillgate review --help'\n"},
		{[]string{"complete", "x"}, 2, "", "Error: skillgate complete: expected NAME CAPABILITY, got 1 argument; see 'skillgate complete --help'\n"},
		{[]string{"version", "extra"}, 2, "", "Error: skillgate version: expected no arguments, got 1 argument; see 'skillgate version --help'\n"},
		{[]string{"audit", "tail", "x", "y"}, 2, "", "Error: skillgate audit tail: expected no arguments, got 2 arguments; see 'skillgate audit tail --help'\n"},
		{[]string{"token", "rm"}, 2, "", "Error: skillgate token rm: expected ID, got 0 arguments; see 'skillgate token rm --help'\n"},
		{[]string{"token", "add", "--agent", "a"}, 2, "", "Error: --tier is required (T0–T4)\n"},
		{[]string{"token", "add", "--agent", "a", "--tier", "T9"}, 2, "", "Error: --tier: unknown agent tier \"T9\": use one of T0, T1, T2, T3, T4\n"},
	} {
		code, out, errs := run(t, data, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || (tc.errs != "" || code == 0) && errs != tc.errs {
			t.Errorf("%v: %d\n%s%s\nwant %d, stdout holding %q, stderr %q", tc.args, code, out, errs, tc.code, tc.out, tc.errs)
		}
	}
}

// TestValidateJSONOneShape: validate --json writes every list as an array,
// at the top and inside skill: no null where a list may be empty.
func TestValidateJSONOneShape(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"one/SKILL.md": "---\nname: one\ndescription: A skill without problems.\n---\nBody.\n"})
	code, out, errs := run(t, t.TempDir(), "validate", "--json", filepath.Join(root, "one"))
	if code != 0 || strings.Contains(out, "null") || !strings.Contains(out, `"diagnostics": []`) || strings.Count(out, `"diagnostics": []`) != 2 {
		t.Errorf("validate --json: %d %s\n%s", code, errs, out)
	}
}

// TestOutsideTextRendered: text from a SKILL.md reaches the terminal
// without a control or bidi character, whichever command prints it:
// validate's diagnostics quoting the file, scan's rejection, ls, show.
func TestOutsideTextRendered(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{
		"bad/SKILL.md":  "---\nname: bad\x1b]0;pwned\x07\ndescription: x\x1b[2J\n---\nBody.\n",
		"good/SKILL.md": "---\nname: good\ndescription: \"Reads notes\\u202e\\u001b]52;c;eA==\\u0007 safely\"\n---\nBody.\n",
	})
	for _, args := range [][]string{
		{"validate", filepath.Join(root, "bad")},
		{"validate", "-r", root},
		{"scan", "--root", root},
		{"ls", "--all"},
		{"show", "good"},
		{"show", "good", "--json"},
	} {
		_, out, errs := run(t, data, args...)
		for _, s := range []string{out, errs} {
			if strings.ContainsAny(s, "\x1b\x07\u202e") {
				t.Errorf("%v printed a control or bidi character:\n%q", args, s)
			}
		}
	}
	if _, out, _ := run(t, data, "show", "good"); !strings.Contains(out, `description:  Reads notes\u202e\u001b]52;c;eA==\u0007 safely`) {
		t.Errorf("show good does not render the description:\n%s", out)
	}
}

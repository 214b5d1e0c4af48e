package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installedAt masks the install times in the candidates of an ambiguous
// name, so that the rest of the message is compared exactly.
var installedAt = regexp.MustCompile(`installed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// installVersion installs the skill tree files from a fresh directory and
// returns its digest reference (12 hex digits).
func installVersion(t *testing.T, data string, files map[string]string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "notes")
	write(t, src, files)
	_, out, errs := run(t, data, "install", "--unconfined", src)
	m := regexp.MustCompile(`^notes  \S+  sha256:([0-9a-f]{12})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("install %v: %s\n%s", files, out, errs)
	}
	return m[1]
}

// TestVersionsOfOneSkill holds two rules about several versions of one
// skill. The changes queue orders versions by when they were installed:
// an older blocked version never proposes to replace a newer enabled one,
// while a version installed (or installed again) after it does. And a
// bare NAME that matches several versions a command could act on is
// refused (exit 2) with the candidates, never resolved to one of them;
// NAME@DIGEST (a unique prefix) picks one.
func TestVersionsOfOneSkill(t *testing.T) {
	data := t.TempDir()
	blocked := map[string]string{
		"SKILL.md": "---\nname: notes\ndescription: Notes, first version.\n---\nx\n",
		"mcp.json": `{"mcpServers": {"bad": {"command": "/nonexistent/server"}}}`,
	}
	v1 := installVersion(t, data, blocked)
	v2 := installVersion(t, data, map[string]string{"SKILL.md": "---\nname: notes\ndescription: Notes, second version.\n---\ny\n"})

	ambiguous := func(verbs string, lines ...string) string {
		return "Error: ambiguous install name: notes has " + verbs + "; name one as notes@DIGEST:\n" + strings.Join(lines, "\n") + "\n"
	}
	steps := []struct {
		args       []string
		code       int
		out, err   string
		outPrefix  bool
		maskedTime bool
	}{
		// v1 blocked and v2 awaiting approval: approve could act on either.
		{args: []string{"approve", "notes"}, code: 2, maskedTime: true, err: ambiguous("2 versions this applies to",
			"  notes@"+v2+"  awaiting_approval  installed TIME", "  notes@"+v1+"  blocked  installed TIME")},
		{args: []string{"review", "notes"}, code: 2, maskedTime: true, err: ambiguous("2 versions this applies to",
			"  notes@"+v2+"  awaiting_approval  installed TIME", "  notes@"+v1+"  blocked  installed TIME")},
		{args: []string{"recheck", "--unconfined", "notes"}, code: 2, maskedTime: true, err: ambiguous("2 versions this applies to",
			"  notes@"+v2+"  awaiting_approval  installed TIME", "  notes@"+v1+"  blocked  installed TIME")},
		{args: []string{"approve", "notes@" + v2[:6]}, code: 0, out: "notes  installed  sha256:" + v2, outPrefix: true},
		// Only v2 is approved: enable has one version to act on.
		{args: []string{"enable", "notes"}, code: 0, out: "notes  enabled  sha256:" + v2, outPrefix: true},
		// The blocked v1 is older than the enabled v2: no update.
		{args: []string{"changes", "ls"}, code: 0, out: "No changes wait for a human.\n"},
		{args: []string{"remove", "notes"}, code: 2, maskedTime: true, err: ambiguous("2 versions this applies to",
			"  notes@"+v2+"  enabled  installed TIME", "  notes@"+v1+"  blocked  installed TIME")},
		{args: []string{"disable", "notes"}, code: 0, out: "notes  disabled  sha256:" + v2, outPrefix: true},
		{args: []string{"enable", "notes"}, code: 0, out: "notes  enabled  sha256:" + v2, outPrefix: true},
		{args: []string{"remove", "notes@" + v1}, code: 0, out: "notes  removed  sha256:" + v1, outPrefix: true},
	}
	for _, s := range steps {
		code, out, errs := run(t, data, s.args...)
		if s.maskedTime {
			errs = installedAt.ReplaceAllString(errs, "installed TIME")
		}
		gotOut := out
		if s.outPrefix && strings.HasPrefix(out, s.out) {
			gotOut = s.out
		}
		if code != s.code || gotOut != s.out || errs != s.err {
			t.Fatalf("%v: %d\n%s\n%s\nwant %d\n%s\n%s", s.args, code, out, errs, s.code, s.out, s.err)
		}
	}

	// v1 installed again after v2: now it is the newer version, an update
	// that would replace v2.
	if got := installVersion(t, data, blocked); got != v1 {
		t.Fatalf("reinstalled v1 is %s, want %s", got, v1)
	}
	v3 := installVersion(t, data, map[string]string{
		"SKILL.md": "---\nname: notes\ndescription: Notes, third version.\n---\nz\n",
		"mcp.json": `{"mcpServers": {"bad": {"command": "/nonexistent/server3"}}}`,
	})
	want := "ID" + strings.Repeat(" ", len("update:notes@"+v3)) + "KIND    STATE    SUMMARY\n" +
		"update:notes@" + v3 + "  update  pending  notes: new version " + v3 + " awaiting re-consent (blocked); replaces " + v2 + "\n" +
		"update:notes@" + v1 + "  update  pending  notes: new version " + v1 + " awaiting re-consent (blocked); replaces " + v2 + "\n"
	if code, out, errs := run(t, data, "changes", "ls"); code != 0 || out != want {
		t.Fatalf("changes ls: %d\n%s\n%s\nwant\n%s", code, out, errs, want)
	}
	// An unknown digest is not found.
	if code, _, errs := run(t, data, "review", "notes@ffffffffffff0"); code != 1 || errs != "Error: no such install: notes has no version ffffffffffff0\n" {
		t.Errorf("review notes@ffff…: %d %s", code, errs)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallFromGitCLI: install takes a git repository at a ref and a
// path, and review shows where the version came from.
func TestInstallFromGitCLI(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "repo")
	write(t, repo, map[string]string{"skills/notes/SKILL.md": "---\nname: notes\ndescription: Takes notes.\n---\n\n# Notes\n"})
	git := gitIn(t, repo)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "notes")
	commit := git("rev-parse", "HEAD")
	data := t.TempDir()
	code, out, errs := run(t, data, "install", "file://"+repo, "--ref", "main", "--path", "skills/notes")
	if code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	want := "source: git file://" + repo + " ref main commit " + commit + " path skills/notes, fetched "
	if !strings.Contains(out, want) {
		t.Fatalf("install output lacks %q:\n%s", want, out)
	}
	code, out, _ = run(t, data, "review", "notes")
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("review: %d\n%s", code, out)
	}
	run(t, data, "approve", "notes")
	run(t, data, "enable", "notes")
	if code, out, _ := run(t, data, "show", "notes"); code != 0 || !strings.Contains(out, "installed from: git file://"+repo+" ref main commit "+commit+" path skills/notes, fetched ") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	code, _, errs = run(t, data, "install", "https://example.com/notes.tar.gz")
	if code != 1 || !strings.Contains(errs, "an archive URL needs --sha256 HEX") {
		t.Fatalf("archive URL without --sha256: %d %q", code, errs)
	}
}

// gitIn returns a function running git in repo, with no user or system
// configuration and a fixed author; it skips the test without git.
func gitIn(t *testing.T, repo string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
}

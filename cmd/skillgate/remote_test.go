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

// TestInstallSourceOfSeveralSkills: a repository or a directory without
// SKILL.md at its root but with skills further down is refused with the
// skills it holds and the command that installs each (--path for git, the
// directory for a local one); a repository with SKILL.md at its root
// installs without --path.
func TestInstallSourceOfSeveralSkills(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "repo")
	write(t, repo, map[string]string{
		"notes/SKILL.md":        "---\nname: notes\ndescription: Takes notes.\n---\n",
		"tools/files/SKILL.md":  "---\nname: files\ndescription: Files.\n---\n",
		"tools/search/SKILL.md": "---\nname: search\ndescription: Search.\n---\n",
		"README.md":             "Three skills.\n",
	})
	git := gitIn(t, repo)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "two skills")
	data := t.TempDir()
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"git", []string{"install", "file://" + repo}, "Error: invalid skill: file://" + repo + " has no SKILL.md at its root; it holds 3 skills; install one with --path:\n" +
			"  skillgate install --path notes file://" + repo + "\n" +
			"  skillgate install --path tools/files file://" + repo + "\n" +
			"  skillgate install --path tools/search file://" + repo + "\n"},
		{"git with ref and path", []string{"install", "file://" + repo, "--ref", "main", "--path", "tools"}, "Error: invalid skill: file://" + repo + " --path tools has no SKILL.md at its root; it holds 2 skills; install one with --path:\n" +
			"  skillgate install --ref main --path tools/files file://" + repo + "\n" +
			"  skillgate install --ref main --path tools/search file://" + repo + "\n"},
		{"directory", []string{"install", repo}, "Error: invalid skill: " + repo + " has no SKILL.md at its root; it holds 3 skills; install one by its directory:\n" +
			"  skillgate install " + filepath.Join(repo, "notes") + "\n" +
			"  skillgate install " + filepath.Join(repo, "tools", "files") + "\n" +
			"  skillgate install " + filepath.Join(repo, "tools", "search") + "\n"},
	}
	for _, tc := range tests {
		if code, out, errs := run(t, data, tc.args...); code != 1 || out != "" || errs != tc.err {
			t.Errorf("%s: %d %q\n got %s\nwant %s", tc.name, code, out, errs, tc.err)
		}
	}
	// The command the error shows installs the skill.
	if code, out, errs := run(t, data, "install", "--path", "notes", "file://"+repo); code != 0 || !strings.HasPrefix(out, "notes  awaiting_approval  sha256:") {
		t.Errorf("install --path notes: %d %s %s", code, out, errs)
	}
	// A repository whose root is a skill installs without --path.
	write(t, repo, map[string]string{"SKILL.md": "---\nname: repo\ndescription: The root skill.\n---\n"})
	git("add", "-A")
	git("commit", "-q", "-m", "a root skill")
	if code, out, errs := run(t, data, "install", "file://"+repo); code != 0 || !strings.HasPrefix(out, "repo  awaiting_approval  sha256:") {
		t.Errorf("install of a root skill: %d %s %s", code, out, errs)
	}
}

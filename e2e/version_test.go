package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionNamesTheCommit follows the README's "Get the binary" in a
// clone of this repository (git clone, then go install ./cmd/skillgate)
// and checks that the binary's version names the commit it was built
// from, from the build's VCS information.
func TestVersionNamesTheCommit(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	clone, gobin := filepath.Join(t.TempDir(), "skillgate"), t.TempDir()
	// The environment may turn VCS stamping off (GOFLAGS=-buildvcs=false);
	// the README's line runs with the go command's default. -trimpath
	// keeps the compiled packages independent of the clone's temporary
	// path, so that the next run finds them in the build cache.
	env := append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-trimpath")
	for _, step := range [][]string{
		{"git", "clone", "--quiet", repo, clone},
		{"go", "install", "./cmd/skillgate"},
	} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir, cmd.Env = clone, env
		if step[0] == "git" {
			cmd.Dir = repo
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))
	bin := filepath.Join(gobin, "skillgate")
	out, err := exec.Command(bin, "version").Output()
	if want := "skillgate devel-" + commit[:12] + " (commit " + commit + " of "; err != nil || !strings.HasPrefix(string(out), want) {
		t.Errorf("version: %v\n%s\nwant it to start with %q", err, out, want)
	}
	out, err = exec.Command(bin, "version", "--json").Output()
	var v struct{ Version, Commit string }
	if err != nil || json.Unmarshal(out, &v) != nil || v.Commit != commit || v.Version != "devel-"+commit[:12] {
		t.Errorf("version --json: %v\n%s", err, out)
	}
}

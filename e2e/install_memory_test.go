//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInstallGitHugeFileMemory is issue 28's item 12: a git source holding
// one 1.5 GiB file is refused for exceeding the 256 MiB bound, and the
// install's peak resident set (skillgate and the git processes it
// waits for) stays within that bound plus a small constant: git
// archive's tar is read as it streams, the oversized entry refused from
// its header.
func TestInstallGitHugeFileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1.5 GiB file")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(t.TempDir(), "skills")
	dir := filepath.Join(repo, "huge")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: huge\ndescription: Holds one huge file.\n---\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file of zeros: 1.5 GiB to git, little to the disk.
	big, err := os.Create(filepath.Join(dir, "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(3 << 29); err != nil {
		t.Fatal(err)
	}
	big.Close()
	git("add", ".")
	git("commit", "-q", "-m", "huge")
	os.Remove(filepath.Join(dir, "data.bin"))

	f := emptyFixture(t)
	cmd := exec.Command(bin, "--data", f.data, "install", "git+file://"+repo, "--path", "huge")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() == 0 {
		t.Fatalf("install of a 1.5 GiB file: %v\n%s", err, out)
	}
	const want = "files larger than 268435456 bytes in total"
	if !strings.Contains(string(out), want) {
		t.Errorf("install output lacks %q:\n%s", want, out)
	}
	// Maxrss is in KiB on Linux.
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	const bound, slack = 256 << 20, 64 << 20
	t.Logf("peak RSS %d MiB", peak>>20)
	if peak > bound+slack {
		t.Errorf("peak RSS %d MiB, more than the bound (%d MiB) plus %d MiB", peak>>20, bound>>20, slack>>20)
	}
}

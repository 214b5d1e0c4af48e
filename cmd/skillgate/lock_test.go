package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/lockfile"
)

// TestLockVerifyInstallLocked: lock what is enabled (a scanned skill and
// an imported one from git), verify it, see a change as a difference,
// reproduce the install on a fresh data directory, and refuse a moved ref
// and a digest that differs.
func TestLockVerifyInstallLocked(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	write(t, repo, map[string]string{"skills/notes/SKILL.md": "---\nname: notes\ndescription: Takes notes.\n---\n\n# Notes\n"})
	git := gitIn(t, repo)
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "notes")
	commit := git("rev-parse", "HEAD")
	root := filepath.Join(work, "skills")
	write(t, root, map[string]string{"ops/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys.\n---\n"})

	data := t.TempDir()
	mustRun := func(data string, args ...string) string {
		t.Helper()
		code, out, errs := run(t, data, args...)
		if code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, out, errs)
		}
		return out
	}
	mustRun(data, "scan", "--root", root)
	mustRun(data, "install", "file://"+repo, "--ref", "main", "--path", "skills/notes")
	mustRun(data, "approve", "notes")
	mustRun(data, "enable", "notes")
	lockPath := filepath.Join(work, "skillgate.lock")
	if out := mustRun(data, "lock", "--out", lockPath); out != "locked 2 skills in "+lockPath+"\n" {
		t.Fatalf("lock: %q", out)
	}
	b, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Skills) != 2 || l.Skills[0].Key != "notes" || l.Skills[0].Origin != "install" || l.Skills[0].Commit != commit ||
		l.Skills[0].Ref != "main" || l.Skills[0].Path != "skills/notes" || l.Skills[0].Source != "file://"+repo ||
		l.Skills[1].Key != "ops/deploy" || l.Skills[1].Origin != "root" || l.Skills[1].Source != root {
		t.Fatalf("lock:\n%s", b)
	}
	if out := mustRun(data, "verify", "--lock", lockPath); out != "2 skills match "+lockPath+"\n" {
		t.Fatalf("verify: %q", out)
	}
	// A change under a root is a difference.
	write(t, root, map[string]string{"ops/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys, changed.\n---\n"})
	code, out, errs := run(t, data, "verify", "--lock", lockPath, "--json")
	var v struct {
		Match       bool
		Differences []lockfile.Difference
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 1 || v.Match || len(v.Differences) != 1 || v.Differences[0].Field != "digest" || v.Differences[0].Key != "ops/deploy" {
		t.Fatalf("verify after a change: %d %s %s", code, out, errs)
	}

	// The lock's installs are reproduced on a fresh data directory.
	fresh := t.TempDir()
	if out := mustRun(fresh, "install", "--locked", lockPath); out != "notes "+l.Skills[0].Digest+": awaiting_approval\n" {
		t.Fatalf("install --locked: %q", out)
	}
	// A ref that moved is refused.
	write(t, repo, map[string]string{"skills/notes/SKILL.md": "---\nname: notes\ndescription: Takes notes, differently.\n---\n"})
	git("commit", "-q", "-am", "change")
	code, _, errs = run(t, t.TempDir(), "install", "--locked", lockPath)
	if code != 1 || !strings.Contains(errs, "notes: differs from the lock: file://"+repo+": ref main moved: the lock has commit "+commit+", the repository now has ") {
		t.Fatalf("install --locked after the ref moved: %d %q", code, errs)
	}
	// A digest that differs from the lock is refused.
	l.Skills[0].Ref, l.Skills[0].Commit = commit, ""
	l.Skills[0].Digest = "sha256:" + strings.Repeat("0", 64)
	tampered, _ := l.Marshal()
	os.WriteFile(lockPath, tampered, 0o644)
	code, _, errs = run(t, t.TempDir(), "install", "--locked", lockPath)
	if code != 1 || !strings.Contains(errs, "the lock has sha256:"+strings.Repeat("0", 64)+"; nothing was installed") {
		t.Fatalf("install --locked with another digest: %d %q", code, errs)
	}
	if code, _, errs := run(t, fresh, "install", "x", "--locked", lockPath); code != 2 || !strings.Contains(errs, "--locked takes its sources from the lock file") {
		t.Fatalf("install SOURCE --locked: %d %q", code, errs)
	}
}

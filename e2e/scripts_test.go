package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestScriptsWaitForTheAptLock: a test run started while another process
// holds apt's locks waits for them, bounded, instead of failing at once.
// Every apt-get that updates or installs, in scripts/ and .ci/, is in
// scripts/apt-install.sh and carries DPkg::Lock::Timeout (which bounds the
// wait for the dpkg lock), and apt-install.sh retries apt-get update while
// the package lists' lock is held (apt-get does not wait for that one).
func TestScriptsWaitForTheAptLock(t *testing.T) {
	var files []string
	for _, dir := range []string{"../scripts", "../.ci"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	call := regexp.MustCompile(`(^|[\s;&|(])apt-get\s`)
	calls := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "#") || strings.HasPrefix(code, "echo ") || !call.MatchString(code) {
				continue
			}
			calls++
			if filepath.Base(f) != "apt-install.sh" {
				t.Errorf("%s:%d: apt-get outside scripts/apt-install.sh: %s", f, i+1, code)
			}
			if !strings.Contains(code, `-o DPkg::Lock::Timeout="$timeout"`) {
				t.Errorf("%s:%d: apt-get without -o DPkg::Lock::Timeout: %s", f, i+1, code)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d apt-get calls in scripts/ and .ci/, want 2 (update and install in apt-install.sh)", calls)
	}
	b, err := os.ReadFile("../scripts/apt-install.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`timeout=${SKILLGATE_APT_LOCK_TIMEOUT:-300}`, `grep -q "Could not get lock"`, `((SECONDS >= deadline))`,
		`log "waiting for another package manager to release the package lists' lock (/var/lib/apt/lists/lock), up to ${timeout}s`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("scripts/apt-install.sh does not hold %s", want)
		}
	}
	for _, f := range []string{"../scripts/test.sh", "../scripts/setup-postgres.sh"} {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), "apt-install.sh") {
			t.Errorf("%s does not install through scripts/apt-install.sh", f)
		}
	}
}

package e2e

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// initBytes runs the binary with args under GODEBUG=inittrace=1 and returns
// the bytes each package's initialisation allocated, by import path.
func initBytes(t *testing.T, args ...string) map[string]int {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("skillgate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	// init PKG @T ms, C ms clock, B bytes, A allocs
	out := map[string]int{}
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		out[f[1]] += n
	}
	if len(out) == 0 {
		t.Fatalf("no inittrace lines in:\n%s", stderr.String())
	}
	return out
}

// TestInitAllocations holds the packages whose tables are built at first
// use (the content scanner's rules and code patterns, the skill model's
// category and version grammars) to that: every command, a rescan and
// --help included, starts without paying for them. Allocations, not time,
// so that the test does not depend on the machine's load.
func TestInitAllocations(t *testing.T) {
	got := initBytes(t, "--help")
	const limit = 32 << 10
	for _, pkg := range []string{
		"github.com/skillgate/skillgate/internal/admission/secscan",
		"github.com/skillgate/skillgate/internal/admission/secscan/codescan",
		"github.com/skillgate/skillgate/internal/model/skill",
	} {
		n, ok := got[pkg]
		if !ok {
			t.Errorf("%s: no inittrace line (not linked any more? update the test)", pkg)
			continue
		}
		if n > limit {
			t.Errorf("%s: initialisation allocates %d bytes, want at most %d: build its tables at first use (sync.OnceValue)", pkg, n, limit)
		}
	}
}

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// TestScanAtBoot checks that `skillgate mcp` and `skillgate serve` scan
// their roots at start when the registry is empty or older than them: an
// empty data directory with roots in its configuration lists the skills
// without a `skillgate scan`, --no-scan serves the registry as it is, and
// a skill added since the last scan is served after a restart (on a store
// replicas share, after the operator's scan).
func TestScanAtBoot(t *testing.T) {
	f := emptyFixture(t)
	root := filepath.Join(t.TempDir(), "skills")
	mcpservertest.CopyTree(t, examples, root)
	f.writeConfig(t, "roots:\n  - path: "+root+"\n")
	// Past the racy window: a walk records a root's stamp only when
	// nothing in it changed within 100 ms of the walk, so a scan right after
	// the copy would leave the next start a reason to scan again.
	time.Sleep(150 * time.Millisecond)
	list := func(cs *mcp.ClientSession) string {
		t.Helper()
		got, isErr := caller(cs)(t, "skill_list", map[string]any{})
		if isErr {
			t.Fatalf("skill_list: %s", got)
		}
		return got
	}
	data := f.data
	connect := func(extra ...string) (*mcp.ClientSession, *syncbuf.Buffer) {
		t.Helper()
		var stderr syncbuf.Buffer
		cmd := exec.Command(bin, append([]string{"--data", data, "mcp", "--agent", "drafter", "--tier", "T3"}, extra...)...)
		cmd.Stderr = &stderr
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs, &stderr
	}

	cs, stderr := connect()
	got := list(cs)
	for _, name := range []string{"compraventa", "pdf-forms"} {
		if !strings.Contains(got, name) {
			t.Errorf("mcp on an empty registry: skill_list lacks %s:\n%s", name, got)
		}
	}
	cs.Close()
	if want := "skillgate mcp: scanned at start (the registry is empty): "; !strings.Contains(stderr.String(), want) {
		t.Errorf("mcp stderr %q lacks %q", stderr.String(), want)
	}
	// The registry is now current: the next start scans nothing.
	cs, stderr = connect()
	if again := list(cs); again != got {
		t.Errorf("second start: skill_list = %q, want %q", again, got)
	}
	cs.Close()
	if strings.Contains(stderr.String(), "scanned at start") {
		t.Errorf("second start scanned a current registry: %q", stderr.String())
	}

	// A skill added while nothing runs is served by the next serve.
	if err := os.Mkdir(filepath.Join(root, "nuevo"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "nuevo", "SKILL.md"), "---\nname: nuevo\ndescription: A skill added after the last scan.\n---\nBody.\n")
	var lines syncbuf.Buffer
	startServe(t, []string{"--data", f.data, "serve", "--addr", "127.0.0.1:0"}, func(l string) { lines.Write([]byte(l + "\n")) })
	changed := "root " + root + " changed since it was scanned"
	if f.dsn != "" {
		// A store replicas share is scanned at start only when empty:
		// which replica holds the roots is the operator's to say.
		if want := "skillgate serve: no scan at start: the store is shared by replicas, and its registry is not empty (" + changed + ")"; !strings.Contains(lines.String(), want) {
			t.Errorf("serve stderr %q lacks %q", lines.String(), want)
		}
		cs, _ = connect("--no-scan")
		if got := list(cs); strings.Contains(got, "nuevo") {
			t.Errorf("a replica scanned a shared store at start: skill_list has nuevo:\n%s", got)
		}
		cs.Close()
		f.run(t, "scan")
	} else if want := "skillgate serve: scanned at start (" + changed + "): "; !strings.Contains(lines.String(), want) {
		t.Errorf("serve stderr %q lacks %q", lines.String(), want)
	}
	cs, _ = connect("--no-scan")
	if got := list(cs); !strings.Contains(got, "nuevo") {
		t.Errorf("after serve's scan at start: skill_list lacks nuevo:\n%s", got)
	}
	cs.Close()

	// --no-scan serves an empty registry as it is.
	g := emptyFixture(t)
	g.writeConfig(t, "roots:\n  - path: "+root+"\n")
	data = g.data
	cs, _ = connect("--no-scan")
	if got := list(cs); got != "No skills match." {
		t.Errorf("--no-scan on an empty registry: skill_list = %q, want no skills", got)
	}
}

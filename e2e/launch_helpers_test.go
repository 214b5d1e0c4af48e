package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// writeTree writes files (path → content) under dir, directories made.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// needLaunchTools skips t when npm, node or bubblewrap is missing.
func needLaunchTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range append([]string{"bwrap"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}

// readPolicy lets every agent call read-only capabilities.
func (f *fixture) readPolicy(t *testing.T) {
	t.Helper()
	writeTree(t, filepath.Join(f.data, "policies"), map[string]string{"read.cedar": `@id("read-anything")
permit (principal, action == Action::"invoke", resource) when { resource.riskLevel == "read" };
`})
}

// launchReviewJSON is what the tests read of `review --json`.
type launchReviewJSON struct {
	State      string
	Digest     string
	Provenance struct {
		Digest   string
		Version  string
		Packages []struct {
			Server, Launcher, Ecosystem, Name, Requested, Version, Integrity, Registry, Bin, Interpreter, Tree string
			Dependencies                                                                                       []struct{ Name, Version, Integrity string }
		}
	}
	Servers []struct {
		ServerID string
		Grants   []struct{ Path, Access, From string }
		Error    *struct{ Phase, Message string }
	}
	Previous *struct {
		PackagesChanged []struct {
			Server, Name, From, To  string
			Added, Removed, Changed []string
		}
	}
}

func (f *fixture) launchReview(t *testing.T, name string) launchReviewJSON {
	t.Helper()
	code, out, stderr := f.runCode(t, nil, "review", name, "--json")
	if code != 0 {
		t.Fatalf("review %s: %d\n%s", name, code, stderr)
	}
	var r launchReviewJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("review %s: %v\n%s", name, err, out)
	}
	return r
}

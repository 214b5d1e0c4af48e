package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadedVersionKeptE2E is issue 32's item 9 through the binary: an
// agent over stdio loads a skill, its author edits a file in place, and
// the agent still reads the version it loaded; a second agent that loads
// it before the next scan gets that version too (today: refused, "changed
// since it was scanned"); after 'skillgate scan' a new load reads the edit.
func TestLoadedVersionKeptE2E(t *testing.T) {
	f := newFixture(t)
	ejemplo := filepath.Join(f.root, "escrituras", "compraventa", "resources", "ejemplo.md")
	before, err := os.ReadFile(ejemplo)
	if err != nil {
		t.Fatal(err)
	}
	firstLine := strings.SplitN(string(before), "\n", 2)[0]
	read := func(call func(testing.TB, string, map[string]any) (string, bool)) string {
		t.Helper()
		got, isErr := call(t, "read_file", map[string]any{"file_path": "/skills/compraventa/resources/ejemplo.md"})
		if isErr {
			t.Fatalf("read_file: %q", got)
		}
		return got
	}
	load := func(call func(testing.TB, string, map[string]any) (string, bool)) {
		t.Helper()
		if got, isErr := call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"}); isErr {
			t.Fatalf("load_skill: %q", got)
		}
	}
	first := caller(f.stdio(t, ""))
	load(first)
	if err := os.WriteFile(ejemplo, []byte("Edited in place by its author.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(first); !strings.Contains(got, firstLine) || strings.Contains(got, "Edited") {
		t.Fatalf("the loading agent reads %q after the edit, want the version it loaded", got)
	}
	// Another agent before the next scan (--no-scan: mcp would otherwise
	// scan the changed root at start) loads the scanned version.
	second := caller(f.stdioWith(t, "--no-scan"))
	load(second)
	if got := read(second); !strings.Contains(got, firstLine) {
		t.Fatalf("a load before the next scan reads %q, want the scanned version", got)
	}
	f.run(t, "scan", "--root", f.root)
	third := caller(f.stdio(t, ""))
	load(third)
	if got := read(third); !strings.Contains(got, "Edited in place by its author.") {
		t.Fatalf("a load after the scan reads %q, want the edit", got)
	}
}

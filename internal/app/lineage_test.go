package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScannerReferences: scanner.references is validated (a git source is
// refused for now, a name twice too), and its skills become references of
// the index saved in the data directory, incrementally: a second open
// changes nothing, a skill removed from the root leaves the index.
func TestScannerReferences(t *testing.T) {
	data := t.TempDir()
	refs := filepath.Join(t.TempDir(), "collection")
	for _, n := range []string{"a", "group/b"} {
		dir := filepath.Join(refs, n)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+filepath.Base(n)+"\ndescription: d\n---\nDo things with "+n+".\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(cfg string) {
		if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := New(Options{Data: data})
	write("scanner:\n  references:\n    - path: https://github.com/acme/skills.git\n    - path: " + refs + "\n      name: x\n    - path: /elsewhere/x\n")
	_, err := a.Config()
	if err == nil || !strings.Contains(err.Error(), "scanner.references[0].path") || !strings.Contains(err.Error(), "git sources are not supported yet") ||
		!strings.Contains(err.Error(), `scanner.references[2]: name "x" is used twice`) {
		t.Fatalf("config: %v", err)
	}
	write("scanner:\n  references:\n    - path: " + refs + "\n      trusted: false\n")
	cfg, err := a.Config()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "lineage.idx")
	ix, err := a.lineageIndex(t.Context(), cfg, file)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"collection:a", "collection:group/b"}; !slices.Equal(ix.Names(), want) {
		t.Fatalf("references %v, want %v", ix.Names(), want)
	}
	if r, _ := ix.Reference("collection:a"); r.Trusted || r.Origin != "reference root" {
		t.Fatalf("reference %+v", r)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(refs, "group")); err != nil {
		t.Fatal(err)
	}
	// An unchanged tree is not read again: its stamp (discover's
	// fingerprint) is the indexed one.
	if r, _ := ix.Reference("collection:a"); r.Stamp == "" {
		t.Fatalf("reference without a stamp: %+v", r)
	}
	ix, err = a.lineageIndex(t.Context(), cfg, file)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"collection:a"}; !slices.Equal(ix.Names(), want) {
		t.Fatalf("after removal: %v", ix.Names())
	}
	st2, err := os.Stat(file)
	if err != nil || st2.ModTime().Before(st.ModTime()) {
		t.Fatalf("index not saved again: %v", err)
	}
}

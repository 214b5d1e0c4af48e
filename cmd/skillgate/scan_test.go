package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"
)

// TestScanReportsForgottenRoots checks that a scan with a different set of
// roots says how many skills left the registry and from which root, in
// text and JSON.
func TestScanReportsForgottenRoots(t *testing.T) {
	data := t.TempDir()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	write(t, a, map[string]string{"one/SKILL.md": "---\nname: one\ndescription: One.\n---\n", "two/SKILL.md": "---\nname: two\ndescription: Two.\n---\n"})
	write(t, b, map[string]string{"three/SKILL.md": "---\nname: three\ndescription: Three.\n---\n"})
	if code, _, errs := run(t, data, "scan", "--root", a); code != 0 {
		t.Fatalf("scan a: %s", errs)
	}
	code, out, errs := run(t, data, "scan", "--root", b)
	ms := regexp.MustCompile(`in [0-9.]+ ms`)
	want := "1 skill (1 valid, 0 rejected) in X ms: 1 parsed, 0 unchanged, 2 removed\n" +
		"root " + b + " (project): 1 skill, 2 directories\n" +
		"removed: 2 skills of root " + a + " (project), which this scan did not include; scan it again (--root " + a + ", or the roots of the configuration) to bring them back\n"
	if got := ms.ReplaceAllString(out, "in X ms"); code != 0 || got != want {
		t.Errorf("scan b: %d %s\n got %q\nwant %q", code, errs, got, want)
	}
	code, out, _ = run(t, data, "scan", "--root", a, "--json")
	var rep struct {
		Removed   int `json:"removed"`
		Forgotten []struct {
			Path, Scope string
			Skills      int
		} `json:"forgotten"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Removed != 1 || len(rep.Forgotten) != 1 ||
		rep.Forgotten[0].Path != b || rep.Forgotten[0].Scope != "project" || rep.Forgotten[0].Skills != 1 {
		t.Errorf("scan a --json: %d %v %+v", code, err, rep)
	}
}

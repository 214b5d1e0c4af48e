package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOversizedSkillFileMessage: a SKILL.md over the 4 MiB bound is
// refused with its real size (as stat reports it) and the bound, by scan
// and by validate alike.
func TestOversizedSkillFileMessage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "big")
	os.MkdirAll(dir, 0o755)
	content := "---\nname: big\ndescription: Big.\n---\n" + strings.Repeat("a", 5_000_000)
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "SKILL.md is 5000036 bytes, over the 4194304-byte limit; move detail into files under references/"
	data := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args []string
		code int
		out  string // a line of stdout or stderr
	}{
		{[]string{"scan", "--root", root}, 0, "  - " + want},
		{[]string{"validate", dir}, 1, "  - " + want},
		{[]string{"validate", "--json", dir}, 1, `"message": "` + want + `"`},
	} {
		code, out, errs := run(t, data, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.out) {
			t.Errorf("%v: %d\n%s%s\nwant %d and the line %q", tc.args, code, out, errs, tc.code, tc.out)
		}
	}
}

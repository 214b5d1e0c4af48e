package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestManPages: 'skillgate man --dir D' writes one page per command,
// dated at $SOURCE_DATE_EPOCH, each with the command's name, synopsis,
// help and flags, and groff reads every page without a warning.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man")
	var out, errb bytes.Buffer
	env := map[string]string{"SKILLGATE_DATA": filepath.Join(t.TempDir(), "none"), "SOURCE_DATE_EPOCH": "1767225600"}
	m := &Main{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	if code := m.Run(context.Background(), []string{"man", "--dir", dir}); code != 0 {
		t.Fatalf("man: %d %s", code, errb.String())
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "wrote " + strconv.Itoa(len(pages)) + " man pages in " + dir + "\n"; out.String() != want || errb.String() != "" || len(pages) < 70 {
		t.Fatalf("%d pages; out %q err %q", len(pages), out.String(), errb.String())
	}
	for _, name := range []string{"skillgate.1", "skillgate-init.1", "skillgate-add.1", "skillgate-config-check.1", "skillgate-token-rm.1", "skillgate-man.1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no page %s: %v", name, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "skillgate-init.1"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		".nh\n.TH \"SKILLGATE\" \"1\" \"Jan 2026\" \"skillgate " + version + "\" \"skillgate manual\"\n",
		".SH NAME\nskillgate-init - Create a new skill folder with a valid SKILL.md (and an example mcp.json)\n",
		".SH SYNOPSIS\n\\fBskillgate init NAME [--dir D] [--description TEXT] [--mcp] [--json] [flags]\\fP\n",
		"\\fB--mcp\\fP[=false]\n\talso write an example mcp.json declaring an MCP server\n",
		".SH SEE ALSO\n\\fBskillgate(1)\\fP\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("skillgate-init.1 lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Auto generated") {
		t.Errorf("skillgate-init.1 carries cobra's generated-by line:\n%s", page)
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "none")); !os.IsNotExist(err) {
		t.Errorf("man made a data directory: %v", err)
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the pages' syntax is not checked")
	}
	// -k: the pages are UTF-8 (…, –), read through preconv as man does.
	cmd := exec.Command(groff, append([]string{"-man", "-k", "-Tutf8", "-ww", "-z"}, pages...)...)
	if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
		t.Errorf("groff: %v\n%s", err, msg)
	}
}

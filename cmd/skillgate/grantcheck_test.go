package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shipTools scans into data a signed first_party skill tools/fs whose
// shipped manifest offers fs/delete_file and fs/read_file (sorted, as a manifest must be): installed
// capabilities a grant can name, without starting a server.
func shipTools(t *testing.T, data string) {
	t.Helper()
	root := t.TempDir()
	risk := func(level, effects string) string {
		return `"risk":{"riskLevel":{"value":"` + level + `","source":"operator"},"sideEffects":{"value":"` + effects + `","source":"operator"},"dataEgress":{"value":"none","source":"operator"}}`
	}
	write(t, root, map[string]string{
		"tools/fs/SKILL.md": "---\nname: fs\ndescription: Files.\n---\nx\n",
		"tools/fs/mcp.json": `{"mcpServers":{"fs":{"command":"fs-mcp"}}}`,
		"tools/fs/manifest.json": `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"tools/fs","version":"sha256:00",` +
			`"providers":[{"type":"mcp","serverId":"fs"}],"capabilities":[` +
			`{"extensionId":"fs","capabilityId":"delete_file","description":"Delete a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},` + risk("destructive", "internal") + `},` +
			`{"extensionId":"fs","capabilityId":"read_file","description":"Read a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},` + risk("read", "none") + `}]}`,
	})
	signing := trustedKey(t, data)
	signSkill(t, data, filepath.Join(root, "tools", "fs"))
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("roots:\n  - path: "+root+"\n    trust: first_party\n"+signing), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, data, "scan"); code != 0 {
		t.Fatalf("scan: %s %s", out, errs)
	}
}

// TestGrantNeedsAnOfferedCapability: a grant whose capability no installed
// skill offers is refused (exit 2) with the closest capabilities offered,
// instead of being listed as an active grant no call can use.
func TestGrantNeedsAnOfferedCapability(t *testing.T) {
	empty := t.TempDir()
	if code, _, errs := run(t, empty, "scan", "--root", t.TempDir()); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, empty, "grant", "add", "acme/drafter", "nosuch:zz/yy"); code != 2 ||
		errs != "Error: invalid grant: capability nosuch:zz/yy: no installed skill offers it; no installed skill offers any capability yet: install and approve one first (skillgate install)\n" {
		t.Errorf("no skills: %d %q", code, errs)
	}
	data := t.TempDir()
	shipTools(t, data)
	tests := []struct {
		capability string
		code       int
		err        string
	}{
		{"nosuch:zz/yy", 2, "Error: invalid grant: capability nosuch:zz/yy: no installed skill offers it; did you mean tools/fs:fs/read_file, tools/fs:fs/delete_file? (skillgate review SKILL lists what a skill offers)\n"},
		{"tools/fs:fs/delete_fiel", 2, "Error: invalid grant: capability tools/fs:fs/delete_fiel: no installed skill offers it; did you mean tools/fs:fs/delete_file, tools/fs:fs/read_file? (skillgate review SKILL lists what a skill offers)\n"},
		{"tools/fs:web/*", 2, "Error: invalid grant: capability tools/fs:web/*: no installed skill offers it; did you mean tools/fs:fs/read_file, tools/fs:fs/delete_file? (skillgate review SKILL lists what a skill offers)\n"},
		{"tools/fs:fs/delete_file", 0, ""},
		{"tools/fs:fs/*", 0, ""},
		{"*:fs/read_file", 0, ""},
		{"*", 0, ""},
	}
	for _, tc := range tests {
		code, _, errs := run(t, data, "grant", "add", "acme/drafter", tc.capability, "--level", "destructive")
		if code != tc.code || errs != tc.err {
			t.Errorf("grant add %s: %d %q; want %d %q", tc.capability, code, errs, tc.code, tc.err)
		}
	}
	code, out, _ := run(t, data, "grant", "ls")
	if code != 0 || strings.Contains(out, "nosuch") || strings.Count(out, "acme/drafter") != 4 {
		t.Errorf("grant ls: %d\n%s", code, out)
	}
}

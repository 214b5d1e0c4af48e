package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestInitPassesStrictValidation: what 'skillgate init' writes, with and
// without --mcp, passes 'skillgate validate --strict' as run by a user,
// and its mcp.json is one the install flow parses.
func TestInitPassesStrictValidation(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		files []string
	}{
		{"plain", []string{"init", "pdf-forms"}, []string{"SKILL.md"}},
		{"description", []string{"init", "notes", "--description", "Keep notes: one per topic # tagged"}, []string{"SKILL.md"}},
		{"mcp", []string{"init", "gh-triage", "--mcp"}, []string{"SKILL.md", "mcp.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			skillDir := filepath.Join(dir, "skills", tc.args[1])
			args := append(append([]string{}, tc.args...), "--dir", filepath.Join(dir, "skills"))
			code, out, errs := run(t, "", args...)
			want := "created skill " + tc.args[1] + " in " + skillDir + ": " + strings.Join(tc.files, ", ") + "\n" +
				"next: edit " + filepath.Join(skillDir, "SKILL.md") + ", then check it with 'skillgate validate --strict " + skillDir + "'\n"
			if code != 0 || out != want || errs != "" {
				t.Fatalf("init: %d\n got %q\nwant %q\n%s", code, out, want, errs)
			}
			code, out, errs = run(t, "", "validate", "--strict", skillDir)
			if code != 0 || out != "Valid skill: "+skillDir+"\n" || errs != "" {
				t.Fatalf("validate --strict: %d %q %q", code, out, errs)
			}
			entries, err := os.ReadDir(skillDir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if strings.Join(got, ",") != strings.Join(tc.files, ",") {
				t.Errorf("files %v, want %v", got, tc.files)
			}
			if len(tc.files) < 2 {
				return
			}
			data, err := os.ReadFile(filepath.Join(skillDir, "mcp.json"))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := mcpclient.ParseConfig(data)
			if err != nil {
				t.Fatalf("mcp.json: %v", err)
			}
			if len(cfg.Servers) != 1 || cfg.Servers[0].ID != tc.args[1] || cfg.Servers[0].Command != "npx" {
				t.Errorf("mcp.json servers: %+v", cfg.Servers)
			}
		})
	}
}

// TestInitRefuses: an invalid name is refused with the specification's
// messages and a folder that is not empty is left alone, both as usage
// errors, with nothing written; an empty folder is used.
func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"taken/notes.md": "mine\n", "file": "x"})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	hint := " (a name is lowercase letters, digits and single hyphens, at most 64 characters; a description 1 to 1024 characters)\n"
	tests := []struct {
		name string
		args []string
		code int
		errs string
	}{
		{"upper case", []string{"init", "PDF"}, 2, "Error: init: Skill name 'PDF' must be lowercase" + hint},
		{"characters", []string{"init", "a_b"}, 2, "Error: init: Skill name 'a_b' contains invalid characters. Only letters, digits, and hyphens are allowed." + hint},
		{"hyphens", []string{"init", "a--b-"}, 2, "Error: init: Skill name cannot start or end with a hyphen; Skill name cannot contain consecutive hyphens" + hint},
		{"too long", []string{"init", strings.Repeat("a", 65)}, 2, "Error: init: Skill name '" + strings.Repeat("a", 65) + "' exceeds 64 character limit (65 chars)" + hint},
		{"long description", []string{"init", "ok", "--description", strings.Repeat("d", 1025)}, 2, "Error: init: Description exceeds 1024 character limit (1025 chars)" + hint},
		{"not empty", []string{"init", "taken"}, 2, "Error: init: " + filepath.Join(dir, "taken") + " already exists and is not empty; choose another NAME or --dir, or remove the folder\n"},
		{"a file", []string{"init", "file"}, 2, "Error: init: " + filepath.Join(dir, "file") + " exists and is not a folder; choose another NAME or --dir\n"},
		{"no name", []string{"init"}, 2, "Error: skillgate init: expected NAME, got 0 arguments; see 'skillgate init --help'\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, "", append(tc.args, "--dir", dir)...)
			if code != tc.code || out != "" || errs != tc.errs {
				t.Errorf("%d %q\n got %q\nwant %q", code, out, errs, tc.errs)
			}
		})
	}
	if got, err := os.ReadFile(filepath.Join(dir, "taken", "notes.md")); err != nil || string(got) != "mine\n" {
		t.Errorf("the folder that was not empty changed: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ok")); !os.IsNotExist(err) {
		t.Errorf("a refused init made its folder: %v", err)
	}
	if code, _, errs := run(t, "", "init", "empty", "--dir", dir); code != 0 {
		t.Fatalf("an empty folder: %d %s", code, errs)
	}
	if code, _, errs := run(t, "", "validate", "--strict", filepath.Join(dir, "empty")); code != 0 {
		t.Fatalf("validate: %d %s", code, errs)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/app"
)

// run drives the real CLI wiring with a private data directory.
func run(t *testing.T, data string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "SKILLGATE_DATA" {
			return data
		}
		return ""
	}}
	code := m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValidateCLI(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"good/SKILL.md": "---\nname: good\ndescription: Good.\n---\n",
		"bad/SKILL.md":  "---\nname: Bad\ndescription: x\nauthor: me\n---\n",
	})
	good, bad := filepath.Join(root, "good"), filepath.Join(root, "bad")
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"valid", []string{"validate", "--strict", good}, 0, "Valid skill: " + good + "\n", ""},
		{"SKILL.md path", []string{"validate", "--strict", filepath.Join(good, "SKILL.md")}, 0, "Valid skill: " + good + "\n", ""},
		{"invalid strict", []string{"validate", "--strict", bad}, 1, "", "Validation failed for " + bad + ":\n" +
			"  - Unexpected fields in frontmatter: author. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.\n" +
			"  - Skill name 'Bad' must be lowercase\n" +
			"  - Directory name 'bad' must match skill name 'Bad'\n"},
		{"lenient warns", []string{"validate", bad}, 0, "Valid skill: " + bad + "\n" +
			"  warning: unknown frontmatter field 'author' was kept; move it under metadata: to follow the specification\n" +
			"  warning: Skill name 'Bad' must be lowercase\n" +
			"  warning: Directory name 'bad' must match skill name 'Bad'\n", ""},
		{"no args", []string{"validate"}, 2, "", "Error: validate needs at least one PATH (see 'skillgate validate --help')\n"},
		{"bad flag", []string{"validate", "--nope", good}, 2, "", "Error: unknown flag: --nope (see 'skillgate validate --help')\n"},
		{"missing", []string{"validate", "--strict", filepath.Join(root, "none")}, 1, "", "Validation failed for " + filepath.Join(root, "none") + ":\n  - Path does not exist: " + filepath.Join(root, "none") + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, t.TempDir(), tc.args...)
			if code != tc.code || out != tc.out || errs != tc.errs {
				t.Errorf("code %d out %q err %q\nwant %d %q %q", code, out, errs, tc.code, tc.out, tc.errs)
			}
		})
	}
	code, out, _ := run(t, t.TempDir(), "validate", "--json", good, bad)
	var res []app.ValidateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res) != 2 || !res[0].Valid || len(res[1].Warnings) != 3 {
		t.Errorf("json: %d %v %s", code, err, out)
	}
}

func TestScanListShowCLI(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	write(t, root, map[string]string{
		"escrituras/compraventa/SKILL.md": "---\nname: compraventa\ndescription: Drafts a sale deed.\nmetadata:\n  tier: '1'\n  version: 1.0.0\n---\n",
		"ops/deploy/SKILL.md":             "---\nname: deploy\ndescription: Deploys.\ntier: 3\n---\n",
		"broken/SKILL.md":                 "---\nname: broken\n---\n",
	})
	code, out, errs := run(t, data, "scan", "--root", root)
	if code != 0 || !strings.HasPrefix(out, "3 skills (2 valid, 1 rejected) in ") || !strings.Contains(out, "rejected: "+filepath.Join(root, "broken")+"\n  - Missing required field in frontmatter: description\n") {
		t.Fatalf("scan: %d %q %q", code, out, errs)
	}
	code, out, _ = run(t, data, "ls", "--json", "--invokable-by", "T4")
	want := `[
  {
    "name": "compraventa",
    "description": "Drafts a sale deed.",
    "tier": 1,
    "invokable_by": [
      "T0",
      "T1",
      "T2",
      "T3",
      "T4"
    ],
    "source": "` + root + `",
    "category": "escrituras",
    "version": "1.0.0",
    "trust": "imported"
  }
]
`
	if code != 0 || out != want {
		t.Errorf("ls --json:\n%s", out)
	}
	code, out, _ = run(t, data, "show", "deploy")
	if code != 0 || !strings.Contains(out, "tier:         3 (invokable by T0, T1)\n") || !strings.Contains(out, "identity:     ops/deploy\n") {
		t.Errorf("show: %d %s", code, out)
	}
	code, _, errs = run(t, data, "show", "nope")
	if code != 1 || errs != "Error: skill not found: \"nope\"; run 'skillgate ls' to see the skills, or 'skillgate scan' to refresh\n" {
		t.Errorf("show missing: %d %q", code, errs)
	}
	if code, out, _ = run(t, data, "disable", "deploy"); code != 0 || out != "disabled deploy\n" {
		t.Errorf("disable: %d %q", code, out)
	}
	code, out, _ = run(t, data, "prompt", "--format", "json")
	if code != 0 || strings.Contains(out, "deploy") || !strings.Contains(out, "compraventa") {
		t.Errorf("prompt after disable: %s", out)
	}
	code, out, _ = run(t, data, "scan", "--root", root, "--json")
	var rep struct{ Parsed, Unchanged int }
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Parsed != 0 || rep.Unchanged != 3 {
		t.Errorf("rescan: %d %v %s", code, err, out)
	}
}

func TestDriftCLI(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, map[string]string{"s/SKILL.md": "---\nname: s\ndescription: d\n---\n"})
	write(t, b, map[string]string{"s/SKILL.md": "---\nname: s\ndescription: d\n---\n"})
	if code, out, _ := run(t, t.TempDir(), "drift", a, b); code != 0 || out != "in sync: "+a+" and "+b+"\n" {
		t.Errorf("in sync: %d %q", code, out)
	}
	write(t, b, map[string]string{"s/SKILL.md": "---\nname: s\ndescription: e\n---\n"})
	if code, out, _ := run(t, t.TempDir(), "drift", a, b); code != 1 || out != "differs: s\n  changed file: SKILL.md\n  frontmatter keys: description\n" {
		t.Errorf("drift: %d %q", code, out)
	}
	if code, _, _ := run(t, t.TempDir(), "drift", a); code != 2 {
		t.Errorf("usage: %d", code)
	}
}

// TestToPromptParity compares with skills-ref's to-prompt output on the
// corpus sample, byte for byte.
func TestToPromptParity(t *testing.T) {
	dir := os.Getenv("SKILLGATE_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	want, err := os.ReadFile(filepath.Join(dir, "to-prompt-sample.txt"))
	if err != nil {
		t.Skipf("corpus not found at %s: %v", dir, err)
	}
	paths, _ := os.ReadFile(filepath.Join(dir, "to-prompt-sample.paths"))
	abs, _ := filepath.Abs(dir)
	// to-prompt prints resolved paths (Path.resolve()).
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	args := []string{"prompt"}
	for _, p := range strings.Fields(string(paths)) {
		args = append(args, filepath.Join(abs, p))
	}
	code, out, errs := run(t, t.TempDir(), args...)
	if code != 0 {
		t.Fatalf("prompt: %d %s", code, errs)
	}
	if got := strings.ReplaceAll(out, abs, "CORPUS_ROOT"); got != string(want) {
		t.Errorf("to-prompt differs:\n%s\nwant\n%s", got, want)
	}
}

func TestHelpEverywhere(t *testing.T) {
	for _, c := range []string{"", "validate", "scan", "ls", "show", "prompt", "drift", "enable", "disable", "version"} {
		args := []string{"--help"}
		if c != "" {
			args = []string{c, "--help"}
		}
		code, out, _ := run(t, t.TempDir(), args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: %d %q", c, code, out)
		}
	}
}

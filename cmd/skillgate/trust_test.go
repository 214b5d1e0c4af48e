package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustOfRoots: a root's trust comes from the configuration file (or
// --trust for --root flags); without one it is imported. ls shows it and
// filters on it, show names it, and a trust no root may claim is refused.
func TestTrustOfRoots(t *testing.T) {
	shipped, third := t.TempDir(), t.TempDir()
	write(t, shipped, map[string]string{"github/SKILL.md": "---\nname: github\ndescription: Works with GitHub.\n---\n"})
	write(t, third, map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Takes notes.\n---\n"})
	data := t.TempDir()
	// first_party skills must be signed by a key trusted for them.
	signing := trustedKey(t, data)
	signSkill(t, data, filepath.Join(shipped, "github"))
	signSkill(t, data, filepath.Join(third, "notes"))
	cfg := "roots:\n  - path: " + shipped + "\n    trust: first_party\n  - path: " + third + "\n" + signing
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, data, "scan")
	if code != 0 || !strings.Contains(out, "root "+shipped+" (project, first_party): 1 skill,") || !strings.Contains(out, "root "+third+" (project): 1 skill,") {
		t.Fatalf("scan: %d %q %q", code, out, errs)
	}
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"all", []string{"ls"}, 0, "NAME    TIER  INVOKABLE BY  SCOPE    TRUST        STATE    DESCRIPTION\n" +
			"github  2     T0,T1,T2,T3   project  first_party  enabled  Works with GitHub.\n" +
			"notes   2     T0,T1,T2,T3   project  imported     enabled  Takes notes.\n"},
		{"first_party", []string{"ls", "--trust", "first_party"}, 0, "NAME    TIER  INVOKABLE BY  SCOPE    TRUST        STATE    DESCRIPTION\n" +
			"github  2     T0,T1,T2,T3   project  first_party  enabled  Works with GitHub.\n"},
		{"imported", []string{"ls", "--trust", "imported"}, 0, "NAME   TIER  INVOKABLE BY  SCOPE    TRUST     STATE    DESCRIPTION\n" +
			"notes  2     T0,T1,T2,T3   project  imported  enabled  Takes notes.\n"},
		{"core lists nothing", []string{"ls", "--trust", "core"}, 0, ""},
		{"json", []string{"ls", "--json", "--trust", "first_party"}, 0, `[
  {
    "name": "github",
    "description": "Works with GitHub.",
    "tier": 2,
    "invokable_by": [
      "T0",
      "T1",
      "T2",
      "T3"
    ],
    "source": "` + shipped + `",
    "trust": "first_party"
  }
]
`},
		{"bad trust", []string{"ls", "--trust", "trusted"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, data, tc.args...)
			if code != tc.code || out != tc.out {
				t.Errorf("%d %q %q\nwant %d %q", code, out, errs, tc.code, tc.out)
			}
		})
	}
	if _, out, _ := run(t, data, "show", "github"); !strings.Contains(out, "trust:        first_party\n") {
		t.Errorf("show github:\n%s", out)
	}
	if _, out, _ := run(t, data, "show", "notes"); !strings.Contains(out, "trust:        imported\n") {
		t.Errorf("show notes:\n%s", out)
	}
	// The configuration changes: the same skills, unchanged on disk, take
	// the root's new trust at the next scan.
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("roots:\n  - path: "+shipped+"\n  - path: "+third+"\n    trust: first_party\n"+signing), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, data, "scan")
	if _, out, _ := run(t, data, "ls", "--trust", "first_party"); !strings.Contains(out, "\nnotes ") || strings.Contains(out, "github") {
		t.Errorf("after the trust moved:\n%s", out)
	}
}

// TestTrustErrors: what the configuration and the flags refuse.
func TestTrustErrors(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		cfg  string
		args []string
		code int
		errs string
	}{
		{"config core", "roots:\n  - path: " + root + "\n    trust: core\n", []string{"scan"}, 1,
			"Error: config CFG: roots[0].trust: trust \"core\" is reserved for skillgate's own tools: use first_party or imported\n"},
		{"config unknown", "roots:\n  - path: " + root + "\n    trust: high\n", []string{"scan"}, 1,
			"Error: config CFG: roots[0].trust: trust \"high\": use first_party or imported\n"},
		{"flag unknown", "", []string{"scan", "--root", root, "--trust", "high"}, 2,
			"Error: --trust: trust \"high\": use first_party or imported\n"},
		{"flag without roots", "", []string{"scan", "--trust", "first_party"}, 2,
			"Error: --trust applies to --root flags: give the roots it applies to, or set trust per root in the configuration file\n"},
		{"core cannot be disabled", "", []string{"disable", "read_file"}, 1,
			"Error: read_file is one of skillgate's own tools (trust core): always on, it cannot be disabled (see docs/trust.md)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			if tc.cfg != "" {
				if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(tc.cfg), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errs := run(t, data, tc.args...)
			want := strings.ReplaceAll(tc.errs, "CFG", filepath.Join(data, "config.yaml"))
			if code != tc.code || out != "" || errs != want {
				t.Errorf("%d %q %q\nwant %d %q", code, out, errs, tc.code, want)
			}
		})
	}
	// --trust first_party with --root records the root as first_party.
	data := t.TempDir()
	write(t, root, map[string]string{"a/SKILL.md": "---\nname: a\ndescription: A.\n---\n"})
	if code, _, errs := run(t, data, "scan", "--root", root, "--trust", "first_party"); code != 0 {
		t.Fatal(errs)
	}
	if _, out, _ := run(t, data, "show", "a"); !strings.Contains(out, "trust:        first_party\n") {
		t.Errorf("show a:\n%s", out)
	}
}

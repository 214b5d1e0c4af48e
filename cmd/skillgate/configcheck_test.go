package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandValidatesItsConfiguration: a value the configuration's
// shape accepts but its meaning does not (a duration, a mode, a scope, a
// key's time) fails every command that loads the file, with the same
// message naming the file, the field and the fix, not only the command
// that first uses the value (serve, which before validated sessions alone
// and is left out here: on a valid file it would start serving).
func TestEveryCommandValidatesItsConfiguration(t *testing.T) {
	root := t.TempDir()
	configs := []struct {
		name, yaml, err string
	}{
		{"idle expiry", "sessions:\n  idle_expiry: 30days\n",
			`CFG: sessions.idle_expiry: "30days" is not a positive duration like 90m, 12h or 30d (0 or never keeps sessions; the default is 1d)`},
		{"hard links", "roots:\n  - path: " + root + "\n    hard_links: sometimes\n",
			`CFG: roots[0].hard_links: "sometimes": use allow or refuse`},
		{"scope", "roots:\n  - path: " + root + "\n    scope: galaxy\n",
			`CFG: roots[0].scope: unknown scope "galaxy"`},
		{"sandbox mode", "sandbox:\n  skills:\n    acme/gh: off\n",
			`CFG: sandbox.skills.acme/gh: sandbox mode must be bubblewrap or none, not "off"`},
		{"two at once", "sessions:\n  idle_expiry: soon\nroots:\n  - path: " + root + "\n    trust: high\n",
			`CFG: sessions.idle_expiry: "soon" is not a positive duration like 90m, 12h or 30d (0 or never keeps sessions; the default is 1d)` + "\nconfig " +
				`CFG: roots[0].trust: trust "high": use first_party or imported`},
		{"environment credential", "credentials:\n  from_environment: [GITHUB_TOKEN, SKILLGATE_CREDENTIAL_KEY]\n",
			`CFG: invalid credential name: credentials.from_environment[1]: SKILLGATE_CREDENTIAL_KEY is skillgate's own configuration, never a skill's credential; remove it`},
		{"signing key time", "signing:\n  keys:\n    - name: k\n      public_key: k.pub\n      not_after: next year\n",
			`CFG: signing.keys[0] (k): public_key: `},
	}
	commands := [][]string{
		{"scan", "--root", root},
		{"ls"},
		{"pending"},
		{"session", "ls"},
		{"policy", "check"},
		{"grant", "ls"},
		{"executors"},
		{"audit", "verify"},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			data := t.TempDir()
			if code, _, errs := run(t, data, "scan", "--root", root); code != 0 {
				t.Fatal(errs)
			}
			file := filepath.Join(data, "config.yaml")
			if err := os.WriteFile(file, []byte(cfg.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			want := "Error: config " + strings.ReplaceAll(cfg.err, "CFG", file)
			for _, args := range commands {
				code, out, errs := run(t, data, args...)
				if code != 1 || out != "" || !strings.HasPrefix(errs, want) {
					t.Errorf("%v: %d %q\n got %q\nwant %q", args, code, out, errs, want)
				}
			}
		})
	}
}

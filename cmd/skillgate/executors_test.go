package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecutorsCommand: with no provider skill every executor is dormant;
// preferences naming an unknown provider or misspelt keys are refused
// with the file, the key and the fix.
func TestExecutorsCommand(t *testing.T) {
	data := t.TempDir()
	if code, out, _ := run(t, data, "executors", "--help"); code != 0 || !strings.Contains(out, "Exit status") || !strings.Contains(out, "--json") {
		t.Fatalf("executors --help: %d\n%s", code, out)
	}
	code, out, errs := run(t, data, "executors", "--json", "--tenant", "acme", "--agent", "a1", "--tier", "T2")
	if code != 0 || !strings.Contains(out, `"principal": "acme/a1@T2"`) || !strings.Contains(out, `"name": "create_issue",
      "dormant": true,
      "backends": []`) || !strings.Contains(out, `"problems": []`) {
		t.Fatalf("executors --json: %d %s %s", code, out, errs)
	}
	code, out, _ = run(t, data, "executors")
	if code != 0 || !strings.Contains(out, "create_issue  dormant\n  no provider skill declares a backend\n") {
		t.Fatalf("executors: %d %s", code, out)
	}
	if code, _, errs := run(t, data, "executors", "--tier", "T9"); code != 2 || !strings.Contains(errs, "--tier") {
		t.Fatalf("executors --tier T9: %d %s", code, errs)
	}
	cfg := filepath.Join(data, "config.yaml")
	tests := []struct{ config, err string }{
		{"executors:\n  preferences:\n    global: [gitlub]\n",
			"Error: config " + cfg + ": executors: preferences.global[0]: unknown provider \"gitlub\"; use one of bitbucket, gitea, github, gitlab, google-workspace, local, microsoft-365, slack (a new provider is declared in an operator catalog, DATA/executors)\n"},
		{"executors:\n  preferences:\n    tenants:\n      acme: [github, gitlob]\n",
			"Error: config " + cfg + ": executors: preferences.tenants.acme[1]: unknown provider \"gitlob\"; use one of bitbucket, gitea, github, gitlab, google-workspace, local, microsoft-365, slack (a new provider is declared in an operator catalog, DATA/executors)\n"},
		{"executors:\n  preferencs:\n    global: [gitlab]\n",
			"Error: config " + cfg + ":2: unknown key executors.preferencs (did you mean preferences?); valid keys under executors: preferences\n"},
	}
	for _, tc := range tests {
		if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := run(t, data, "executors"); code != 1 || errs != tc.err {
			t.Errorf("config %q: %d %q, want 1 %q", tc.config, code, errs, tc.err)
		}
	}
	// A provider an operator catalog adds may be preferred.
	os.MkdirAll(filepath.Join(data, "executors"), 0o755)
	if err := os.WriteFile(filepath.Join(data, "executors", "forgejo.yaml"), []byte("apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\nproviders:\n  - {name: forgejo, suffix: _forgejo, description: Forgejo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("executors:\n  preferences:\n    global: [forgejo, github]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, data, "executors"); code != 0 {
		t.Errorf("a preference for an operator catalog's provider: %d %s %s", code, out, errs)
	}
}

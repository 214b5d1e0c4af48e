package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrors checks that configuration mistakes name the file, the
// line, the key and what is valid there, never Go types.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml, errs string
	}{
		{"misspelt nested key", "limits:\n  max_dpeth: 3\n",
			"CFG:2: unknown key limits.max_dpeth (did you mean max_depth?); valid keys under limits: max_depth, max_dirs\n"},
		{"misspelt top key", "root:\n  - path: x\n",
			"CFG:1: unknown key root (did you mean roots?); valid keys at the top level: connections, credentials, executors, limits, mirrors, packages, roots, s3, sandbox, scanner, sessions, signing, store, tenant_libraries, workspace\n"},
		{"sandbox limit misspelt", "sandbox:\n  limits:\n    memory_byte: 1\n",
			"CFG:3: unknown key sandbox.limits.memory_byte (did you mean memory_bytes?); valid keys under sandbox.limits: cpu_seconds, file_size_bytes, memory_bytes, open_files, processes, tmp_bytes\n"},
		{"sandbox limit not a number", "sandbox:\n  limits:\n    processes: lots\n",
			"CFG:3: sandbox.limits.processes must be a whole number, not \"lots\"\n"},
		{"unknown key, nothing close", "roots:\n  - path: x\n    colour: blue\n",
			"CFG:3: unknown key roots[0].colour; valid keys under roots[0]: hard_links, path, scope, trust\n"},
		{"two problems", "limits:\n  max_dirs: many\nworkspace:\n  max_byte: 1\n",
			"CFG:2: limits.max_dirs must be a whole number, not \"many\"\nCFG:4: unknown key workspace.max_byte (did you mean max_bytes?); valid keys under workspace: max_bytes, max_files, tenant_max_bytes, tenant_max_files\n"},
		{"packages: registry not http", "packages:\n  npm:\n    registry: ftp://mirror.example/\n",
			"CFG: packages: npm.registry \"ftp://mirror.example/\": use an http(s) URL without credentials\n"},
		{"packages: registry with credentials", "packages:\n  pypi:\n    index: https://u:p@mirror.example/simple/\n",
			"CFG: packages: pypi.index \"https://u:p@mirror.example/simple/\": use an http(s) URL without credentials\n"},
		{"packages: offline without cache", "packages:\n  npm:\n    offline: true\n",
			"CFG: packages: npm.offline needs npm.cache: the directory packages are fetched from\n"},
		{"packages: relative cache", "packages:\n  npm:\n    cache: cache\n",
			"CFG: packages: npm.cache \"cache\": use an absolute path\n"},
		{"packages: timeout", "packages:\n  timeout: soon\n",
			"CFG: packages: timeout \"soon\": use a duration such as 5m\n"},
		{"connections: client key misspelt", "connections:\n  clients:\n    github:\n      client_secret: s3cr3t\n",
			"CFG:4: unknown key connections.clients.github.client_secret (did you mean client_secret_env?); valid keys under connections.clients.github: client_id, client_secret_env\n"},
		{"connections: values", "connections:\n  timeout: soon\n  clients:\n    GitHub:\n      client_id: x\n    gitlab:\n      client_secret_env: glpat-123\n",
			"CFG: connections.timeout: \"soon\": use a duration from 1s to 10m, such as 10s\n" +
				"CFG: connections.clients.GitHub: invalid connection: provider \"GitHub\": use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most 128 bytes, e.g. github\n" +
				"CFG: connections.clients.gitlab.client_id: required, 1 to 512 bytes without control characters (the id the authorization server issued)\n" +
				"CFG: connections.clients.gitlab.client_secret_env: not a variable name: name the environment variable (upper-case letters, digits and '_') that holds the secret, never the secret itself\n"},
		{"connections: clients not a mapping", "connections:\n  clients: [github]\n", "CFG:2: connections.clients must be a mapping, not a list\n"},
		{"list expected", "roots: x\n", "CFG:1: roots must be a list, not \"x\"\n"},
		{"mapping expected", "limits: [1]\n", "CFG:1: limits must be a mapping of keys (max_depth, max_dirs), not a list\n"},
		{"syntax", "limits:\n  max_depth: [\n", "CFG:2: did not find expected node content (YAML syntax)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			cfg := filepath.Join(data, "config.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := run(t, data, "scan", "--root", t.TempDir())
			want := "Error: " + strings.ReplaceAll(tc.errs, "CFG", "config "+cfg)
			if code != 1 || out != "" || errs != want {
				t.Errorf("%d %q\n got %q\nwant %q", code, out, errs, want)
			}
		})
	}
	// A valid file still loads.
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "config.yaml"), []byte("limits:\n  max_depth: 3\nroots: []\nworkspace: {max_bytes: -1}\n"), 0o600)
	if code, _, errs := run(t, data, "scan", "--root", t.TempDir()); code != 0 {
		t.Errorf("valid config: %d %s", code, errs)
	}
}

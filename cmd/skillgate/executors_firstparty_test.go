package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecutorsFirstParty: `skillgate executors` lists the backends of a
// first_party provider skill (its shipped backends.yaml), which the
// gateway serves without an install, with why each is live or off; once
// the skill is disabled, its backend is off for that reason.
func TestExecutorsFirstParty(t *testing.T) {
	t.Parallel()
	root, data := t.TempDir(), t.TempDir()
	man := `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"github","version":"sha256:` + strings.Repeat("0", 64) + `",` +
		`"providers":[{"type":"mcp","serverId":"github"}],` +
		`"capabilities":[{"extensionId":"github","capabilityId":"create_issue","description":"Create an issue.",` +
		`"inputSchema":{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"}},"required":["owner","repo","title"]},` +
		`"risk":{"riskLevel":{"value":"write","source":"operator"},"sideEffects":{"value":"external","source":"operator"},"dataEgress":{"value":"network","source":"operator"}}}]}`
	write(t, root, map[string]string{
		"github/SKILL.md":      "---\nname: github\ndescription: GitHub, shipped.\n---\nUse create_issue.\n",
		"github/mcp.json":      `{"mcpServers":{"github":{"command":"github-mcp","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_TOKEN}"}}}}`,
		"github/manifest.json": man,
		"github/backends.yaml": "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: github\nbackends:\n  - executor: create_issue\n    server: github\n    tool: create_issue\n" +
			"    arguments:\n      owner: args.repository.split(\"/\")[0]\n      repo: args.repository.split(\"/\")[1]\n      title: args.title\n",
	})
	signing := trustedKey(t, data)
	signSkill(t, data, filepath.Join(root, "github"))
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte("roots:\n  - path: "+root+"\n    trust: first_party\n"+signing), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, data, "scan"); code != 0 {
		t.Fatalf("scan: %s %s", out, errs)
	}
	for _, tc := range []struct {
		before []string
		want   string
	}{
		{nil, "create_issue  dormant\n  github  github:github/create_issue  off: credential GITHUB_TOKEN missing for tenant acme\n"},
		{[]string{"disable", "github"}, "create_issue  dormant\n  github  github:github/create_issue  off: first_party skill github is disabled; enable it with skillgate enable github\n"},
	} {
		if tc.before != nil {
			if code, out, errs := run(t, data, tc.before...); code != 0 {
				t.Fatalf("%v: %s %s", tc.before, out, errs)
			}
		}
		code, out, errs := run(t, data, "executors", "--tenant", "acme", "--agent", "a1")
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("after %v: %d\n%s%s\nwant it to contain:\n%s", tc.before, code, out, errs, tc.want)
		}
	}
}

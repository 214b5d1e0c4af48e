package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRealProviderSkillsInstalled installs the two example provider skills
// with the real npm servers (@modelcontextprotocol/server-github and
// server-gitlab, which list their tools without the network), their
// backends.yaml as shipped: the installs introspect the real tools, the
// approvals compile the mappings against the real schemas, and an agent
// sees one create_issue served by both providers.
func TestRealProviderSkillsInstalled(t *testing.T) {
	node, ghEntry := npmServer(t, "server-github")
	_, glEntry := npmServer(t, "server-gitlab")
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-not-used")
	t.Setenv("GITLAB_TOKEN", "gl-not-used")
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN, GITLAB_TOKEN]\n")
	for _, p := range []struct {
		name, entry, token string
		env                map[string]string
	}{
		{"github", ghEntry, "GITHUB_TOKEN", map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}},
		{"gitlab", glEntry, "GITLAB_TOKEN", map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": "${GITLAB_TOKEN}", "GITLAB_API_URL": "https://gitlab.com/api/v4"}},
	} {
		dir := filepath.Join(t.TempDir(), p.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"SKILL.md", "backends.yaml"} {
			b, err := os.ReadFile(filepath.Join("..", "examples", "providers", p.name, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The example's mcp.json runs the server with npx; here the copy the
		// test script installed runs, the same version.
		cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{p.name: map[string]any{"command": node, "args": []string{p.entry}, "env": p.env}}})
		if err := os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		f.runCode(t, nil, "install", dir, "--credential", p.token)
		tools := "create_issue get_file_contents search_repositories create_or_update_file create_repository"
		var only []string
		for _, tool := range strings.Fields(tools) {
			c := p.name + "/" + tool
			f.run(t, "complete", p.name, c, "--risk", "write", "--side-effects", "external", "--egress", "network", "--why", "the provider's API, over the network")
			only = append(only, c)
		}
		f.run(t, "approve", p.name, "--only", strings.Join(only, ","))
		f.run(t, "enable", p.name)
	}
	// Installing GitLab beside the approved GitHub found that both offer
	// create_repository, which no backends.yaml maps: a promote_provider
	// change waits for a human, applied by one.
	var queued []struct {
		ID, Kind, State, Subject string
	}
	if out := f.run(t, "changes", "ls", "--json"); json.Unmarshal([]byte(out), &queued) != nil || len(queued) != 1 ||
		queued[0].Kind != "promote_provider" || queued[0].Subject != "create_repository" || queued[0].State != "pending" {
		t.Fatalf("changes: %s", out)
	}
	if out := f.run(t, "changes", "approve", queued[0].ID, "--why", "one create_repository for both forges"); !strings.Contains(out,
		"change "+queued[0].ID+"  promote_provider  applied") {
		t.Errorf("approve:\n%s", out)
	}
	if code, _, stderr := f.runCode(t, nil, "changes", "approve", queued[0].ID, "--why", "one create_repository for both forges"); code != 2 ||
		!strings.HasPrefix(stderr, "Error: change already decided: change "+queued[0].ID+" was applied by operator:") {
		t.Errorf("approve twice: %d %q", code, stderr)
	}
	out := f.run(t, "executors", "--tenant", "acme", "--agent", "drafter", "--tier", "T3", "--json")
	var status struct {
		Executors []struct {
			Name     string
			Dormant  bool
			Backends []struct {
				Provider string
				Live     bool
			}
		}
		Problems []string
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status.Problems) != 0 {
		t.Fatalf("executors: %v\n%s", err, out)
	}
	for _, e := range status.Executors {
		if e.Dormant || len(e.Backends) != 2 || !e.Backends[0].Live || !e.Backends[1].Live {
			t.Errorf("executor %+v", e)
		}
	}
	cs := f.agent(t, "T3")
	names := toolNames(t, cs)
	if len(status.Executors) != 5 {
		t.Errorf("executors: %s", out)
	}
	for _, want := range []string{"create_issue", "read_file_contents", "find_repositories", "write_file_contents", "create_repository"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not listed: %v", want, names)
		}
	}
	if e := providerEnum(t, cs); e != "github,gitlab" {
		t.Errorf("create_issue's providers: %q", e)
	}
}

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
// exactly as shipped (examples/providers/NAME: SKILL.md, backends.yaml and
// mcp.json, which runs @modelcontextprotocol/server-github or
// server-gitlab with npx -y PKG@VERSION): each install fetches its server
// from the npm registry and introspects the real tools offline, the
// approvals compile the mappings against the real schemas, an agent sees
// one create_issue served by both providers, and a call of it pinned to
// each provider reaches that provider's server and comes back with its
// answer.
func TestRealProviderSkillsInstalled(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-not-used")
	t.Setenv("GITLAB_TOKEN", "gl-not-used")
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN, GITLAB_TOKEN]\n")
	// Every tool the example's backends.yaml map is approved, and
	// create_repository, which none maps.
	both := "create_issue get_file_contents search_repositories create_or_update_file create_repository create_branch "
	for _, p := range []struct{ name, token, tools string }{
		{"github", "GITHUB_TOKEN", both + "list_issues get_issue update_issue list_pull_requests get_pull_request create_pull_request"},
		{"gitlab", "GITLAB_TOKEN", both + "create_merge_request"},
	} {
		dir := filepath.Join(t.TempDir(), p.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"SKILL.md", "backends.yaml", "mcp.json"} {
			b, err := os.ReadFile(filepath.Join("..", "examples", "providers", p.name, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Blocked until an operator completes the risk metadata the
		// servers do not declare: exit 1.
		if code, out, stderr := f.runCode(t, nil, "install", dir, "--credential", p.token); code != 1 {
			t.Fatalf("install %s: %d\n%s\n%s", p.name, code, out, stderr)
		}
		if r := f.launchReview(t, p.name); len(r.Provenance.Packages) != 1 || r.Provenance.Packages[0].Name != "@modelcontextprotocol/server-"+p.name ||
			!strings.HasPrefix(r.Provenance.Packages[0].Integrity, "sha512-") {
			t.Fatalf("%s: packages %+v", p.name, r.Provenance.Packages)
		}
		f.approveTools(t, p.name, strings.Fields(p.tools), "external", "network", "the provider's API, over the network")
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
	// server-gitlab has no tool to find, read or update issues nor to
	// find or read merge requests: GitHub alone serves those.
	githubOnly := []string{"find_issues", "find_pull_requests", "read_issue", "read_pull_request", "update_issue"}
	for _, e := range status.Executors {
		n := 2
		if slices.Contains(githubOnly, e.Name) {
			n = 1
		}
		if e.Dormant || len(e.Backends) != n || !e.Backends[0].Live || !e.Backends[n-1].Live {
			t.Errorf("executor %+v", e)
		}
	}
	cs := f.agent(t, "T3")
	names := toolNames(t, cs)
	if len(status.Executors) != 12 {
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

	// A call pinned to each provider is routed to its server, which
	// answers with the API's failure, not a refusal of skillgate's.
	f.createIssueOnEachProvider(t)
}

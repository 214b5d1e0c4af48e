package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// firstPartyGitHub writes the example GitHub provider skill
// (examples/providers/github: SKILL.md, mcp.json running
// `npx -y @modelcontextprotocol/server-github@2025.4.8`, backends.yaml) under
// root as a first_party skill, with the manifest.json a first_party skill
// ships: the server's own definitions (as captured from the real server)
// of tools, with their risk.
func firstPartyGitHub(t *testing.T, root string, tools map[string]string) {
	t.Helper()
	dir := filepath.Join(root, "github")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"SKILL.md", "backends.yaml", "mcp.json"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "providers", "github", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), string(b))
	}
	raw, err := os.ReadFile(filepath.Join("..", "internal", "decision", "executor", "testdata", "server-github-2025.4.8.tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &listed); err != nil {
		t.Fatal(err)
	}
	var caps []map[string]any
	for _, tl := range listed.Tools {
		risk, ok := tools[tl.Name]
		if !ok {
			continue
		}
		level, effects := "write", "external"
		if risk == "read" {
			level, effects = "read", "none"
		}
		caps = append(caps, map[string]any{"extensionId": "github", "capabilityId": tl.Name, "description": tl.Description, "inputSchema": tl.InputSchema,
			"risk": map[string]any{"riskLevel": map[string]string{"value": level, "source": "operator"},
				"sideEffects": map[string]string{"value": effects, "source": "operator"}, "dataEgress": map[string]string{"value": "network", "source": "operator"}}})
	}
	// A manifest lists its capabilities sorted by name.
	slices.SortFunc(caps, func(a, b map[string]any) int {
		return strings.Compare(a["capabilityId"].(string), b["capabilityId"].(string))
	})
	man, _ := json.Marshal(map[string]any{"$schema": "https://skillgate.dev/schemas/manifest.v1.json", "skillId": "github",
		"version": "sha256:" + strings.Repeat("0", 64), "providers": []map[string]string{{"type": "mcp", "serverId": "github"}}, "capabilities": caps})
	writeFile(t, filepath.Join(dir, "manifest.json"), string(man))
}

// gitlabModel is an OpenAI-compatible endpoint on loopback that drafts
// promote_provider mappings as a model would: for an executor the example
// GitLab skill's backends.yaml maps, that mapping. It refuses everything
// else (manifest proposals then fall back to the deterministic proposer).
func gitlabModel(t *testing.T) *httptest.Server {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "examples", "providers", "gitlab", "backends.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bf struct {
		Backends []struct {
			Executor, Tool string
			Arguments      map[string]string
		}
	}
	if err := yaml.Unmarshal(raw, &bf); err != nil {
		t.Fatal(err)
	}
	executorLine := regexp.MustCompile(`Executor: ([a-z_]+)\n`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct{ Content string }
		}
		_ = json.Unmarshal(body, &req)
		for _, m := range req.Messages {
			name := executorLine.FindStringSubmatch(m.Content)
			if name == nil || !strings.Contains(string(body), "promote_provider_mapping") {
				continue
			}
			for _, b := range bf.Backends {
				if b.Executor != name[1] || !strings.Contains(m.Content, "server gitlab, tool "+b.Tool+":") {
					continue
				}
				var args []map[string]string
				for _, k := range slices.Sorted(func(yield func(string) bool) {
					for k := range b.Arguments {
						if !yield(k) {
							return
						}
					}
				}) {
					args = append(args, map[string]string{"name": k, "expression": b.Arguments[k]})
				}
				answer, _ := json.Marshal(map[string]any{"description": "", "inputSchemaJSON": "{}", "backends": []map[string]any{
					{"provider": "gitlab", "skill": "gitlab", "server": "gitlab", "tool": b.Tool, "arguments": args}}})
				content, _ := json.Marshal(string(answer))
				fmt.Fprintf(w, `{"choices":[{"message":{"content":%s},"finish_reason":"stop"}]}`, content)
				return
			}
		}
		http.Error(w, "not a mapping this model knows", http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestPromotionAcrossTrustTiers is issue 32's acceptance, end to end with
// the real npm servers launched as users write them (`npx -y PKG`): a
// signed first_party root ships the GitHub provider skill (its
// backends.yaml serves the catalog's executors) and an operator installs
// the GitLab server as an imported skill without a backends.yaml. Each
// object both serve is one promote_provider change: the catalog's
// executors GitHub already serves (drafted by the configured model, as
// the GitLab tools need project_id) and create_repository (drafted
// deterministically). Applied, the agent sees one executor per object
// with both providers and no raw GitLab tool, `executors` lists both
// backends live, and a call pinned to each provider reaches that
// provider's server.
func TestPromotionAcrossTrustTiers(t *testing.T) {
	needLaunchTools(t, "npm", "node")
	f := emptyFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-not-used")
	t.Setenv("GITLAB_TOKEN", "gl-not-used")
	model := gitlabModel(t)
	t.Setenv("SKILLGATE_LLM_BASE_URL", model.URL+"/v1")
	t.Setenv("SKILLGATE_LLM_MODEL", "test-model")
	tools := map[string]string{"create_issue": "write", "get_file_contents": "read", "search_repositories": "read",
		"create_or_update_file": "write", "create_repository": "write", "create_branch": "write"}

	shipped := filepath.Join(t.TempDir(), "shipped")
	// The GitHub skill ships every tool its backends.yaml maps; the objects
	// only GitHub's server has tools for stay GitHub's alone.
	ghTools := map[string]string{"list_issues": "read", "get_issue": "read", "update_issue": "write",
		"list_pull_requests": "read", "get_pull_request": "read", "create_pull_request": "write"}
	maps.Copy(ghTools, tools)
	firstPartyGitHub(t, shipped, ghTools)
	keys := t.TempDir()
	f.run(t, "key", "gen", "release", "--dir", keys)
	f.run(t, "sign", filepath.Join(shipped, "github"), "--key", filepath.Join(keys, "release.key"))
	f.writeConfig(t, "roots:\n  - path: "+shipped+"\n    trust: first_party\n"+
		"signing:\n  keys:\n    - name: release\n      public_key: "+filepath.Join(keys, "release.pub")+"\n      trust: [first_party]\n"+
		"credentials:\n  from_environment: [GITHUB_TOKEN, GITLAB_TOKEN]\n")
	f.run(t, "scan")

	// The GitLab server as an imported skill: its SKILL.md and mcp.json,
	// no backends.yaml.
	dir := filepath.Join(t.TempDir(), "gitlab")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"SKILL.md", "mcp.json"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "providers", "gitlab", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), string(b))
	}
	if code, out, stderr := f.runCode(t, nil, "install", dir, "--credential", "GITLAB_TOKEN"); code != 1 {
		t.Fatalf("install gitlab: %d\n%s\n%s", code, out, stderr)
	}
	// GitLab's merge request is the catalog's pull request, which the
	// GitHub skill serves: one more shared object.
	f.approveTools(t, "gitlab", append(slices.Sorted(maps.Keys(tools)), "create_merge_request"), "external", "network", "the provider's API, over the network")

	// One change per object both serve.
	var queued []struct{ ID, Kind, State, Subject, Summary string }
	out := f.run(t, "changes", "ls", "--json")
	if err := json.Unmarshal([]byte(out), &queued); err != nil {
		t.Fatalf("changes: %v\n%s", err, out)
	}
	var subjects []string
	for _, c := range queued {
		if c.Kind != "promote_provider" || c.State != "pending" {
			t.Errorf("change %+v", c)
		}
		subjects = append(subjects, c.Subject)
	}
	slices.Sort(subjects)
	if want := []string{"create_branch", "create_issue", "create_pull_request", "create_repository", "find_repositories", "read_file_contents"}; !slices.Equal(subjects, want) {
		t.Fatalf("changes: %v, want %v\n%s", subjects, want, out)
	}
	for _, c := range queued {
		t.Logf("change %s: %s", c.ID, c.Summary)
		if c.Subject == "find_repositories" {
			// The operator's smoke call goes through the new backend to
			// the real GitLab server, which answers with its network
			// failure: the change is refused and nothing is registered.
			code, _, stderr := f.runCode(t, nil, "changes", "approve", c.ID, "--why", "one executor per object for both forges",
				"--smoke-call", `find_repositories={"query":"skillgate"}`)
			if want := "Error: change cannot be applied: layer 7 (confinement): smoke call of find_repositories through backend gitlab (gitlab: gitlab/search_repositories)"; code != 1 || !strings.HasPrefix(stderr, want) {
				t.Errorf("approve with a smoke call: %d %s\nwant 1 and %s", code, stderr, want)
			}
			t.Logf("smoke call: %s", stderr)
		}
		if out := f.run(t, "changes", "approve", c.ID, "--why", "one executor per object for both forges"); !strings.Contains(out, "change "+c.ID+"  promote_provider  applied") {
			t.Errorf("approve %s:\n%s", c.ID, out)
		}
	}

	// executors lists both backends of every shared object, live.
	out = f.run(t, "executors", "--tenant", "acme", "--agent", "drafter", "--tier", "T3", "--json")
	var status struct {
		Executors []struct {
			Name     string
			Dormant  bool
			Backends []struct {
				Provider, Skill string
				Live            bool
			}
		}
		Problems []string
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status.Problems) != 0 {
		t.Fatalf("executors: %v\n%s", err, out)
	}
	live := map[string]string{}
	for _, e := range status.Executors {
		var bs []string
		for _, b := range e.Backends {
			bs = append(bs, fmt.Sprintf("%s:%s:%v", b.Provider, b.Skill, b.Live))
		}
		live[e.Name] = strings.Join(bs, " ")
	}
	both := "github:github:true gitlab:gitlab:true"
	for name, want := range map[string]string{"create_branch": both, "create_issue": both, "create_pull_request": both, "create_repository": both, "find_repositories": both,
		"read_file_contents": both, "write_file_contents": "github:github:true"} {
		if live[name] != want {
			t.Errorf("executors: %s has backends %q, want %q\n%s", name, live[name], want, out)
		}
	}

	// The agent sees one executor per object, no raw tool of either.
	cs := f.agent(t, "T3")
	names := toolNames(t, cs)
	for _, want := range []string{"create_branch", "create_issue", "create_pull_request", "create_repository", "find_repositories", "read_file_contents", "write_file_contents"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s not listed: %v", want, names)
		}
	}
	for _, n := range names {
		if strings.Contains(n, "__") && !strings.Contains(n, "create_or_update_file") {
			t.Errorf("a raw tool is still offered beside the executors: %s (%v)", n, names)
		}
	}
	if e := providerEnum(t, cs); e != "github,gitlab" {
		t.Errorf("create_issue's providers: %q", e)
	}

	// A call pinned to each provider reaches its server, which answers
	// with the API's failure, not a refusal of skillgate's.
	f.createIssueOnEachProvider(t)
}

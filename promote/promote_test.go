package promote_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/capability"
	"github.com/skillgate/skillgate/executor"
	"github.com/skillgate/skillgate/promote"
)

// tools reads a captured tools/list result (the executor package's test
// data: the real npm servers' lists) as the tools of server.
func tools(t *testing.T, file, server string) []capability.Tool {
	t.Helper()
	data, err := os.ReadFile("../executor/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	var out []capability.Tool
	for _, x := range res.Tools {
		out = append(out, capability.Tool{ExtensionID: server, CapabilityID: x.Name, Description: x.Description, InputSchema: x.InputSchema})
	}
	return out
}

func npm(pkg string) capability.RedactedServer {
	return capability.RedactedServer{Command: "npx", Args: []string{"-y", pkg}}
}

// skills are the GitHub and GitLab provider skills with the servers of
// examples/providers, without backends files (nothing serves anything).
func skills(t *testing.T) []promote.Skill {
	return []promote.Skill{
		{Key: "vcs/gh", Servers: map[string]capability.RedactedServer{"gh": npm("@modelcontextprotocol/server-github@2025.4.8")}, Tools: tools(t, "server-github-2025.4.8.tools.json", "gh")},
		{Key: "vcs/gl", Servers: map[string]capability.RedactedServer{"gl": npm("@modelcontextprotocol/server-gitlab@2025.4.25")}, Tools: tools(t, "server-gitlab-2025.4.25.tools.json", "gl")},
	}
}

func TestProviderOf(t *testing.T) {
	cat := executor.Builtin()
	for _, tc := range []struct {
		id   string
		decl capability.RedactedServer
		want string
		ok   bool
	}{
		{"github", capability.RedactedServer{Command: "node"}, "github", true},
		{"scm", npm("@modelcontextprotocol/server-gitlab@2025.4.25"), "gitlab", true},
		{"scm", capability.RedactedServer{URL: "https://mcp.example/github/"}, "github", true},
		{"scm", capability.RedactedServer{Command: "python3", Args: []string{"server.py"}}, "", false},
		{"github-gitlab", npm("@x/server-github"), "", false},
	} {
		got, ok := promote.ProviderOf(cat, tc.id, tc.decl)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ProviderOf(%q, %+v) = %q, %v; want %q, %v", tc.id, tc.decl, got, ok, tc.want, tc.ok)
		}
	}
}

// TestDetectNPMServers: of the tools the real GitHub and GitLab servers
// share, the deterministic drafter maps those whose arguments agree by
// name and type; the rest (owner/repo against project_id) it leaves out.
func TestDetectNPMServers(t *testing.T) {
	cat := executor.Builtin()
	got := promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{})
	var names []string
	for _, p := range got {
		names = append(names, p.Executor.Name)
	}
	if want := []string{"create_repository"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("proposals %v, want %v", names, want)
	}
	p := got[0]
	if !p.New || p.Executor.Description != "Create a new repository." || p.Drafter != "deterministic" {
		t.Errorf("executor %+v new %v", p.Executor, p.New)
	}
	if s := string(p.Executor.InputSchema); s != `{"additionalProperties":false,"properties":{"description":{"type":"string"},"name":{"type":"string"}},"required":["name"],"type":"object"}` {
		t.Errorf("schema %s", s)
	}
	want := []promote.Backend{
		{Provider: "github", Skill: "vcs/gh", Server: "gh", Tool: "create_repository", Arguments: map[string]string{"name": "args.name", "description": "args.?description"}},
		{Provider: "gitlab", Skill: "vcs/gl", Server: "gl", Tool: "create_repository", Arguments: map[string]string{"name": "args.name", "description": "args.?description"}},
	}
	if !reflect.DeepEqual(p.Backends, want) {
		t.Errorf("backends %+v", p.Backends)
	}
	if p.Summary() != "create_repository: one executor with backends github (vcs/gh: gh/create_repository), gitlab (vcs/gl: gl/create_repository) (a new executor)" {
		t.Errorf("summary %q", p.Summary())
	}
	if k := p.Key(); !strings.HasPrefix(k, "promote_provider:create_repository:") || k != promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{})[0].Key() {
		t.Errorf("key %q is not stable", k)
	}
	// A skill that takes no part triggers nothing; a provider already
	// serving an executor is left out of its proposal.
	if got := promote.Detect(cat, skills(t), "other", promote.Serving{}); len(got) != 0 {
		t.Errorf("untriggered: %+v", got)
	}
	served := promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{Providers: map[string][]string{"create_repository": {"github"}}})
	if len(served) != 1 || len(served[0].Backends) != 1 || served[0].Backends[0].Provider != "gitlab" || !reflect.DeepEqual(served[0].Serving, []string{"github"}) {
		t.Errorf("served: %+v", served)
	}
}

// TestDetectSuffixed: provider-suffixed names of one server meet the
// plain name of another provider's.
func TestDetectSuffixed(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)
	ss := []promote.Skill{
		{Key: "hub", Servers: map[string]capability.RedactedServer{"hub": {Command: "hub-mcp"}}, Tools: []capability.Tool{
			{ExtensionID: "hub", CapabilityID: "search_issues_github", InputSchema: schema},
			{ExtensionID: "hub", CapabilityID: "search_issues_gitlab", InputSchema: schema},
		}},
	}
	got := promote.Detect(executor.Builtin(), ss, "hub", promote.Serving{})
	if len(got) != 1 || got[0].Executor.Name != "find_issues" || len(got[0].Backends) != 2 || got[0].Backends[0].Tool != "search_issues_github" ||
		got[0].Backends[1].Arguments["limit"] != "args.?limit" {
		t.Fatalf("%+v", got)
	}
}

// TestValidate: whoever drafted a proposal, code decides what holds.
func TestValidate(t *testing.T) {
	cat := executor.Builtin()
	ss := skills(t)
	p := promote.Detect(cat, ss, "vcs/gl", promote.Serving{})[0]
	for _, tc := range []struct {
		name    string
		edit    func(p *promote.Proposal)
		removed []string
		err     string
	}{
		{"invented tool", func(p *promote.Proposal) {
			p.Backends = append(p.Backends, promote.Backend{Provider: "google-workspace", Skill: "vcs/gl", Server: "gl", Tool: "make_repo", Arguments: map[string]string{"name": "args.name"}})
		}, []string{"backend google-workspace (vcs/gl: gl/make_repo): skill vcs/gl offers no such tool"}, ""},
		{"bad mapping", func(p *promote.Proposal) { p.Backends[1].Arguments = map[string]string{"name": "size(args.name)"} },
			nil, `executor create_repository would not be served by two providers: backend gitlab (vcs/gl: gl/create_repository): invalid argument mapping: arguments.name: the expression "size(args.name)" yields int, but tool gl/create_repository's inputSchema wants name to be string; convert it (string(x))`},
		{"known executor said new", func(p *promote.Proposal) { p.Executor.Name = "create_issue" },
			nil, "executor create_issue is already in the catalog: propose backends for it, not a new executor"},
		{"suffixed", func(p *promote.Proposal) { p.Executor.Name = "create_repository_github" },
			nil, "executor create_repository_github carries provider github's suffix: an executor is provider-neutral"},
	} {
		q := p
		q.Backends = nil
		for _, b := range p.Backends {
			b.Arguments = map[string]string{"name": b.Arguments["name"], "description": b.Arguments["description"]}
			q.Backends = append(q.Backends, b)
		}
		tc.edit(&q)
		v, err := promote.Validate(cat, q, ss, promote.Serving{})
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(v.Removed, tc.removed) || len(v.Backends) != 2 {
			t.Errorf("%s: %+v %v", tc.name, v, err)
		}
	}
}

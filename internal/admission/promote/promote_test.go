package promote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/admission/promote"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// tools reads a captured tools/list result (the executor package's test
// data: the real npm servers' lists) as the tools of server.
func tools(t *testing.T, file, server string) []capability.Tool {
	t.Helper()
	data, err := os.ReadFile("../../decision/executor/testdata/" + file)
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

// byName returns the proposal of executor name among ps.
func byName(t *testing.T, ps []promote.Proposal, name string) promote.Proposal {
	t.Helper()
	for _, p := range ps {
		if p.Executor.Name == name {
			return p
		}
	}
	t.Fatalf("no proposal for %s", name)
	return promote.Proposal{}
}

// TestDetectNPMServers: every tool the real GitHub and GitLab servers
// share under one executor name is drafted deterministically, owner/repo
// against project_id included (the argument matcher, match.go).
func TestDetectNPMServers(t *testing.T) {
	cat := executor.Builtin()
	got := promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{})
	var names []string
	for _, p := range got {
		names = append(names, p.Executor.Name)
	}
	if want := []string{"create_branch", "create_issue", "create_pull_request", "create_repository", "find_repositories", "read_file_contents"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("proposals %v, want %v", names, want)
	}
	// GitLab's merge request is the catalog's pull request: the mappings
	// are the examples' backends.yaml files'.
	pr := byName(t, got, "create_pull_request")
	if want := []promote.Backend{
		{Provider: "github", Skill: "vcs/gh", Server: "gh", Tool: "create_pull_request", Arguments: map[string]string{"owner": `args.repository.split("/")[0]`, "repo": `args.repository.split("/")[1]`,
			"title": "args.title", "body": "args.?body", "head": "args.source_branch", "base": "args.target_branch", "draft": "args.?draft"}},
		{Provider: "gitlab", Skill: "vcs/gl", Server: "gl", Tool: "create_merge_request", Arguments: map[string]string{"project_id": "args.repository",
			"title": "args.title", "description": "args.?body", "source_branch": "args.source_branch", "target_branch": "args.target_branch", "draft": "args.?draft"}},
	}; !reflect.DeepEqual(pr.Backends, want) || pr.New {
		t.Errorf("create_pull_request: new %v, backends %+v", pr.New, pr.Backends)
	}
	p := byName(t, got, "create_repository")
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
	again := byName(t, promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{}), "create_repository")
	if k := p.Key(); !strings.HasPrefix(k, "promote_provider:create_repository:") || k != again.Key() {
		t.Errorf("key %q is not stable", k)
	}
	// A skill that takes no part triggers nothing; a provider already
	// serving an executor is left out of its proposal.
	if got := promote.Detect(cat, skills(t), "other", promote.Serving{}); len(got) != 0 {
		t.Errorf("untriggered: %+v", got)
	}
	served := promote.Detect(cat, skills(t), "vcs/gl", promote.Serving{Providers: map[string][]string{"create_repository": {"github"}}})
	if s := byName(t, served, "create_repository"); len(s.Backends) != 1 || s.Backends[0].Provider != "gitlab" || !reflect.DeepEqual(s.Serving, []string{"github"}) {
		t.Errorf("served: %+v", served)
	}
}

// TestDetectSuffixed: provider-suffixed names of one server meet the
// plain name of another provider's.
func TestDetectSuffixed(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)
	ss := []promote.Skill{
		{Key: "hub", Servers: map[string]capability.RedactedServer{"hub": {Command: "hub-mcp"}}, Tools: []capability.Tool{
			{ExtensionID: "hub", CapabilityID: "search_tickets_github", InputSchema: schema},
			{ExtensionID: "hub", CapabilityID: "search_tickets_gitlab", InputSchema: schema},
		}},
	}
	got := promote.Detect(executor.Builtin(), ss, "hub", promote.Serving{})
	if len(got) != 1 || got[0].Executor.Name != "find_tickets" || len(got[0].Backends) != 2 || got[0].Backends[0].Tool != "search_tickets_github" ||
		got[0].Backends[1].Arguments["limit"] != "args.?limit" {
		t.Fatalf("%+v", got)
	}
}

// TestValidate: whoever drafted a proposal, code decides what holds.
func TestValidate(t *testing.T) {
	cat := executor.Builtin()
	ss := skills(t)
	p := byName(t, promote.Detect(cat, ss, "vcs/gl", promote.Serving{}), "create_repository")
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

// TestDetectAllUndrafted: a group whose tools' arguments the matcher
// cannot pair is returned for a model to draft, with why; the real
// servers' shared tools leave none.
func TestDetectAllUndrafted(t *testing.T) {
	if _, groups := promote.DetectAll(executor.Builtin(), skills(t), "vcs/gl", promote.Serving{}); len(groups) != 0 {
		t.Errorf("the real servers left %d groups undrafted: %+v", len(groups), groups)
	}
	ss := []promote.Skill{{Key: "hub", Servers: map[string]capability.RedactedServer{"hub": {Command: "hub-mcp"}}, Tools: []capability.Tool{
		{ExtensionID: "hub", CapabilityID: "find_widgets_github", InputSchema: json.RawMessage(`{"type":"object","properties":{"alpha":{"type":"string"}},"required":["alpha"]}`)},
		{ExtensionID: "hub", CapabilityID: "find_widgets_gitlab", InputSchema: json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"integer"}},"required":["zeta"]}`)},
	}}}
	_, groups := promote.DetectAll(executor.Builtin(), ss, "hub", promote.Serving{})
	if len(groups) != 1 || groups[0].Executor != "find_widgets" || groups[0].Known != nil || len(groups[0].Offers) != 2 ||
		groups[0].Why != "the tools have no argument in common with the same name and type" {
		t.Errorf("groups %+v", groups)
	}
}

// branchGroup is the real servers' create_branch as a group for a model
// to draft as a new executor, with a catalog that does not declare it.
func branchGroup(t *testing.T) (*executor.Catalog, promote.Group) {
	t.Helper()
	cat, err := executor.ParseCatalog("test.yaml", []byte("apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\nproviders:\n"+
		"  - {name: github, suffix: _github}\n  - {name: gitlab, suffix: _gitlab}\nexecutors: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := promote.Group{Executor: "create_branch", Why: "test"}
	for _, s := range skills(t) {
		for _, tl := range s.Tools {
			if tl.CapabilityID == "create_branch" {
				prov, _ := promote.ProviderOf(cat, tl.ExtensionID, s.Servers[tl.ExtensionID])
				g.Offers = append(g.Offers, promote.Offer{Provider: prov, Skill: s.Key, Server: tl.ExtensionID, Tool: tl})
			}
		}
	}
	return cat, g
}

// chat answers as a model would, with answer.
func chat(answer string) promote.Chat {
	return func(_ context.Context, system, user, name string, schema map[string]any) ([]byte, error) {
		if name != "promote_provider_mapping" || !strings.Contains(user, "Executor: create_branch") || !strings.Contains(system, "provider-neutral") {
			return nil, fmt.Errorf("unexpected question %q", user)
		}
		return []byte(answer), nil
	}
}

// TestLLMDraft: a model's draft is validated like any other: a backend
// naming a tool its skill lacks is removed, a bad expression removes its
// backend, a draft that is not the answer's schema is refused.
func TestLLMDraft(t *testing.T) {
	cat, g := branchGroup(t)
	ss := skills(t)
	answer := `{"description":"Create a branch in a repository, from another branch or its default one.",` +
		`"inputSchemaJSON":"{\"type\":\"object\",\"properties\":{\"repository\":{\"type\":\"string\"},\"branch\":{\"type\":\"string\"},\"from\":{\"type\":\"string\"}},\"required\":[\"repository\",\"branch\"],\"additionalProperties\":false}",` +
		`"backends":[` +
		`{"provider":"github","skill":"vcs/gh","server":"gh","tool":"create_branch","arguments":[{"name":"owner","expression":"args.repository.split(\"/\")[0]"},{"name":"repo","expression":"args.repository.split(\"/\")[1]"},{"name":"branch","expression":"args.branch"},{"name":"from_branch","expression":"args.?from"}]},` +
		`{"provider":"gitlab","skill":"vcs/gl","server":"gl","tool":"create_branch","arguments":[{"name":"project_id","expression":"args.repository"},{"name":"branch","expression":"args.branch"},{"name":"ref","expression":"args.?from"}]},` +
		`{"provider":"gitlab","skill":"vcs/gl","server":"gl","tool":"create_ref","arguments":[{"name":"id","expression":"args.repository"}]}]}`
	p, err := promote.LLM{Chat: chat(answer), Name: "llm:test-model"}.Draft(context.Background(), g)
	if err != nil {
		t.Fatal(err)
	}
	v, err := promote.Validate(cat, p, ss, promote.Serving{})
	if err != nil {
		t.Fatal(err)
	}
	if !v.New || v.Drafter != "llm:test-model" || len(v.Backends) != 2 || v.Backends[0].Arguments["repo"] != `args.repository.split("/")[1]` ||
		!reflect.DeepEqual(v.Removed, []string{"backend gitlab (vcs/gl: gl/create_ref): skill vcs/gl offers no such tool"}) {
		t.Fatalf("validated: %+v", v)
	}
	bad := strings.Replace(answer, `args.repository.split(\"/\")[1]`, `args.repo`, 1)
	p, _ = promote.LLM{Chat: chat(bad), Name: "llm:test-model"}.Draft(context.Background(), g)
	if _, err := promote.Validate(cat, p, ss, promote.Serving{}); err == nil || !strings.Contains(err.Error(), `executor create_branch has no argument "repo"`) {
		t.Errorf("a mapping naming an unknown argument: %v", err)
	}
	for _, junk := range []string{`{"description":"x"}x`, `{"description":"x","inputSchemaJSON":"{","backends":[]}`, `{"extra":1}`} {
		if _, err := (promote.LLM{Chat: chat(junk), Name: "m"}).Draft(context.Background(), g); !errors.Is(err, promote.ErrDraft) {
			t.Errorf("answer %s: %v", junk, err)
		}
	}
}

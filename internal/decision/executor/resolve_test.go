package executor_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
)

func TestResolve(t *testing.T) {
	ex := executor.Builtin().Lookup("create_issue")
	b := func(provider, skill string) *executor.Backend {
		return &executor.Backend{Provider: provider, Skill: skill, Executor: ex, Server: provider, Tool: "create_issue"}
	}
	gh, gl, gt := b("github", "acme/github"), b("gitlab", "acme/gitlab"), b("gitea", "acme/gitea")
	gl2 := b("gitlab", "zeta/gitlab")
	live := executor.Off{}
	disabled := executor.Off{Code: executor.OffSkillDisabled, Detail: "skill acme/gitlab is disabled"}
	nocred := executor.Off{Code: executor.OffCredential, Detail: "credential GITHUB_TOKEN missing for tenant acme"}
	// Fallback order: provider, then skill.
	all := func(offs ...executor.Off) []executor.Candidate {
		bs := []*executor.Backend{gt, gh, gl}
		c := make([]executor.Candidate, len(bs))
		for i := range bs {
			c[i] = executor.Candidate{Backend: bs[i], Off: offs[i]}
		}
		return c
	}
	tests := []struct {
		name  string
		cands []executor.Candidate
		pin   string
		prefs executor.Preferences
		want  string // provider/skill rule, or the error
	}{
		{"name order", all(live, live, live), "", executor.Preferences{}, "gitea acme/gitea name_order"},
		{"global preference", all(live, live, live), "", executor.Preferences{Global: []string{"github"}}, "github acme/github global_preference"},
		{"tenant before global", all(live, live, live), "", executor.Preferences{Tenant: []string{"gitlab"}, Global: []string{"github"}}, "gitlab acme/gitlab tenant_preference"},
		{"tenant preference off, global next", all(live, live, disabled), "", executor.Preferences{Tenant: []string{"gitlab"}, Global: []string{"github"}}, "github acme/github global_preference"},
		{"preferences off, name order", all(live, nocred, disabled), "", executor.Preferences{Tenant: []string{"gitlab"}, Global: []string{"github"}}, "gitea acme/gitea name_order"},
		{"preference for an unknown provider", all(live, live, live), "", executor.Preferences{Global: []string{"bitbucket", "gitlab"}}, "gitlab acme/gitlab global_preference"},
		{"pin beats preferences", all(live, live, live), "gitlab", executor.Preferences{Tenant: []string{"github"}}, "gitlab acme/gitlab pin"},
		{"pin to an off provider", all(live, nocred, live), "github", executor.Preferences{},
			"provider is off: provider github cannot serve create_issue: github (skill acme/github): credential GITHUB_TOKEN missing for tenant acme"},
		{"pin to an unknown provider", all(live, live, live), "bitbucket", executor.Preferences{},
			`unknown provider: create_issue has no backend for provider "bitbucket" (its providers: gitea, github, gitlab)`},
		{"pin: second skill of the provider serves", []executor.Candidate{{Backend: gl, Off: disabled}, {Backend: gl2, Off: live}}, "gitlab", executor.Preferences{}, "gitlab zeta/gitlab pin"},
		{"dormant", all(disabled, nocred, executor.Off{Code: executor.OffPolicy, Detail: "forbidden by policy no-gitlab (policies/tenant.cedar)"}), "", executor.Preferences{Global: []string{"github"}},
			"executor is dormant: create_issue has no live backend: gitea (skill acme/gitea): skill acme/gitlab is disabled; github (skill acme/github): credential GITHUB_TOKEN missing for tenant acme; gitlab (skill acme/gitlab): forbidden by policy no-gitlab (policies/tenant.cedar)"},
		{"no backend", nil, "", executor.Preferences{}, "executor is dormant: create_issue has no backend: no provider skill declares one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := executor.Resolve("create_issue", tc.cands, tc.pin, tc.prefs)
			var got string
			if err != nil {
				got = err.Error()
				if !errors.Is(err, executor.ErrDormant) && !errors.Is(err, executor.ErrProviderOff) && !errors.Is(err, executor.ErrUnknownProvider) {
					t.Fatalf("error %v wraps no sentinel", err)
				}
			} else {
				got = strings.Join([]string{r.Backend.Provider, r.Backend.Skill, string(r.Rule)}, " ")
			}
			if got != tc.want {
				t.Fatalf("Resolve:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestResolutionWhy(t *testing.T) {
	b := &executor.Backend{Provider: "gitlab", Skill: "acme/gitlab"}
	tests := []struct {
		r    executor.Resolution
		want string
	}{
		{executor.Resolution{Backend: b, Rule: executor.RulePin}, "provider gitlab pinned by the call (skill acme/gitlab)"},
		{executor.Resolution{Backend: b, Rule: executor.RuleTenant, Rank: 1}, "provider gitlab is choice 2 of the tenant's preference order (skill acme/gitlab)"},
		{executor.Resolution{Backend: b, Rule: executor.RuleGlobal}, "provider gitlab is choice 1 of the global preference order (skill acme/gitlab)"},
		{executor.Resolution{Backend: b, Rule: executor.RuleNameOrder}, "provider gitlab is the first live provider in name order (skill acme/gitlab)"},
	}
	for _, tc := range tests {
		if got := tc.r.Why(); got != tc.want {
			t.Errorf("Why() = %q, want %q", got, tc.want)
		}
	}
}

func TestIndexLiveAndStatus(t *testing.T) {
	gh := exampleBackends(t, "github", loadTools(t, githubTools, "github"))
	gl := exampleBackends(t, "gitlab", loadTools(t, gitlabTools, "gitlab"))
	// The four executors both servers serve since the first example.
	x := executor.NewIndex(slices.DeleteFunc(append(gl, gh...), func(b *executor.Backend) bool {
		return !slices.Contains([]string{"create_issue", "find_repositories", "read_file_contents", "write_file_contents"}, b.Executor.Name)
	}))
	offs := map[string]executor.Off{}
	facts := executor.FactsFunc(func(b *executor.Backend) executor.Off { return offs[b.Provider+" "+b.Executor.Name] })
	render := func() string {
		var s []string
		for _, l := range x.Live(facts) {
			s = append(s, l.Executor.Name+"="+strings.Join(l.Providers, ","))
		}
		return strings.Join(s, " ")
	}
	if got := render(); got != "create_issue=github,gitlab find_repositories=github,gitlab read_file_contents=github,gitlab write_file_contents=github,gitlab" {
		t.Fatalf("Live = %s", got)
	}
	off := executor.Off{Code: executor.OffSkillDisabled, Detail: "skill providers/gitlab is disabled"}
	offs["gitlab create_issue"] = off
	offs["gitlab find_repositories"] = off
	offs["github find_repositories"] = executor.Off{Code: executor.OffCredential, Detail: "credential GITHUB_TOKEN missing for tenant acme"}
	if got := render(); got != "create_issue=github read_file_contents=github,gitlab write_file_contents=github,gitlab" {
		t.Fatalf("Live = %s", got)
	}
	st := x.Status(executor.Builtin(), facts)
	// Every catalog executor is in the status; those without a backend
	// here are dormant.
	if len(st) != 11 || st[5].Name != "find_repositories" || !st[5].Dormant || st[5].Backends[0].Off.Detail != "credential GITHUB_TOKEN missing for tenant acme" || st[1].Dormant || !st[0].Dormant {
		t.Fatalf("Status = %+v", st)
	}
	r, err := x.Resolve(facts, "create_issue", "", executor.Preferences{Global: []string{"gitlab"}})
	if err != nil || r.Backend.Provider != "github" || r.Rule != executor.RuleNameOrder {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
	if _, err := x.Resolve(facts, "create_issue", "gitlab", executor.Preferences{}); err == nil ||
		err.Error() != "provider is off: provider gitlab cannot serve create_issue: gitlab (skill providers/gitlab): skill providers/gitlab is disabled" {
		t.Fatalf("Resolve pinned to gitlab: %v", err)
	}
}

func TestToolSchema(t *testing.T) {
	ex := executor.Builtin().Lookup("find_repositories")
	got := string(executor.ToolSchema(ex, []string{"github", "gitlab"}))
	want := `{"additionalProperties":false,"properties":{"page":{"description":"The result page, from 1.","minimum":1,"type":"integer"},"per_page":{"description":"Results per page, 1 to 100.","maximum":100,"minimum":1,"type":"integer"},"provider":{"description":"Run it on this provider only. Leave it out unless the user asked for a provider.","enum":["github","gitlab"],"type":"string"},"query":{"description":"The search text.","minLength":1,"type":"string"}},"required":["query"],"type":"object"}`
	if got != want {
		t.Fatalf("ToolSchema =\n%s\nwant\n%s", got, want)
	}
}

func TestEnvCredentials(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "x", "EMPTY": ""}
	check := executor.EnvCredentials(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if got := check(testPrincipal, []string{"GITHUB_TOKEN", "GITLAB_TOKEN", "EMPTY"}); strings.Join(got, ",") != "GITLAB_TOKEN,EMPTY" {
		t.Fatalf("missing = %v", got)
	}
}

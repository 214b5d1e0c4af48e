package broker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// providerSkill is the worked example's provider skill NAME
// (examples/providers/NAME: its backends.yaml verbatim) served by the
// recording test server with the real tools of the npm server it stands
// in for, every tool approved. Its server reads the credential TOKEN.
func providerSkill(t *testing.T, name, tools, token string) broker.Skill {
	t.Helper()
	exe, _ := os.Executable()
	toolsFile, err := filepath.Abs(filepath.Join("..", "..", "decision", "executor", "testdata", tools))
	if err != nil {
		t.Fatal(err)
	}
	decl := mcpclient.ServerDecl{ID: name, Transport: capability.TransportStdio, Command: exe, Env: map[string]string{
		testserver.EnvMode: testserver.ModeRecorder, testserver.EnvToolsFile: toolsFile, testserver.EnvName: name,
		testserver.EnvReportEnv: "TOKEN", "TOKEN": "${" + token + "}",
	}}
	rep, err := mcpclient.Introspect(context.Background(), decl, &mcpclient.Options{Limits: limits(), Credentials: func(string) (string, bool) { return "introspection", true }})
	if err != nil {
		t.Fatal(err)
	}
	key := "providers/" + name
	m := &manifest.Manifest{SkillID: key, Version: "sha256:" + name, Providers: []manifest.Provider{{ServerID: name}}}
	for _, c := range rep.Capabilities {
		risk := capability.Risk{
			RiskLevel: capability.RiskField[capability.RiskLevel]{Value: capability.RiskWrite, Source: capability.SourceOperator, Basis: "test"},
			// Internal and without egress, so that permit-all allows the
			// calls without a human's approval (the recorder sends nothing).
			SideEffects: capability.RiskField[capability.SideEffects]{Value: capability.SideEffectsInternal, Source: capability.SourceOperator, Basis: "test"},
			DataEgress:  capability.RiskField[capability.DataEgress]{Value: capability.EgressNone, Source: capability.SourceOperator, Basis: "test"},
		}
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: name, CapabilityID: c.CapabilityID, Risk: risk})
	}
	backends, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", name, executor.BackendsFileName))
	if err != nil {
		t.Fatal(err)
	}
	return broker.Skill{Key: key, Digest: "sha256:" + name, Servers: map[string]mcpclient.ServerDecl{name: decl},
		Pins: map[string]capability.PinSet{name: rep.Pins}, Manifest: m, Tier: 2, InvokableBy: []string{"T1", "T2", "T3"}, Backends: backends}
}

// routingEnv is a broker serving the GitHub and GitLab provider skills
// through the policy engine, with per-tenant credentials.
type routingEnv struct {
	b      *broker.Broker
	skills []broker.Skill // what Load returns; change and Reload
	mu     sync.Mutex
	creds  map[string]map[string]bool // tenant → credential names configured
	audit  *records
}

func newRoutingEnv(t *testing.T, cedar string, prefs broker.ExecutorPreferences) *routingEnv {
	t.Helper()
	return newTracedRoutingEnv(t, cedar, prefs, nil)
}

// newTracedRoutingEnv is newRoutingEnv with the broker's calls traced by
// tr (nil: tracing off).
func newTracedRoutingEnv(t *testing.T, cedar string, prefs broker.ExecutorPreferences, tr *telemetry.Tracer) *routingEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	env := &routingEnv{audit: &records{}, creds: map[string]map[string]bool{
		"acme": {"GITHUB_TOKEN": true, "GITLAB_TOKEN": true},
		"beta": {"GITHUB_TOKEN": true, "GITLAB_TOKEN": true},
	}}
	env.skills = []broker.Skill{
		providerSkill(t, "github", "server-github-2025.4.8.tools.json", "GITHUB_TOKEN"),
		providerSkill(t, "gitlab", "server-gitlab-2025.4.25.tools.json", "GITLAB_TOKEN"),
	}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits(), Credentials: func(name string) (string, bool) { return "token-of-" + name, true }})
	t.Cleanup(func() { pool.Close() })
	b, err := broker.New(broker.Options{
		Load: func(context.Context) ([]broker.Skill, error) {
			env.mu.Lock()
			defer env.mu.Unlock()
			return slices.Clone(env.skills), nil
		},
		Decider: broker.NewPolicyDecider(eng), Upstream: pool, Audit: env.audit, Tracer: tr,
		Executors: broker.ExecutorOptions{Preferences: prefs, Credentials: func(p capability.Principal, names []string) []string {
			env.mu.Lock()
			defer env.mu.Unlock()
			var missing []string
			for _, n := range names {
				if !env.creds[p.Tenant][n] {
					missing = append(missing, n)
				}
			}
			return missing
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env.b = b
	env.reload(t)
	return env
}

func (e *routingEnv) reload(t *testing.T) {
	t.Helper()
	if err := e.b.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := e.b.ExecutorProblems(); len(p) > 0 {
		t.Fatalf("backends refused: %v", p)
	}
}

// only keeps the skills named (as disabling the others would).
func (e *routingEnv) only(t *testing.T, all []broker.Skill, keys ...string) {
	e.mu.Lock()
	e.skills = nil
	for _, s := range all {
		if slices.Contains(keys, s.Key) {
			e.skills = append(e.skills, s)
		}
	}
	e.mu.Unlock()
	e.reload(t)
}

// createIssue lists what p sees of create_issue ("" when it is absent,
// else the provider enum) and calls it with args.
func (e *routingEnv) createIssue(t *testing.T, p capability.Principal, args string) (listed string, server string, errText string) {
	t.Helper()
	tools, err := e.b.Tools(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == "create_issue" && tl.InputSchema != nil {
			var s struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			}
			raw, _ := json.Marshal(tl.InputSchema)
			_ = json.Unmarshal(raw, &s)
			listed = strings.Join(s.Properties["provider"].Enum, ",")
		}
		if strings.HasSuffix(tl.Name, "create_issue") && tl.Name != "create_issue" {
			t.Fatalf("a raw tool is listed: %s", tl.Name)
		}
	}
	res, err := call(e.b, context.Background(), capability.Caller{Principal: p, SessionID: "s1"}, "create_issue", json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	// The record of a call the server answered is queued once its result
	// is passed on: wait for it, so the caller sees this call's record.
	if err := e.b.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return listed, "", text
	}
	var rec testserver.Recording
	if err := json.Unmarshal([]byte(text), &rec); err != nil {
		t.Fatal(err)
	}
	return listed, rec.Server + " " + rec.Tool + " " + string(rec.Arguments) + " " + rec.Env["TOKEN"], ""
}

const (
	permitAll   = "@id(\"permit-all\")\npermit (principal, action, resource);\n"
	issueArgs   = `{"repository":"acme/api","title":"Crash on start","labels":["bug"]}`
	githubIssue = `github create_issue {"labels":["bug"],"owner":"acme","repo":"api","title":"Crash on start"} token-of-GITHUB_TOKEN`
	gitlabIssue = `gitlab create_issue {"labels":["bug"],"project_id":"acme/api","title":"Crash on start"} token-of-GITLAB_TOKEN`
)

// TestExecutorRouting: one create_issue whatever backends exist, routed
// per call by the resolver; the name never changes as backends come and
// go.
func TestExecutorRouting(t *testing.T) {
	acme := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
	beta := capability.Principal{Tenant: "beta", Agent: "b1", Tier: "T2"}
	prefs := broker.ExecutorPreferences{Global: []string{"github"}, Tenants: map[string][]string{"acme": {"gitlab"}}}
	env := newRoutingEnv(t, permitAll, prefs)
	all := slices.Clone(env.skills)
	pinned := func(provider string) string {
		return strings.TrimSuffix(issueArgs, "}") + `,"provider":"` + provider + `"}`
	}
	type step struct {
		name    string
		setup   func()
		who     capability.Principal
		args    string
		listed  string // the provider enum; "" when create_issue is not listed
		server  string // the recording; "" when refused
		errText string
	}
	steps := []step{
		{name: "global preference", who: beta, args: issueArgs, listed: "github,gitlab", server: githubIssue},
		{name: "tenant preference", who: acme, args: issueArgs, listed: "github,gitlab", server: gitlabIssue},
		{name: "explicit pin beats the tenant's preference", who: acme, args: pinned("github"), listed: "github,gitlab", server: githubIssue},
		{name: "pin to an unknown provider", who: acme, args: pinned("gitea"), listed: "github,gitlab",
			errText: `skillgate: create_issue cannot run as asked: unknown provider: create_issue has no backend for provider "gitea" (its providers: github, gitlab)`},
		{name: "pin to a provider whose credential is missing for the tenant",
			setup: func() { env.mu.Lock(); delete(env.creds["acme"], "GITLAB_TOKEN"); env.mu.Unlock() },
			who:   acme, args: pinned("gitlab"), listed: "github",
			errText: `skillgate: create_issue cannot run as asked: provider is off: provider gitlab cannot serve create_issue: gitlab (skill providers/gitlab): credential GITLAB_TOKEN missing for tenant acme`},
		{name: "the tenant's preferred provider off: the next serves", who: acme, args: issueArgs, listed: "github", server: githubIssue},
		{name: "the other tenant keeps both", who: beta, args: pinned("gitlab"), listed: "github,gitlab", server: gitlabIssue},
		{name: "credential added for the tenant: it wakes",
			setup: func() { env.mu.Lock(); env.creds["acme"]["GITLAB_TOKEN"] = true; env.mu.Unlock() },
			who:   acme, args: issueArgs, listed: "github,gitlab", server: gitlabIssue},
		{name: "disable gitlab: github serves under the same name",
			setup: func() { env.only(t, all, "providers/github") },
			who:   acme, args: issueArgs, listed: "github", server: githubIssue},
		{name: "pin to the disabled provider", who: acme, args: pinned("gitlab"), listed: "github",
			errText: `skillgate: create_issue cannot run as asked: unknown provider: create_issue has no backend for provider "gitlab" (its providers: github)`},
		{name: "disable both: dormant, not listed",
			setup: func() { env.only(t, all) },
			who:   acme, args: issueArgs, listed: "",
			errText: `skillgate: unknown tool "create_issue": it is not among the capabilities you may call`},
		{name: "enable both again", setup: func() { env.only(t, all, "providers/github", "providers/gitlab") },
			who: beta, args: issueArgs, listed: "github,gitlab", server: githubIssue},
		{name: "invalid canonical arguments", who: beta, args: `{"repository":"acme","title":"x"}`, listed: "github,gitlab",
			errText: "skillgate: invalid arguments for create_issue: jsonschema validation failed with 'skillgate:executor-schema.json#' - at '/repository': 'acme' does not match pattern '^[^/\\\\s]+(/[^/\\\\s]+)+$'"},
		{name: "provider not a string", who: beta, args: `{"repository":"acme/api","title":"x","provider":1}`, listed: "github,gitlab",
			errText: "skillgate: invalid arguments for create_issue: provider must be the name of a provider, like github"},
	}
	for _, s := range steps {
		if s.setup != nil {
			s.setup()
		}
		listed, server, errText := env.createIssue(t, s.who, s.args)
		if listed != s.listed || server != s.server || errText != s.errText {
			t.Errorf("%s:\n got listed %q, server %q, error %q\nwant listed %q, server %q, error %q", s.name, listed, server, errText, s.listed, s.server, s.errText)
		}
	}
	// The audit record of the last allowed call names the executor, the
	// backend, the provider, why, and the mapped arguments' hash.
	_, _, _ = env.createIssue(t, beta, pinned("gitlab"))
	rec := env.audit.last()
	var data map[string]any
	if err := json.Unmarshal(rec.Data, &data); err != nil {
		t.Fatal(err)
	}
	mapped, _ := audit.HashArgs(json.RawMessage(`{"labels":["bug"],"project_id":"acme/api","title":"Crash on start"}`))
	if rec.Subject != "providers/gitlab:gitlab/create_issue" || rec.Decision != capability.Allow || data["executor"] != "create_issue" ||
		data["provider"] != "gitlab" || data["backend"] != "providers/gitlab:gitlab/create_issue" || data["pin"] != "gitlab" ||
		data["resolution"] != "provider gitlab pinned by the call (skill providers/gitlab)" || data["mappedArgsHash"] != mapped {
		t.Fatalf("audit record %+v, data %s", rec, rec.Data)
	}
}

// TestExecutorPolicyForbidsProvider: a policy forbidding a provider's
// skill for one tenant, written without executor names, takes the
// provider out of that tenant's routing and listing.
func TestExecutorPolicyForbidsProvider(t *testing.T) {
	cedar := permitAll + "\n@id(\"no-gitlab-for-acme\")\nforbid (principal, action, resource) when { resource.skill == \"providers/gitlab\" && principal.tenant == \"acme\" };\n"
	env := newRoutingEnv(t, cedar, broker.ExecutorPreferences{Global: []string{"gitlab"}})
	acme := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
	beta := capability.Principal{Tenant: "beta", Agent: "b1", Tier: "T2"}
	tests := []struct {
		who                     capability.Principal
		args                    string
		listed, server, errText string
	}{
		{acme, issueArgs, "github", githubIssue, ""},
		{acme, strings.TrimSuffix(issueArgs, "}") + `,"provider":"gitlab"}`, "github", "",
			"skillgate: create_issue cannot run as asked: provider is off: provider gitlab cannot serve create_issue: gitlab (skill providers/gitlab): capability providers/gitlab:gitlab/create_issue is forbidden for acme/a1 by policy"},
		{beta, issueArgs, "github,gitlab", gitlabIssue, ""},
	}
	for i, tc := range tests {
		listed, server, errText := env.createIssue(t, tc.who, tc.args)
		if listed != tc.listed || server != tc.server || errText != tc.errText {
			t.Errorf("case %d:\n got listed %q, server %q, error %q\nwant listed %q, server %q, error %q", i, listed, server, errText, tc.listed, tc.server, tc.errText)
		}
	}
	// The status names why each backend is off.
	st := env.b.ExecutorStatus(acme)
	var got []string
	for _, e := range st {
		for _, bk := range e.Backends {
			why := "live"
			if bk.Off != nil {
				why = string(bk.Off.Code) + ": " + bk.Off.Detail
			}
			got = append(got, e.Name+" "+bk.Provider+" "+why)
		}
	}
	want := []string{
		"create_branch github live", "create_branch gitlab forbidden: capability providers/gitlab:gitlab/create_branch is forbidden for acme/a1 by policy",
		"create_issue github live", "create_issue gitlab forbidden: capability providers/gitlab:gitlab/create_issue is forbidden for acme/a1 by policy",
		"create_pull_request github live", "create_pull_request gitlab forbidden: capability providers/gitlab:gitlab/create_merge_request is forbidden for acme/a1 by policy",
		"find_issues github live", "find_pull_requests github live",
		"find_repositories github live", "find_repositories gitlab forbidden: capability providers/gitlab:gitlab/search_repositories is forbidden for acme/a1 by policy",
		"read_file_contents github live", "read_file_contents gitlab forbidden: capability providers/gitlab:gitlab/get_file_contents is forbidden for acme/a1 by policy",
		"read_issue github live", "read_pull_request github live", "update_issue github live",
		"write_file_contents github live", "write_file_contents gitlab forbidden: capability providers/gitlab:gitlab/create_or_update_file is forbidden for acme/a1 by policy",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("status:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExecutorNameInPolicy: Cedar sees the executor a call was routed
// from as context.executor, beside the backend capability as the
// resource: a policy can forbid one executor on one provider.
func TestExecutorNameInPolicy(t *testing.T) {
	cedar := permitAll + "\n@id(\"no-issues-on-gitlab\")\nforbid (principal, action, resource) when { context has executor && context.executor == \"create_issue\" && resource.skill == \"providers/gitlab\" };\n"
	env := newRoutingEnv(t, cedar, broker.ExecutorPreferences{Global: []string{"gitlab"}})
	p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
	// Listed with both providers: the policy reads the call's context.
	listed, server, errText := env.createIssue(t, p, issueArgs)
	if listed != "github,gitlab" || server != "" || errText != "skillgate: call to create_issue denied: forbidden by no-issues-on-gitlab [policy no-issues-on-gitlab]." {
		t.Fatalf("create_issue: listed %q, server %q, error %q", listed, server, errText)
	}
	if _, server, errText = env.createIssue(t, p, strings.TrimSuffix(issueArgs, "}")+`,"provider":"github"}`); server != githubIssue {
		t.Fatalf("pinned to github: %q %q", server, errText)
	}
	if rec := env.audit.last(); rec.Decision != capability.Allow || rec.Subject != "providers/github:github/create_issue" {
		t.Fatalf("last record %+v", rec)
	}
}

// TestExecutorNumbersAndOptionals: numbers keep their JSON form through
// the mapping, and an optional argument left out is left out of the
// tool's arguments.
func TestExecutorNumbersAndOptionals(t *testing.T) {
	env := newRoutingEnv(t, permitAll, broker.ExecutorPreferences{})
	p := capability.Caller{Principal: capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}, SessionID: "s1"}
	tests := []struct{ tool, args, want string }{
		{"find_repositories", `{"query":"skillgate","per_page":5,"provider":"github"}`, `github search_repositories {"perPage":5,"query":"skillgate"}`},
		{"find_repositories", `{"query":"skillgate","page":2,"provider":"gitlab"}`, `gitlab search_repositories {"page":2,"search":"skillgate"}`},
		{"read_file_contents", `{"repository":"acme/api","path":"README.md"}`, `github get_file_contents {"owner":"acme","path":"README.md","repo":"api"}`},
		{"write_file_contents", `{"repository":"g/sub/api","path":"a.txt","content":"hi\n","message":"add a","branch":"main","provider":"gitlab"}`,
			`gitlab create_or_update_file {"branch":"main","commit_message":"add a","content":"hi\n","file_path":"a.txt","project_id":"g/sub/api"}`},
		{"find_repositories", `{"query":"x","per_page":500}`, `error: skillgate: invalid arguments for find_repositories: jsonschema validation failed with 'skillgate:executor-schema.json#' - at '/per_page': maximum: got 500, want 100`},
	}
	for _, tc := range tests {
		res, err := call(env.b, context.Background(), p, tc.tool, json.RawMessage(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		got := "error: " + text
		if !res.IsError {
			var rec testserver.Recording
			if err := json.Unmarshal([]byte(text), &rec); err != nil {
				t.Fatal(err)
			}
			got = rec.Server + " " + rec.Tool + " " + string(rec.Arguments)
		}
		if got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, got, tc.want)
		}
	}
}

// TestExecutorDormantPerTenant: with no credential configured for a
// tenant, its executors are dormant (not listed, unknown when called)
// while another tenant's stay live; adding the credential for that tenant
// only wakes them for it.
func TestExecutorDormantPerTenant(t *testing.T) {
	env := newRoutingEnv(t, permitAll, broker.ExecutorPreferences{})
	acme := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
	beta := capability.Principal{Tenant: "beta", Agent: "b1", Tier: "T2"}
	env.mu.Lock()
	env.creds["beta"] = map[string]bool{}
	env.mu.Unlock()
	if listed, _, errText := env.createIssue(t, beta, issueArgs); listed != "" || errText != `skillgate: unknown tool "create_issue": it is not among the capabilities you may call` {
		t.Fatalf("beta without credentials: listed %q, %q", listed, errText)
	}
	if listed, server, _ := env.createIssue(t, acme, issueArgs); listed != "github,gitlab" || server != githubIssue {
		t.Fatalf("acme: listed %q, %q", listed, server)
	}
	env.mu.Lock()
	env.creds["beta"]["GITLAB_TOKEN"] = true
	env.mu.Unlock()
	if listed, server, _ := env.createIssue(t, beta, issueArgs); listed != "gitlab" || server != gitlabIssue {
		t.Fatalf("beta with GITLAB_TOKEN: listed %q, %q", listed, server)
	}
}

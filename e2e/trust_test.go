package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentEnv connects an MCP client to `skillgate mcp` as acme/drafter@T3
// with env added to skillgate's environment (credentials).
func (f *fixture) agentEnv(t *testing.T, env ...string) *mcp.ClientSession {
	t.Helper()
	return f.agentOf(t, "acme", env...)
}

// agentOf is agentEnv for drafter@T3 of tenant.
func (f *fixture) agentOf(t *testing.T, tenant string, env ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, "--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", tenant)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// shippedSkill writes a first_party skill under root: SKILL.md, an
// mcp.json declaring the recording server standing in for provider (its
// token from the credential token), the server's tools and the shipped
// manifest.json approved for approvedTrust, naming its tool toolName
// (when not empty).
func shippedSkill(t *testing.T, root, provider, token, approvedTrust, toolName string) {
	t.Helper()
	dir := filepath.Join(root, provider)
	os.MkdirAll(dir, 0o755)
	md := "---\nname: " + provider + "\ndescription: Issues on " + provider + ", shipped with skillgate.\n---\nFile issues.\n"
	named := ""
	if toolName != "" {
		named = `"toolName":"` + toolName + `",`
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{provider: map[string]any{"command": testServer(t),
		"env": map[string]string{"SKILLGATE_TESTSERVER": "recorder", "SKILLGATE_TESTSERVER_TOOLS_FILE": "tools.json",
			"SKILLGATE_TESTSERVER_NAME": provider, "SKILLGATE_TESTSERVER_REPORT_ENV": token, token: "${" + token + "}"}}}})
	man := `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"` + provider + `","version":"sha256:` + strings.Repeat("0", 64) + `",` +
		`"providers":[{"type":"mcp","serverId":"` + provider + `"}],` +
		`"capabilities":[{"extensionId":"` + provider + `","capabilityId":"create_issue",` + named + `"description":"Create an issue on ` + provider + `.",` +
		`"inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},` +
		`"risk":{"riskLevel":{"value":"write","source":"operator"},"sideEffects":{"value":"internal","source":"operator"},"dataEgress":{"value":"none","source":"operator"}}}],` +
		`"approval":{"by":"skillgate release 1.0","at":"2026-01-01T00:00:00Z","trust":"` + approvedTrust + `"}}`
	for name, content := range map[string]string{"SKILL.md": md, "mcp.json": string(cfg), "tools.json": createIssueTools, "manifest.json": man} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTrustTiersOverMCP is issue 14's trust tiers, end to end: a skill of
// a first_party root activates without an approval, from its shipped
// manifest, and is dormant until its credential is configured; an imported
// skill's approval gives its clashing tool another name; catalogs show
// each skill's trust; and the live policy engine gets the real trust, so a
// Cedar policy on resource.trust decides differently for the two
// capabilities, which differ in nothing else, and a first_party skill
// whose manifest was approved as imported is refused for trust_mismatch.
func TestTrustTiersOverMCP(t *testing.T) {
	f := emptyFixture(t)
	shipped := filepath.Join(t.TempDir(), "shipped")
	shippedSkill(t, shipped, "github", "GITHUB_TOKEN", "first_party", "")
	shippedSkill(t, shipped, "jira", "JIRA_TOKEN", "imported", "jira_create_issue")
	// Skills of a first_party root are signed by a key trusted for them.
	keys := t.TempDir()
	f.run(t, "key", "gen", "release", "--dir", keys)
	for _, n := range []string{"github", "jira"} {
		f.run(t, "sign", filepath.Join(shipped, n), "--key", filepath.Join(keys, "release.key"))
	}
	signing := "signing:\n  keys:\n    - name: release\n      public_key: " + filepath.Join(keys, "release.pub") + "\n      trust: [first_party]\n"
	f.writeConfig(t, "roots:\n  - path: "+shipped+"\n    trust: first_party\n"+signing+"credentials:\n  from_environment: [GITHUB_TOKEN, JIRA_TOKEN]\n")
	f.run(t, "scan")
	if code, out, errs := f.runCode(t, nil, "install", recorderSkill(t, "gitlab", createIssueTools)); code != 0 {
		t.Fatalf("install gitlab: %d %s %s", code, out, errs)
	}
	f.run(t, "approve", "gitlab")
	f.run(t, "enable", "gitlab")
	if review := f.run(t, "review", "gitlab"); !strings.Contains(review, "      agents see it as gitlab__create_issue: create_issue is taken by github (first_party)\n") {
		t.Errorf("review gitlab:\n%s", review)
	}
	want := "NAME    TIER  INVOKABLE BY  SCOPE     TRUST        STATE    DESCRIPTION\n" +
		"github  2     T0,T1,T2,T3   project   first_party  enabled  Issues on github, shipped with skillgate.\n" +
		"gitlab  2     T0,T1,T2,T3   imported  imported     enabled  Issues on gitlab.\n" +
		"jira    2     T0,T1,T2,T3   project   first_party  enabled  Issues on jira, shipped with skillgate.\n"
	if out := f.run(t, "ls"); out != want {
		t.Errorf("ls:\n%s\nwant:\n%s", out, want)
	}

	issueTools := func(cs *mcp.ClientSession) []string {
		var out []string
		for _, n := range toolNames(t, cs) {
			if strings.Contains(n, "create_issue") {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	// Without their credentials the first_party skills are dormant.
	if got := issueTools(f.agentEnv(t, "GITHUB_TOKEN=", "JIRA_TOKEN=")); !slices.Equal(got, []string{"gitlab__create_issue"}) {
		t.Fatalf("without credentials: %v", got)
	}
	if got := issueTools(f.agentEnv(t, "GITHUB_TOKEN=tok-gh", "JIRA_TOKEN=")); !slices.Equal(got, []string{"create_issue", "gitlab__create_issue"}) {
		t.Fatalf("with github's credential: %v", got)
	}
	// A credential in the store wakes the skill for its tenant only.
	var seen syncbuf.Buffer
	if code, _ := f.credentialRun(t, &seen, "tok-acme\n", nil, "credential", "set", "GITHUB_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatal("credential set failed")
	}
	if got := issueTools(f.agentOf(t, "acme", "GITHUB_TOKEN=", "JIRA_TOKEN=")); !slices.Equal(got, []string{"create_issue", "gitlab__create_issue"}) {
		t.Fatalf("acme, with its stored credential: %v", got)
	}
	if got := issueTools(f.agentOf(t, "globex", "GITHUB_TOKEN=", "JIRA_TOKEN=")); !slices.Equal(got, []string{"gitlab__create_issue"}) {
		t.Fatalf("globex, without one: %v", got)
	}
	if got, isErr := caller(f.agentOf(t, "acme", "GITHUB_TOKEN=", "JIRA_TOKEN="))(t, "create_issue", map[string]any{"title": "Bug"}); isErr ||
		!strings.Contains(got, `"env":{"GITHUB_TOKEN":"tok-acme"}`) {
		t.Fatalf("acme's call: %v %s", isErr, got)
	}
	if code, _ := f.credentialRun(t, &seen, "", nil, "credential", "rm", "GITHUB_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatal("credential rm failed")
	}

	// jira's manifest was approved as imported: served as first_party, it
	// is out of every scope (trust_mismatch) until approved again.
	if got := issueTools(f.agentEnv(t, "GITHUB_TOKEN=tok-gh", "JIRA_TOKEN=tok-jira")); !slices.Equal(got, []string{"create_issue", "gitlab__create_issue"}) {
		t.Fatalf("with both credentials: %v", got)
	}

	// A policy on trust: the imported capability, which differs from
	// github's in nothing else, leaves the agent's scope.
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	policy := `@id("permit-all")
permit (principal, action == Action::"invoke", resource);

@id("imported-read-only")
forbid (principal, action == Action::"invoke", resource) when { resource.trust == "imported" && resource.riskLevel != "read" };
`
	if err := os.WriteFile(filepath.Join(f.data, "policies", "trust.cedar"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "policy", "check")
	for capID, want := range map[string]string{"github:github/create_issue": "→ allow", "gitlab:gitlab/create_issue": "→ deny",
		"jira:jira/create_issue": `skill "jira" is served as first_party but its manifest was approved as imported; approve it again for its new trust`} {
		_, out, _ := f.runCode(t, []string{"GITHUB_TOKEN=tok-gh", "JIRA_TOKEN=tok-jira"}, "policy", "test", "--principal", `Agent::"acme/drafter"`, "--tier", "T3",
			"--capability", capID, "--args", `{"title": "Bug"}`)
		if !strings.Contains(out, want) {
			t.Errorf("policy test %s: %s; want %s", capID, out, want)
		}
	}
	cs := f.agentEnv(t, "GITHUB_TOKEN=tok-gh", "JIRA_TOKEN=tok-jira")
	if got := issueTools(cs); !slices.Equal(got, []string{"create_issue"}) {
		t.Fatalf("under the trust policy: %v", got)
	}
	if got, isErr := caller(cs)(t, "create_issue", map[string]any{"title": "Bug"}); isErr || !strings.Contains(got, `"server":"github"`) ||
		!strings.Contains(got, `"env":{"GITHUB_TOKEN":"tok-gh"}`) {
		t.Errorf("create_issue: (error=%v) %s", isErr, got)
	}
	// Tools out of scope do not exist for the agent.
	for _, tool := range []string{"gitlab__create_issue", "jira_create_issue"} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"title": "Bug"}})
		if err == nil || !strings.Contains(err.Error(), `unknown tool "`+tool+`"`) {
			t.Errorf("%s: %v; want unknown tool", tool, err)
		}
	}

	// A policy on trust that depends on the call's arguments keeps both in
	// scope and decides at the call: the same arguments are allowed for
	// the first_party capability, denied for the imported one.
	policy = `@id("permit-all")
permit (principal, action == Action::"invoke", resource);

@id("no-imported-issue-titles")
forbid (principal, action == Action::"invoke", resource) when { resource.trust == "imported" && context.args has title };
`
	if err := os.WriteFile(filepath.Join(f.data, "policies", "trust.cedar"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "policy", "check")
	cs = f.agentEnv(t, "GITHUB_TOKEN=tok-gh", "JIRA_TOKEN=tok-jira")
	if got := issueTools(cs); !slices.Equal(got, []string{"create_issue", "gitlab__create_issue"}) {
		t.Fatalf("under the argument policy: %v", got)
	}
	calls := []struct {
		tool    string
		isError bool
		want    string
	}{
		{"create_issue", false, `"server":"github"`},
		{"gitlab__create_issue", true, "skillgate: call to gitlab__create_issue denied: forbidden by no-imported-issue-titles"},
	}
	for _, c := range calls {
		got, isErr := caller(cs)(t, c.tool, map[string]any{"title": "Bug"})
		if isErr != c.isError || !strings.Contains(got, c.want) {
			t.Errorf("%s: (error=%v) %s\nwant (error=%v) containing %s", c.tool, isErr, got, c.isError, c.want)
		}
	}

	// skill_list and the disclosure show each skill's trust.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_list", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Skills []struct{ Name, Source, Trust string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &list)
	wantList := []struct{ Name, Source, Trust string }{{"github", "project", "first_party"}, {"gitlab", "imported", "imported"}, {"jira", "project", "first_party"}}
	if !slices.Equal(list.Skills, wantList) {
		t.Errorf("skill_list: %s", b)
	}
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "skills"})
	if err != nil {
		t.Fatal(err)
	}
	text := p.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, "<location>\ngithub\n</location>\n<trust>\nfirst_party\n</trust>\n</skill>") ||
		!strings.Contains(text, "<location>\ngitlab\n</location>\n</skill>") {
		t.Errorf("disclosure:\n%s", text)
	}
}

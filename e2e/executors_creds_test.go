package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExecutorWakesPerTenant is issue 14's "add the missing credential for
// one tenant only": GitLab's backends need GITLAB_TOKEN, which nobody has;
// once an operator stores it for tenant acme, acme's create_issue offers
// gitlab and reaches a server started with acme's token, while globex's
// stays on GitHub alone. Both agents are connected over HTTP throughout.
func TestExecutorWakesPerTenant(t *testing.T) {
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-secret")
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN, GITLAB_TOKEN]\n")
	for _, p := range []struct{ name, tools, token string }{
		{"github", "server-github-2025.4.8.tools.json", "GITHUB_TOKEN"},
		{"gitlab", "server-gitlab-2025.4.25.tools.json", "GITLAB_TOKEN"},
	} {
		src := providerSkill(t, p.name, p.tools, p.token)
		// Introspection needs the token once; the server then runs
		// without it until a tenant has one.
		f.runCode(t, []string{p.token + "=introspection-only"}, "install", src, "--credential", p.token)
		f.approveTools(t, p.name, []string{"create_issue", "get_file_contents", "search_repositories", "create_or_update_file"},
			"internal", "none", "the recording test server only answers")
	}
	srv := f.serve(t)
	type agent struct {
		cs      *mcp.ClientSession
		changed chan struct{}
	}
	connect := func(tenant string) agent {
		t.Helper()
		changed := make(chan struct{}, 8)
		cs := srv.connectBearer(t, f.tokenSecret(t, "a1", "T3", tenant), &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		return agent{cs, changed}
	}
	providers := func(a agent) string {
		t.Helper()
		if e := providerEnum(t, a.cs); e != "" {
			return e
		}
		return "(no create_issue)"
	}
	acme, globex := connect("acme"), connect("globex")
	if a, g := providers(acme), providers(globex); a != "github" || g != "github" {
		t.Fatalf("before the credential: acme %q, globex %q", a, g)
	}
	var seen syncbuf.Buffer
	if code, out := f.credentialRun(t, &seen, "gl-acme\n", nil, "credential", "set", "GITLAB_TOKEN", "--tenant", "acme"); code != 0 {
		t.Fatalf("credential set: %d %s", code, out)
	}
	waitFor(t, acme.changed, "tools/list_changed for acme after its GitLab credential was set")
	if a, g := providers(acme), providers(globex); a != "github,gitlab" || g != "github" {
		t.Fatalf("after acme's credential: acme %q, globex %q", a, g)
	}
	res, err := acme.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_issue",
		Arguments: map[string]any{"repository": "acme/api", "title": "Crash", "provider": "gitlab"}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), `"TOKEN":"gl-acme"`) {
		t.Fatalf("acme's call through gitlab: %v %s", err, textOf(res))
	}
	res, err = globex.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_issue",
		Arguments: map[string]any{"repository": "globex/api", "title": "Crash", "provider": "gitlab"}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "gitlab") {
		t.Fatalf("globex's call pinned to gitlab: %v %s", err, textOf(res))
	}
}

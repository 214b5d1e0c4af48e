package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
)

// TestSubAgentTokensHTTP is issue 32's item 10: a bearer token can carry a
// parent and forwarded capabilities, as 'mcp --parent --forward' does over
// stdio. Over real HTTP with the go-sdk client, a sub-agent sees exactly
// what was forwarded within its parent's scope (a forward its parent may
// not use is dropped), a sub-agent of a sub-agent is narrowed by both, a
// token cannot rank a sub-agent above its parent or name a parent without
// a token, and removing the parent's token stops the sub-agent.
func TestSubAgentTokensHTTP(t *testing.T) {
	f := emptyFixture(t)
	const tools = "tools.json"
	src := writeImport(t, "tracker", "---\nTrack issues with `list_issues`, `create_issue` and `delete_issue`.\n", map[string]any{
		"gh": map[string]any{"command": testServer(t), "env": map[string]string{
			testserver.EnvMode: testserver.ModeRecorder, testserver.EnvToolsFile: tools, testserver.EnvName: "tracker",
		}},
	})
	schema := `"inputSchema":{"type":"object","properties":{"title":{"type":"string"}}}`
	if err := os.WriteFile(filepath.Join(src, tools), []byte(`{"tools":[`+
		`{"name":"list_issues","description":"List issues.",`+schema+`},`+
		`{"name":"create_issue","description":"Create an issue.",`+schema+`},`+
		`{"name":"delete_issue","description":"Delete an issue.",`+schema+`}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.runCode(t, nil, "install", src) // exits 1 until the tools are completed
	for _, tool := range []string{"list_issues", "create_issue", "delete_issue"} {
		f.run(t, "complete", "tracker", "gh/"+tool, "--risk", "write", "--side-effects", "internal", "--egress", "none", "--why", "a recording stand-in for an issue tracker")
	}
	f.run(t, "approve", "tracker")
	f.run(t, "enable", "tracker")
	// Everyone may use everything, except that the parent may not delete.
	os.MkdirAll(filepath.Join(f.data, "policies"), 0o755)
	if err := os.WriteFile(filepath.Join(f.data, "policies", "all.cedar"), []byte(`@id("all")
permit (principal, action == Action::"invoke", resource);

@id("drafter-never-deletes")
forbid (principal == Agent::"acme/drafter", action, resource == Capability::"tracker:gh/delete_issue");
`), 0o644); err != nil {
		t.Fatal(err)
	}
	add := func(args ...string) (int, string, string) {
		t.Helper()
		return f.runCode(t, nil, append([]string{"token", "add", "--tenant", "acme", "--json"}, args...)...)
	}
	secret := func(args ...string) (string, string) {
		t.Helper()
		code, out, errs := add(args...)
		if code != 0 {
			t.Fatalf("token add %v: exit %d: %s", args, code, errs)
		}
		var tok struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		}
		if err := json.Unmarshal([]byte(out), &tok); err != nil {
			t.Fatal(err)
		}
		return tok.Secret, tok.ID
	}
	drafter, drafterID := secret("--agent", "drafter", "--tier", "T3")
	scout, _ := secret("--agent", "scout", "--tier", "T3", "--parent", "acme/drafter", "--forward", "gh/list_issues,gh/delete_issue")
	deputy, _ := secret("--agent", "deputy", "--tier", "T3", "--parent", "acme/scout", "--forward", "gh/list_issues,gh/create_issue")

	// A token cannot widen a scope: no sub-agent above its parent, none of
	// a parent without a token, no second delegation for one principal.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "boss", "--tier", "T1", "--parent", "acme/drafter"}, "invalid delegation: acme/boss at T1 would rank above its parent acme/drafter at T3; give the sub-agent T3 or lower"},
		{[]string{"--agent", "stray", "--tier", "T3", "--parent", "acme/nobody"}, "invalid delegation: parent acme/nobody has no token"},
		{[]string{"--agent", "scout", "--tier", "T3"}, "invalid delegation: acme/scout already has token"},
		{[]string{"--agent", "loner", "--tier", "T3", "--forward", "gh/list_issues"}, "invalid delegation: forwarded capabilities need a parent"},
		{[]string{"--agent", "abroad", "--tier", "T3", "--parent", "globex/drafter"}, "invalid delegation: parent globex/drafter is of tenant globex, not acme"},
	} {
		code, _, errs := add(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("token add %v: exit %d %q, want 2 and %q", tc.args, code, errs, tc.want)
		}
	}

	srv := startServe(t, []string{"--data", f.data, "serve", "--addr", "127.0.0.1:0"}, func(line string) { t.Log("skillgate serve: " + line) })
	connect := func(secret string) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: srv.url + "/mcp", HTTPClient: &http.Client{Transport: bearer{secret, http.DefaultTransport}},
		}, nil)
	}
	capTools := func(cs *mcp.ClientSession) []string {
		t.Helper()
		var out []string
		for _, n := range toolNames(t, cs) {
			if strings.HasSuffix(n, "_issue") || strings.HasSuffix(n, "_issues") {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	sessions := map[string]*mcp.ClientSession{}
	for name, sec := range map[string]string{"drafter": drafter, "scout": scout, "deputy": deputy} {
		cs, err := connect(sec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions[name] = cs
	}
	for name, want := range map[string]string{
		"drafter": "create_issue,list_issues",
		"scout":   "list_issues", // delete_issue forwarded, but outside its parent's scope
		"deputy":  "list_issues", // create_issue forwarded, but outside scout's
	} {
		if got := strings.Join(capTools(sessions[name]), ","); got != want {
			t.Errorf("%s's capability tools: %s, want %s", name, got, want)
		}
	}
	if got, isErr := caller(sessions["scout"])(t, "list_issues", map[string]any{"title": "x"}); isErr || !strings.Contains(got, `"tool":"list_issues"`) {
		t.Errorf("scout list_issues: %v %q", isErr, got)
	}
	if _, err := sessions["scout"].CallTool(context.Background(), &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "x"}}); err == nil || !strings.Contains(err.Error(), `unknown tool "create_issue"`) {
		t.Errorf("scout create_issue: %v", err)
	}

	// The parent's token goes: its sub-agents' tokens stop working.
	f.run(t, "token", "rm", drafterID)
	if _, err := sessions["scout"].CallTool(context.Background(), &mcp.CallToolParams{Name: "list_issues", Arguments: map[string]any{}}); err == nil {
		t.Error("scout still calls after its parent's token was removed")
	}
	if _, err := connect(deputy); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("deputy connects after its grandparent's token was removed: %v", err)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// providerSkill copies the worked example's provider skill NAME
// (examples/providers/NAME: SKILL.md and backends.yaml verbatim) with an
// mcp.json that runs the project's recording test server serving the real
// tools of the npm server it stands in for, and reporting the token it was
// started with.
func providerSkill(t *testing.T, name, tools, token string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	for _, f := range []string{"SKILL.md", "backends.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "providers", name, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The tools file goes with the skill: the server runs in the skill's
	// directory, confined where nothing else of the host's /tmp is seen.
	b, err := os.ReadFile(filepath.Join("..", "internal", "decision", "executor", "testdata", tools))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{name: map[string]any{
		"command": testServer(t),
		"env": map[string]string{"SKILLGATE_TESTSERVER": "recorder", "SKILLGATE_TESTSERVER_TOOLS_FILE": "tools.json",
			"SKILLGATE_TESTSERVER_NAME": name, "SKILLGATE_TESTSERVER_REPORT_ENV": "TOKEN", "TOKEN": "${" + token + "}"},
	}}})
	if err := os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExecutorsEndToEnd is issue 14's worked example (docs/executors.md)
// through the built binary: the GitHub and GitLab provider skills are
// installed, completed, approved and enabled; `skillgate executors` shows
// every backend live; an agent over stdio and one over HTTP see one
// create_issue, routed by the configured preferences (GitLab for tenant
// acme) or by an explicit pin; disabling GitLab keeps create_issue with
// GitHub alone, and disabling both makes it dormant for a connected agent.
func TestExecutorsEndToEnd(t *testing.T) {
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-secret")
	t.Setenv("GITLAB_TOKEN", "gl-secret")
	// The operator lets skillgate's environment answer these two names
	// (credentials.from_environment); no other variable reaches a server.
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN, GITLAB_TOKEN]\n")
	// Every tool the worked example's backends.yaml map is approved.
	both := "create_issue get_file_contents search_repositories create_or_update_file create_branch "
	for _, p := range []struct{ name, tools, token, approve string }{
		{"github", "server-github-2025.4.8.tools.json", "GITHUB_TOKEN", both + "list_issues get_issue update_issue list_pull_requests get_pull_request create_pull_request"},
		{"gitlab", "server-gitlab-2025.4.25.tools.json", "GITLAB_TOKEN", both + "create_merge_request"},
	} {
		src := providerSkill(t, p.name, p.tools, p.token)
		// Blocked until an operator completes the risk metadata: exit 1.
		if code, _, stderr := f.runCode(t, nil, "install", src, "--credential", p.token); code != 1 {
			t.Fatalf("install %s: %d %s", p.name, code, stderr)
		}
		// The recording server sends nothing anywhere: internal, no egress.
		f.approveTools(t, p.name, strings.Fields(p.approve), "internal", "none", "the recording test server only answers")
	}
	// The worked example of docs/executors.md, as written there: its
	// configuration, its call, and the arguments it says each provider's
	// server receives.
	ex := workedExample(t)
	f.writeConfig(t, ex.config)

	// The CLI: every backend live, acme's default GitLab where GitLab
	// serves the executor (server-gitlab has no tool for the issue and
	// merge request reads and updates: GitHub alone serves those).
	var status struct {
		Executors []struct {
			Name, Default string
			Dormant       bool
			Backends      []struct {
				Provider string
				Live     bool
			}
		}
		Problems []string
	}
	out := f.run(t, "executors", "--tenant", "acme", "--agent", "drafter", "--tier", "T3", "--json")
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status.Executors) != 11 || len(status.Problems) != 0 {
		t.Fatalf("executors --json: %v\n%s", err, out)
	}
	githubOnly := []string{"find_issues", "find_pull_requests", "read_issue", "read_pull_request", "update_issue"}
	for _, e := range status.Executors {
		want, n := "gitlab", 2
		if slices.Contains(githubOnly, e.Name) {
			want, n = "github", 1
		}
		if e.Dormant || e.Default != want || len(e.Backends) != n || slices.ContainsFunc(e.Backends, func(b struct {
			Provider string
			Live     bool
		}) bool {
			return !b.Live
		}) {
			t.Errorf("executor %+v", e)
		}
	}

	// Without GitLab's credential its backends are off, and why.
	if code, out, stderr := f.runCode(t, []string{"GITLAB_TOKEN="}, "executors", "--tenant", "acme", "--agent", "drafter", "--tier", "T3"); code != 0 ||
		!strings.Contains(out, "create_issue  live\n  default: provider github is choice 1 of the global preference order (skill github)\n") ||
		!strings.Contains(out, "off: credential GITLAB_TOKEN missing for tenant acme") {
		t.Errorf("executors without GITLAB_TOKEN: %d %s\n%s", code, stderr, out)
	}

	if ex.call.Name != "create_issue" {
		t.Fatalf("the worked example calls %q", ex.call.Name)
	}
	issue := ex.call.Arguments
	viaGitHub := "github create_issue " + ex.github + " gh-secret"
	viaGitLab := "gitlab create_issue " + ex.gitlab + " gl-secret"
	callIssue := func(cs *mcp.ClientSession, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_issue", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		text := textOf(res)
		if res.IsError {
			return "error: " + text
		}
		var rec struct {
			Server, Tool string
			Arguments    json.RawMessage
			Env          map[string]string
		}
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			t.Fatalf("%v: %s", err, text)
		}
		return rec.Server + " " + rec.Tool + " " + string(rec.Arguments) + " " + rec.Env["TOKEN"]
	}
	checkListed := func(cs *mcp.ClientSession) {
		t.Helper()
		names := toolNames(t, cs)
		n := 0
		for _, name := range names {
			if strings.HasSuffix(name, "create_issue") {
				n++
			}
		}
		if n != 1 || !slices.Contains(names, "create_issue") {
			t.Fatalf("tools %v: want one create_issue", names)
		}
	}

	// stdio, tenant acme: GitLab by the tenant's preference; a pin wins.
	cs := f.agent(t, "T3")
	checkListed(cs)
	if got := callIssue(cs, issue); got != viaGitLab {
		t.Errorf("stdio default: %s", got)
	}
	pinned := map[string]any{"provider": "github"}
	for k, v := range issue {
		pinned[k] = v
	}
	if got := callIssue(cs, pinned); got != viaGitHub {
		t.Errorf("stdio pinned to github: %s", got)
	}

	// HTTP, tenant beta: GitHub by the global preference.
	secret := f.tokenSecret(t, "b1", "T3", "beta")
	srv := f.serve(t)
	changed := make(chan struct{}, 8)
	hc := srv.connectBearer(t, secret, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	checkListed(hc)
	if got := callIssue(hc, issue); got != viaGitHub {
		t.Errorf("HTTP default: %s", got)
	}

	// Disable GitLab: the same name, GitHub alone, for the connected agent.
	// (A notification already queued, from the connection's first sync,
	// is not the one awaited.)
	drain(changed)
	f.run(t, "disable", "gitlab")
	waitFor(t, changed, "tools/list_changed after disabling gitlab")
	waitUntil(t, "gitlab to leave create_issue's providers", func() bool { return !strings.Contains(providerEnum(t, hc), "gitlab") })
	checkListed(hc)
	pinned["provider"] = "gitlab"
	if got := callIssue(hc, pinned); !strings.HasPrefix(got, "error: skillgate: create_issue cannot run as asked: unknown provider") {
		t.Errorf("HTTP pinned to the disabled gitlab: %s", got)
	}
	// Disable both: dormant, gone from tools/list.
	drain(changed)
	f.run(t, "disable", "github")
	waitFor(t, changed, "tools/list_changed after disabling github")
	waitUntil(t, "create_issue to go dormant", func() bool { return !slices.Contains(toolNames(t, hc), "create_issue") })
	if names := toolNames(t, hc); slices.Contains(names, "create_issue") {
		t.Fatalf("create_issue listed with both providers disabled: %v", names)
	}
	out = f.run(t, "executors", "--tenant", "beta", "--agent", "b1", "--tier", "T3")
	if !strings.Contains(out, "create_issue  dormant") || !strings.Contains(out, "off: skill gitlab is disabled; enable it with skillgate enable gitlab") {
		t.Errorf("executors after disabling both:\n%s", out)
	}
}

func waitFor(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// example is the worked example of docs/executors.md.
type example struct {
	config string // its config.yaml
	call   struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	github, gitlab string // the arguments it says each server receives
}

// workedExample reads the worked example of docs/executors.md: the yaml
// block, the json call, and the two argument objects the text says GitHub's
// and GitLab's create_issue receive.
func workedExample(t *testing.T) example {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "executors.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Worked example: GitHub and GitLab")
	if i < 0 {
		t.Fatal("docs/executors.md has no worked example")
	}
	doc = doc[i:]
	if j := strings.Index(doc[3:], "\n## "); j >= 0 {
		doc = doc[:j+3]
	}
	block := func(lang string) string {
		t.Helper()
		k := strings.Index(doc, "```"+lang+"\n")
		if k < 0 {
			t.Fatalf("the worked example has no %s block", lang)
		}
		rest := doc[k+len(lang)+4:]
		return rest[:strings.Index(rest, "```")]
	}
	var ex example
	ex.config = block("yaml")
	if err := json.Unmarshal([]byte(block("json")), &ex.call); err != nil {
		t.Fatalf("the worked example's call: %v", err)
	}
	reaches := func(provider string) string {
		t.Helper()
		k := strings.Index(doc, "reaches "+provider+"'s `create_issue` with\n`")
		if k < 0 {
			k = strings.Index(doc, "reaches "+provider+"'s with `")
		}
		if k < 0 {
			t.Fatalf("the worked example does not say what %s receives", provider)
		}
		rest := doc[strings.Index(doc[k:], "`{")+k+1:]
		return rest[:strings.Index(rest, "`")]
	}
	ex.github, ex.gitlab = reaches("GitHub"), reaches("GitLab")
	return ex
}

// drain empties ch.
func drain(ch chan struct{}) {
	for len(ch) > 0 {
		<-ch
	}
}

// waitUntil polls cond until it holds, for up to 20 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// approveTools rates each of skill's tools (the capability skill/tool)
// as a write with sideEffects and egress, for why, approves only those
// and enables skill: an operator admitting a provider skill.
func (f *fixture) approveTools(t *testing.T, skill string, tools []string, sideEffects, egress, why string) {
	t.Helper()
	var only []string
	for _, tool := range tools {
		c := skill + "/" + tool
		f.run(t, "complete", skill, c, "--risk", "write", "--side-effects", sideEffects, "--egress", egress, "--why", why)
		only = append(only, c)
	}
	f.run(t, "approve", skill, "--only", strings.Join(only, ","))
	f.run(t, "enable", skill)
}

// createIssueOnEachProvider permits every call and grants acme/drafter
// one use of each provider's create_issue, then calls create_issue pinned
// to github and to gitlab: each call must reach its provider's server,
// which answers with the API's failure (out of the sandbox's reach, and
// the token no real one), relayed as the server's error, not a refusal of
// skillgate's. create_issue sends data over the network, so each call
// needs the human's one-use grant besides the policy.
func (f *fixture) createIssueOnEachProvider(t *testing.T) {
	t.Helper()
	writeTree(t, filepath.Join(f.data, "policies"), map[string]string{"all.cedar": `@id("anything")
permit (principal, action == Action::"invoke", resource);
`})
	for _, provider := range []string{"github", "gitlab"} {
		f.run(t, "grant", "add", "acme/drafter", provider+":"+provider+"/create_issue", "--level", "write", "--uses", "1", "--reason", "one issue through each provider")
	}
	call := caller(f.agent(t, "T3"))
	for _, provider := range []string{"github", "gitlab"} {
		got, isErr := call(t, "create_issue", map[string]any{"provider": provider, "repository": "acme/app", "title": "t", "body": "b"})
		reached := !strings.HasPrefix(got, "skillgate:") ||
			strings.HasPrefix(got, "skillgate: create_issue was allowed but the upstream server failed: ") && strings.Contains(got, `server "`+provider+`"`)
		if got == "" || !reached {
			t.Errorf("create_issue via %s did not reach its server: error=%v %q", provider, isErr, got)
		}
		t.Logf("create_issue via %s: error=%v %.300s", provider, isErr, got)
	}
}

// providerEnum is the provider enum of create_issue as cs lists it.
func providerEnum(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name != "create_issue" {
			continue
		}
		var s struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		raw, _ := json.Marshal(tl.InputSchema)
		_ = json.Unmarshal(raw, &s)
		return strings.Join(s.Properties["provider"].Enum, ",")
	}
	return ""
}

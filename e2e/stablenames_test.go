package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recorderSkill writes an importable skill whose server is the project's
// recording server standing in for provider, offering tools (a tools/list
// result, kept beside SKILL.md: the server runs in the skill's directory).
func recorderSkill(t *testing.T, provider, tools string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), provider)
	os.MkdirAll(dir, 0o755)
	md := "---\nname: " + provider + "\ndescription: Issues on " + provider + ".\nallowed-tools: " + provider + "/create_issue\n---\nFile issues.\n"
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{provider: map[string]any{"command": testServer(t),
		"env": map[string]string{"SKILLGATE_TESTSERVER": "recorder", "SKILLGATE_TESTSERVER_TOOLS_FILE": "tools.json", "SKILLGATE_TESTSERVER_NAME": provider}}}})
	for name, content := range map[string]string{"SKILL.md": md, "mcp.json": string(cfg), "tools.json": tools} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// createIssueTools is a provider's tools/list: one create_issue, a write
// (annotated as staying inside the provider, so that the default policy
// lets it through without a human).
const createIssueTools = `{"tools":[{"name":"create_issue","description":"Create an issue.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},"annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}}]}`

// TestStableToolNames is issue 14's "stable names": two imported skills
// offer create_issue. The first approved keeps the name; the second's
// clash is resolved at its approval (recorded in its manifest and shown by
// review), and neither name changes when the other skill is disabled or
// enabled again.
func TestStableToolNames(t *testing.T) {
	f := emptyFixture(t)
	for _, p := range []string{"github", "gitlab"} {
		if code, out, errs := f.runCode(t, nil, "install", recorderSkill(t, p, createIssueTools)); code != 0 {
			t.Fatalf("install %s: %d %s %s", p, code, out, errs)
		}
		f.run(t, "approve", p)
		f.run(t, "enable", p)
	}
	review := f.run(t, "review", "gitlab")
	if !strings.Contains(review, "      agents see it as gitlab__create_issue: create_issue is taken by github\n") {
		t.Errorf("review gitlab does not show the clash resolved at approval:\n%s", review)
	}
	if strings.Contains(f.run(t, "review", "github"), "agents see it as") {
		t.Errorf("review github shows a clash it does not have")
	}
	var rv struct {
		Approved struct {
			Capabilities []struct{ ToolName, ToolNameReason string }
		} `json:"approvedManifest"`
	}
	if err := json.Unmarshal([]byte(f.run(t, "review", "gitlab", "--json")), &rv); err != nil || len(rv.Approved.Capabilities) != 1 ||
		rv.Approved.Capabilities[0].ToolName != "gitlab__create_issue" || rv.Approved.Capabilities[0].ToolNameReason != "create_issue is taken by github" {
		t.Fatalf("the approved manifest does not record the name: %v %+v", err, rv)
	}

	capTools := func() []string {
		t.Helper()
		var out []string
		for _, n := range toolNames(t, f.agent(t, "T3")) {
			if strings.Contains(n, "create_issue") {
				out = append(out, n)
			}
		}
		slices.Sort(out)
		return out
	}
	steps := []struct {
		name string
		cmd  []string
		want []string
	}{
		{"both enabled", nil, []string{"create_issue", "gitlab__create_issue"}},
		{"github disabled", []string{"disable", "github"}, []string{"gitlab__create_issue"}},
		{"github enabled again", []string{"enable", "github"}, []string{"create_issue", "gitlab__create_issue"}},
		{"gitlab disabled", []string{"disable", "gitlab"}, []string{"create_issue"}},
		{"gitlab enabled again", []string{"enable", "gitlab"}, []string{"create_issue", "gitlab__create_issue"}},
	}
	for _, s := range steps {
		if s.cmd != nil {
			f.run(t, s.cmd...)
		}
		if got := capTools(); !slices.Equal(got, s.want) {
			t.Fatalf("%s: tools %v, want %v", s.name, got, s.want)
		}
	}
	// Each name still reaches its own provider.
	call := caller(f.agent(t, "T3"))
	for tool, provider := range map[string]string{"create_issue": "github", "gitlab__create_issue": "gitlab"} {
		got, isErr := call(t, tool, map[string]any{"title": "Bug"})
		if isErr || !strings.Contains(got, `"server":"`+provider+`"`) {
			t.Errorf("%s: %v %s; want the %s server", tool, isErr, got, provider)
		}
	}
}

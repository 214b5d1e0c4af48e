package broker_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/executor"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestExecutorMappingsOnRealServers introspects the real npm servers
// @modelcontextprotocol/server-github@2025.4.8 and server-gitlab@2025.4.25
// (installed by scripts/setup-npm.sh; they list their tools without
// network) and checks that the worked example's mappings
// (examples/providers/*/backends.yaml) type-check against their real
// schemas for create_issue, get_file_contents, search_repositories and
// create_or_update_file, and that the captured tools/list the routing
// tests serve is what the servers offer. Without SKILLGATE_TEST_NPM_DIR
// it skips.
func TestExecutorMappingsOnRealServers(t *testing.T) {
	dir := os.Getenv("SKILLGATE_TEST_NPM_DIR")
	if dir == "" {
		t.Skip("SKILLGATE_TEST_NPM_DIR is not set; run: eval \"$(scripts/setup-npm.sh)\"")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	for _, s := range []struct {
		name, pkg, captured, token string
		want                       []string
	}{
		{"github", "server-github", "server-github-2025.4.8.tools.json", "GITHUB_PERSONAL_ACCESS_TOKEN", []string{
			"create_branch=create_branch", "create_issue=create_issue", "create_pull_request=create_pull_request",
			"find_issues=list_issues", "find_pull_requests=list_pull_requests", "find_repositories=search_repositories",
			"read_file_contents=get_file_contents", "read_issue=get_issue", "read_pull_request=get_pull_request",
			"update_issue=update_issue", "write_file_contents=create_or_update_file",
		}},
		{"gitlab", "server-gitlab", "server-gitlab-2025.4.25.tools.json", "GITLAB_PERSONAL_ACCESS_TOKEN", []string{
			"create_branch=create_branch", "create_issue=create_issue", "create_pull_request=create_merge_request",
			"find_repositories=search_repositories", "read_file_contents=get_file_contents", "write_file_contents=create_or_update_file",
		}},
	} {
		t.Run(s.name, func(t *testing.T) {
			entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", s.pkg, "dist", "index.js")
			if _, err := os.Stat(entry); err != nil {
				t.Fatalf("%s: %v (re-run scripts/setup-npm.sh)", s.pkg, err)
			}
			decl := mcpclient.ServerDecl{ID: s.name, Transport: capability.TransportStdio, Command: node, Args: []string{entry},
				Env: map[string]string{s.token: "not-a-real-token"}}
			rep, err := mcpclient.Introspect(context.Background(), decl, &mcpclient.Options{Limits: limits()})
			if err != nil {
				t.Fatal(err)
			}
			var tools []capability.Tool
			for _, c := range rep.Capabilities {
				tools = append(tools, c.Tool)
			}
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", s.name, executor.BackendsFileName))
			if err != nil {
				t.Fatal(err)
			}
			f, err := executor.ParseBackends(s.name+"/backends.yaml", data, executor.Builtin())
			if err != nil {
				t.Fatal(err)
			}
			bs, err := f.Compile(executor.Builtin(), "providers/"+s.name, []string{s.name}, tools)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range bs {
				got = append(got, b.Executor.Name+"="+b.Tool)
			}
			slices.Sort(got)
			if !slices.Equal(got, s.want) {
				t.Fatalf("backends %v, want %v", got, s.want)
			}
			// The capture the routing tests serve is the server's tools.
			raw, err := os.ReadFile(filepath.Join("..", "..", "decision", "executor", "testdata", s.captured))
			if err != nil {
				t.Fatal(err)
			}
			var captured struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"inputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(raw, &captured); err != nil {
				t.Fatal(err)
			}
			if len(captured.Tools) != len(tools) {
				t.Fatalf("captured %d tools, the server offers %d", len(captured.Tools), len(tools))
			}
			live := map[string]json.RawMessage{}
			for _, tl := range tools {
				live[tl.CapabilityID] = tl.InputSchema
			}
			for _, c := range captured.Tools {
				if schema, ok := live[c.Name]; !ok || !jsonEqual(t, c.InputSchema, schema) {
					t.Errorf("captured tool %s differs from the server's", c.Name)
				}
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

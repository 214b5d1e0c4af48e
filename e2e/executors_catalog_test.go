package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forkCatalog is an operator catalog declaring an executor skillgate does
// not ship.
const forkCatalog = `apiVersion: skillgate.dev/v1
kind: ExecutorCatalog
executors:
  - name: create_fork
    description: Fork a repository into the caller's account or an organization.
    inputSchema:
      type: object
      properties:
        repository: {type: string, pattern: "^[^/\\s]+(/[^/\\s]+)+$"}
        organization: {type: string}
      required: [repository]
      additionalProperties: false
`

// TestOperatorCatalogAddsAnObject: "+1 backend file, +1 skill, 0 new
// executors" for an object the built-in catalog lacks. The operator drops
// a catalog file in DATA/executors; a provider skill's backends.yaml maps
// the new executor onto its server's fork_repository; the same binary
// approves it (the mapping checked against the merged catalog), lists it
// in `skillgate executors` and serves it to an agent, whose call reaches
// the server with the mapped arguments. A file that conflicts with the
// built-in catalog is left out, and the others still load.
func TestOperatorCatalogAddsAnObject(t *testing.T) {
	f := newFixture(t)
	t.Setenv("GITHUB_TOKEN", "gh-secret")
	f.writeConfig(t, "credentials:\n  from_environment: [GITHUB_TOKEN]\n")
	writeTree(t, filepath.Join(f.data, "executors"), map[string]string{
		"10-forks.yaml": forkCatalog,
		"20-bad.yaml":   "apiVersion: skillgate.dev/v1\nkind: ExecutorCatalog\nproviders:\n  - {name: github, suffix: _gh}\n",
	})
	src := providerSkill(t, "github", "server-github-2025.4.8.tools.json", "GITHUB_TOKEN")
	bf, err := os.OpenFile(filepath.Join(src, "backends.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = bf.WriteString(`  - executor: create_fork
    server: github
    tool: fork_repository
    arguments:
      owner: args.repository.split("/")[0]
      repo: args.repository.split("/")[1]
      organization: args.?organization
`)
	if cerr := bf.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	if code, _, stderr := f.runCode(t, nil, "install", src, "--credential", "GITHUB_TOKEN"); code != 1 {
		t.Fatalf("install: %d %s", code, stderr)
	}
	f.approveTools(t, "github", []string{"fork_repository"}, "internal", "none", "the recording test server only answers")

	var status struct {
		Executors []struct {
			Name     string
			Dormant  bool
			Backends []struct {
				Provider, Tool string
				Live           bool
			}
		}
	}
	out := f.run(t, "executors", "--tenant", "acme", "--agent", "drafter", "--tier", "T3", "--json")
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		t.Fatalf("executors: %v\n%s", err, out)
	}
	i := slices.IndexFunc(status.Executors, func(e struct {
		Name     string
		Dormant  bool
		Backends []struct {
			Provider, Tool string
			Live           bool
		}
	}) bool {
		return e.Name == "create_fork"
	})
	if i < 0 || status.Executors[i].Dormant || len(status.Executors[i].Backends) != 1 || !status.Executors[i].Backends[0].Live ||
		status.Executors[i].Backends[0].Tool != "fork_repository" {
		t.Fatalf("create_fork in executors:\n%s", out)
	}

	cs := f.agent(t, "T3")
	if names := toolNames(t, cs); !slices.Contains(names, "create_fork") || slices.Contains(names, "fork_repository") {
		t.Fatalf("tools %v: want create_fork, not fork_repository", names)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_fork", Arguments: map[string]any{"repository": "acme/app", "organization": "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Server, Tool string
		Arguments    json.RawMessage
	}
	if text := textOf(res); res.IsError || json.Unmarshal([]byte(text), &rec) != nil {
		t.Fatalf("create_fork: %s", text)
	}
	if got := rec.Server + " " + rec.Tool + " " + string(rec.Arguments); got != `github fork_repository {"organization":"ops","owner":"acme","repo":"app"}` {
		t.Errorf("the server received %s", got)
	}
	// The agent's gateway loaded one file and refused the other, audited
	// with why.
	cs.Close()
	out = f.run(t, "audit", "query", "--action", "executor.catalog.")
	if !strings.Contains(out, "executor.catalog.load") || !strings.Contains(out, "executor-catalog:10-forks.yaml") ||
		!strings.Contains(out, "executor.catalog.reject") || !strings.Contains(out, "executor-catalog:20-bad.yaml") {
		t.Errorf("audit:\n%s", out)
	}

	// A running serve reloads the catalogs: the file removed, its
	// executor goes from the agent's tools; put back, it returns, each
	// time with tools/list_changed and without a restart.
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)
	changed := make(chan struct{}, 16)
	var notified atomic.Int32
	http := srv.connectBearer(t, secret, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		notified.Add(1)
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	waitFork := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if slices.Contains(toolNames(t, http), "create_fork") == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("serve: create_fork listed = %v after 30 s, want %v: %v", !want, want, toolNames(t, http))
			}
			select {
			case <-changed:
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	waitFork(true)
	forks := filepath.Join(f.data, "executors", "10-forks.yaml")
	if err := os.Remove(forks); err != nil {
		t.Fatal(err)
	}
	waitFork(false)
	writeFile(t, forks, forkCatalog)
	waitFork(true)
	for end := time.Now().Add(5 * time.Second); notified.Load() < 2 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if n := notified.Load(); n < 2 {
		t.Errorf("serve reloaded the catalogs twice and told the agent %d times (tools/list_changed)", n)
	}
}

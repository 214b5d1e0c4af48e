package install_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/admission/propose"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// testServer is skillgate's own test MCP server, built by TestMain.
var testServer string

func TestMain(m *testing.M) {
	if child := os.Getenv(envChild); child != "" {
		os.Exit(runChild(child))
	}
	code := testserver.RunTests(m, "../../..", "install", &testServer)
	if npmCacheDir != "" {
		os.RemoveAll(npmCacheDir)
	}
	os.Exit(code)
}

// testLimits keep bad-server cases fast.
func testLimits() mcpclient.Limits {
	return mcpclient.Limits{InitializeTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, TerminateTimeout: 200 * time.Millisecond}
}

// env is one data directory with its store and service.
type env struct {
	t    *testing.T
	data string
	db   *sqlite.DB
	svc  *install.Service
	now  time.Time
}

func newEnv(t *testing.T, opts install.Options) *env {
	t.Helper()
	data := t.TempDir()
	return openEnv(t, data, opts)
}

func openEnv(t *testing.T, data string, opts install.Options) *env {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(data, "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{t: t, data: data, db: db, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	db.Now = func() time.Time { return e.now }
	opts.Store = db
	opts.Root = filepath.Join(data, "imported")
	if opts.Now == nil {
		opts.Now = func() time.Time { return e.now }
	}
	if opts.MCP.Limits == (mcpclient.Limits{}) {
		opts.MCP.Limits = testLimits()
	}
	if opts.MCP.InheritEnv == nil {
		opts.MCP.InheritEnv = []string{"PATH", "HOME", "TMPDIR", "GORACE"}
	}
	svc, err := install.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	return e
}

// writeSkill writes a skill directory with SKILL.md and, when servers is
// not nil, mcp.json.
func writeSkill(t *testing.T, dir, name, body string, servers map[string]any) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: A test skill that uses MCP tools.\n" + body
	if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if servers != nil {
		b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "mcp.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// testServerDecl declares the test server in a mode.
func testServerDecl(mode string, env map[string]string) map[string]any {
	e := map[string]any{"SKILLGATE_TESTSERVER": mode}
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": testServer, "env": e}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// riskOf renders a capability's effective risk as "level/side/egress
// (sources)".
func riskOf(r *install.Review, name string) string {
	for _, c := range r.Capabilities {
		if c.Name == name {
			return fmt.Sprintf("%s/%s/%s (%s,%s,%s)", c.Risk.RiskLevel.Value, c.Risk.SideEffects.Value, c.Risk.DataEgress.Value,
				c.Risk.RiskLevel.Source, c.Risk.SideEffects.Source, c.Risk.DataEgress.Source)
		}
	}
	return "absent"
}

func capNames(r *install.Review) string {
	var out []string
	for _, c := range r.Capabilities {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

// backendsHead starts a GitLab backends.yaml for the backends tests' cases.
const backendsHead = "apiVersion: skillgate.dev/v1\nkind: Backends\nprovider: gitlab\nbackends:\n"

// gitlabProvider is the GitLab provider skill of the backends tests: the
// test server standing in for the real GitLab server, offering its
// captured tools, and the worked example's backends.yaml.
type gitlabProvider struct {
	tools   string // the captured tools/list, an absolute path
	example string // examples/providers/gitlab/backends.yaml
}

// newGitLabProvider reads the fixture of gitlabProvider.
func newGitLabProvider(t *testing.T) gitlabProvider {
	t.Helper()
	tools, err := filepath.Abs(filepath.Join("..", "..", "decision", "executor", "testdata", "server-gitlab-2025.4.25.tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "providers", "gitlab", "backends.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return gitlabProvider{tools: tools, example: string(good)}
}

// write writes the provider skill "gitlab" (SKILL.md's body after its
// front matter's start, an mcp.json of the test server named gitlab, and
// backends as backends.yaml) into a new directory and returns its path.
func (g gitlabProvider) write(t *testing.T, body, backends string) string {
	t.Helper()
	src := writeSkill(t, t.TempDir(), "gitlab", body, map[string]any{"gitlab": testServerDecl("recorder",
		map[string]string{"SKILLGATE_TESTSERVER_TOOLS_FILE": g.tools, "SKILLGATE_TESTSERVER_NAME": "gitlab"})})
	if err := os.WriteFile(filepath.Join(src, "backends.yaml"), []byte(backends), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

// stubLLM is an OpenAI-compatible endpoint on loopback that answers every
// chat completion with content, and the proposer that calls it; *calls
// counts the requests.
func stubLLM(t *testing.T, content string, calls *int) *propose.OpenAI {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls != nil {
			*calls++
		}
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	llm, err := propose.NewOpenAI(propose.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	return llm
}

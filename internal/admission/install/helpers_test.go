package install_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/admission/install"
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

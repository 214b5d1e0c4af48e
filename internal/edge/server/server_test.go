package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

var examples = filepath.Join("..", "..", "..", "examples", "skills")

type fixture struct {
	env    *mcpservertest.Env
	url    string
	tokens string // token file
	srv    *server.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	path := filepath.Join(t.TempDir(), server.TokensFile)
	tokens, err := server.OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{
		Gateway: env.Gateway,
		Tokens:  tokens,
		Rescan: func(ctx context.Context) (bool, error) {
			return env.Gateway.Rescan(ctx, env.ScanFunc)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &fixture{env: env, url: ts.URL, tokens: path, srv: srv}
}

func (f *fixture) token(t *testing.T, agent string, tier skill.AgentTier) string {
	t.Helper()
	secret, _, err := server.AddToken(f.tokens, capability.Principal{Tenant: "acme", Agent: agent, Tier: tier}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// headers adds fixed headers to every request.
type headers struct {
	h    http.Header
	base http.RoundTripper
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

type client struct {
	cs    *mcp.ClientSession
	tools chan struct{}
}

// connect opens an MCP session over streamable HTTP with the given token
// and, when sessionID is set, the Skillgate-Session header.
func (f *fixture) connect(t *testing.T, secret, sessionID string) (*client, error) {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + secret}}
	if sessionID != "" {
		h.Set(server.SessionHeader, sessionID)
	}
	c := &client{tools: make(chan struct{}, 8)}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.tools <- struct{}{}:
			default:
			}
		},
	})
	var err error
	// The MCP session (Mcp-Session-Id) these tests exercise is that of
	// the initialize generation; 2026-07-28 clients: modern_test.go.
	c.cs, err = cl.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   f.url + "/mcp",
		HTTPClient: &http.Client{Transport: headers{h, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.cs.Close() })
	return c, nil
}

func (c *client) call(t testing.TB, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestSeedWalkHTTP replays the seed walk over streamable HTTP.
func TestSeedWalkHTTP(t *testing.T) {
	f := newFixture(t)
	c, err := f.connect(t, f.token(t, "drafter", skill.T3), "")
	if err != nil {
		t.Fatal(err)
	}
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), c.call)
}

// TestAuth: no token, a malformed or unknown token: 401 with the
// WWW-Authenticate challenge and a JSON body (a JSON-RPC error on /mcp); a
// token of another principal cannot use a session. Health answers without
// a token and then says only "ok"; a 404 lists every endpoint.
func TestAuth(t *testing.T) {
	f := newFixture(t)
	f.mountAll(t) // the 404 must list the install and policy APIs too
	good := f.token(t, "drafter", skill.T3)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	const (
		noToken  = `unauthorized: send 'Authorization: Bearer \u003ctoken\u003e' with a token from 'skillgate token add'`
		badToken = noToken + ` (this token is unknown: mistyped, or removed with 'skillgate token rm')`
		realm    = `Bearer realm="skillgate"`
		invalid  = `Bearer realm="skillgate", error="invalid_token"`
	)
	tests := []struct {
		name, method, path, auth, body string
		status                         int
		want                           string // the body
		challenge                      string // WWW-Authenticate
	}{
		{"mcp without token", "POST", "/mcp", "", init, 401, `{"error":{"code":-32001,"message":"` + noToken + `"},"id":null,"jsonrpc":"2.0"}`, realm},
		{"mcp with unknown token", "POST", "/mcp", "Bearer sgt_nope", init, 401, `{"error":{"code":-32001,"message":"` + badToken + `"},"id":null,"jsonrpc":"2.0"}`, invalid},
		{"mcp with basic auth", "POST", "/mcp", "Basic Zm9vOmJhcg==", init, 401, `{"error":{"code":-32001,"message":"` + noToken + `"},"id":null,"jsonrpc":"2.0"}`, realm},
		{"mcp get without token", "GET", "/mcp", "", "", 401, `{"error":{"code":-32001,"message":"` + noToken + `"},"id":null,"jsonrpc":"2.0"}`, realm},
		{"scan without token", "POST", "/v1/scan", "", "", 401, `{"error":"` + noToken + `"}`, realm},
		{"scan with unknown token", "POST", "/v1/scan", "Bearer sgt_nope", "", 401, `{"error":"` + badToken + `"}`, invalid},
		{"scan as T3", "POST", "/v1/scan", "Bearer " + good, "", 403, `{"error":"forbidden: this needs a token of agent tier T0 or T1; this token is acme/drafter@T3 (POST /v1/scan)"}`, ""},
		{"unknown path", "GET", "/nope", "", "", 404, `{"error":"not found: GET /nope; the endpoints are /mcp (MCP over streamable HTTP), POST /v1/scan, GET /v1/health, GET /v1/ready, GET /v1/openapi.json, ` +
			`GET /v1/installs, GET /v1/installs/pending, GET /v1/installs/review, POST /v1/installs, POST /v1/installs/{op}, ` +
			`GET /v1/changes, GET /v1/changes/show, POST /v1/changes/{op}, GET /v1/grants, POST /v1/grants, DELETE /v1/grants/{id}, POST /v1/policy/test"}`, ""},
		{"health without token", "GET", "/v1/health", "", "", 200, `{"status":"ok"}`, ""},
		{"health with token", "GET", "/v1/health", "Bearer " + good, "", 200, `{"connections":0,"status":"ok"}`, ""},
		{"health with unknown token", "GET", "/v1/health", "Bearer sgt_nope", "", 401, `{"error":"` + badToken + `"}`, invalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.url+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.TrimSpace(string(body)); resp.StatusCode != tc.status || got != tc.want {
				t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, resp.StatusCode, got, tc.status, tc.want)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("%s %s: WWW-Authenticate %q, want %q", tc.method, tc.path, got, tc.challenge)
			}
			if ct := resp.Header.Get("Content-Type"); tc.status != 200 && ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q", tc.method, tc.path, ct)
			}
		})
	}

	// A session id of another principal is refused before any MCP traffic.
	c, err := f.connect(t, good, "owned-by-drafter")
	if err != nil {
		t.Fatal(err)
	}
	c.call(t, "ls", map[string]any{"path": "/"})
	other := f.token(t, "intruder", skill.T3)
	if _, err := f.connect(t, other, "owned-by-drafter"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("connect with another principal's session = %v, want 403", err)
	}
	// A removed token stops working at the next request.
	toks, _ := server.ListTokens(f.tokens)
	if err := server.RemoveToken(f.tokens, toks[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.connect(t, good, ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connect with a removed token = %v, want 401", err)
	}
}

// TestResumeHTTP: the Skillgate-Session header resumes loaded skills and
// the workspace; a new connection learns its id from the response header.
func TestResumeHTTP(t *testing.T) {
	f := newFixture(t)
	secret := f.token(t, "drafter", skill.T3)
	c, err := f.connect(t, secret, "http-1")
	if err != nil {
		t.Fatal(err)
	}
	c.call(t, "load_skill", map[string]any{"skill": "escrituras/compraventa"})
	c.call(t, "write_file", map[string]any{"file_path": "/workspace/a.md", "content": "hola\n"})
	c.cs.Close()

	c2, err := f.connect(t, secret, "http-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct{ tool, key, arg, want string }{
		{"ls", "path", "/skills", "['/skills/compraventa/']"},
		{"read_file", "file_path", "/workspace/a.md", "     1\thola"},
	} {
		if got, _ := c2.call(t, s.tool, map[string]any{s.key: s.arg}); got != s.want {
			t.Errorf("%s %s = %q, want %q", s.tool, s.arg, got, s.want)
		}
	}

	// A raw initialize without the header gets a fresh id back.
	req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id := resp.Header.Get(server.SessionHeader); resp.StatusCode != 200 || session.ValidID(id) != nil || id == "http-1" {
		t.Errorf("initialize: %d, %s %q", resp.StatusCode, server.SessionHeader, id)
	}
}

// TestScanNotifies: POST /v1/scan by a T1 token rescans; a connected
// client whose loadable skills changed gets tools/list_changed.
func TestScanNotifies(t *testing.T) {
	f := newFixture(t)
	c, err := f.connect(t, f.token(t, "drafter", skill.T3), "")
	if err != nil {
		t.Fatal(err)
	}
	admin := f.token(t, "lead", skill.T1)
	scan := func() map[string]any {
		req, _ := http.NewRequest("POST", f.url+"/v1/scan", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("scan: %d %v", resp.StatusCode, err)
		}
		return out
	}
	if out := scan(); out["changed"] != false {
		t.Errorf("scan without change = %v", out)
	}
	f.env.WriteFile(t, "notas/acta/SKILL.md", "---\nname: acta\ndescription: Drafts minutes.\nmetadata:\n  tier: \"1\"\n---\n# Acta\n")
	if out := scan(); out["changed"] != true {
		t.Errorf("scan after adding a skill = %v", out)
	}
	select {
	case <-c.tools:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed after POST /v1/scan")
	}
	if got, isErr := c.call(t, "load_skill", map[string]any{"skill": "notas/acta"}); isErr || !strings.HasPrefix(got, "Loaded notas/acta at /skills/acta") {
		t.Errorf("load new skill = %q", got)
	}
}

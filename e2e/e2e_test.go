// Package e2e drives the built skillgate binary as agents do: over stdio
// with the Go SDK client, over streamable HTTP, and through the MCP
// Inspector CLI from npm, replaying seed 003's walk-through each time.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
)

// bin is the skillgate binary built by TestMain.
var bin string

var examples = filepath.Join("..", "examples", "skills")

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "skillgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "skillgate")
	build := exec.Command("go", "build", "-o", bin, "./cmd/skillgate")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: go build ./cmd/skillgate:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a data directory whose registry scanned a copy of the example
// skills, and a ticket directory for the seed's /ticket mount.
type fixture struct {
	data, root, tickets string
	// dsn is the test's PostgreSQL database (see withStore), "" for the
	// data directory's SQLite file.
	dsn string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := emptyFixture(t)
	f.root, f.tickets = filepath.Join(t.TempDir(), "skills"), t.TempDir()
	mcpservertest.CopyTree(t, examples, f.root)
	if err := os.WriteFile(filepath.Join(f.tickets, "ticket.md"), []byte(mcpservertest.TicketMD), 0o644); err != nil {
		t.Fatal(err)
	}
	f.run(t, "scan", "--root", f.root)
	return f
}

// run runs the binary to completion and returns its stdout.
func (f *fixture) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--data", f.data}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("skillgate %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

// stdio starts `skillgate mcp` as a subprocess and connects the Go SDK
// client to it.
func (f *fixture) stdio(t *testing.T, sessionID string) *mcp.ClientSession {
	t.Helper()
	var extra []string
	if sessionID != "" {
		extra = append(extra, "--session", sessionID)
	}
	return f.stdioWith(t, extra...)
}

// stdioWith is stdio with extra flags of `mcp`.
func (f *fixture) stdioWith(t *testing.T, extra ...string) *mcp.ClientSession {
	t.Helper()
	args := append([]string{"--data", f.data, "mcp", "--agent", "drafter", "--tier", "T3", "--tenant", "acme", "--mount", "/ticket=" + f.tickets}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &testWriter{t: t, prefix: "skillgate mcp: "}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// testWriter logs a subprocess's stderr lines through t.
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + l)
	}
	return len(p), nil
}

func caller(cs *mcp.ClientSession) mcpservertest.CallFunc {
	return func(t testing.TB, tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		return textOf(res), res.IsError
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestStdioWalk replays the seed walk against `skillgate mcp`, then
// reconnects with the session id and finds the skill and the workspace
// file again.
func TestStdioWalk(t *testing.T) {
	f := newFixture(t)
	cs := f.stdio(t, "")
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), caller(cs))
	call := caller(cs)
	if got, isErr := call(t, "write_file", map[string]any{"file_path": "/workspace/borrador.md", "content": "Escritura número 1200\n"}); isErr {
		t.Fatalf("write: %s", got)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skillgate://session"})
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Session string `json:"session"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &info); err != nil || info.Session == "" {
		t.Fatalf("session resource %q: %v", res.Contents[0].Text, err)
	}
	cs.Close()

	resumed := caller(f.stdio(t, info.Session))
	for _, s := range []struct{ tool, key, arg, want string }{
		{"ls", "path", "/skills", "['/skills/compraventa/']"},
		{"read_file", "file_path", "/workspace/borrador.md", "     1\tEscritura número 1200"},
	} {
		if got, _ := resumed(t, s.tool, map[string]any{s.key: s.arg}); got != s.want {
			t.Errorf("resumed %s %s = %q, want %q", s.tool, s.arg, got, s.want)
		}
	}
}

// server is a running `skillgate serve`.
type server struct {
	cmd *exec.Cmd
	url string // http://127.0.0.1:port
}

var listenRE = regexp.MustCompile(`MCP at (http://\S+)/mcp`)

func (f *fixture) serve(t *testing.T) *server {
	t.Helper()
	return startServe(t, []string{"--data", f.data, "serve", "--addr", "127.0.0.1:0", "--mount", "/ticket=" + f.tickets},
		func(line string) { t.Log("skillgate serve: " + line) })
}

// startServe runs the binary with args (a serve command) and returns it
// once it says where it listens; each line of its stderr goes to line. The
// server is stopped when the test ends.
func startServe(t *testing.T, args []string, line func(string)) *server {
	t.Helper()
	return startServeEnv(t, args, nil, line)
}

// startServeEnv is startServe with env added to the environment.
func startServeEnv(t *testing.T, args, env []string, line func(string)) *server {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	logged := make(chan struct{})
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		<-logged // no t.Log after the test ends
	})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			line(sc.Text())
		}
	}()
	select {
	case u := <-found:
		return &server{cmd: cmd, url: u}
	case <-time.After(30 * time.Second):
		t.Fatal("skillgate serve did not say where it listens")
	}
	return nil
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// tokenSecret adds a token of agent at tier for tenant and returns its
// secret.
func (f *fixture) tokenSecret(t *testing.T, agent, tier, tenant string) string {
	t.Helper()
	var tok struct {
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(f.run(t, "token", "add", "--agent", agent, "--tier", tier, "--tenant", tenant, "--json")), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.Secret
}

// connectBearer connects an MCP client with opts (nil for none) to srv
// over streamable HTTP with the token secret, closed when the test ends.
// It speaks 2025-11-25, whose MCP session keeps the skillgate session
// between requests (2026-07-28 clients: protocol_test.go).
func (srv *server) connectBearer(t *testing.T, secret string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, opts).Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   srv.url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{secret, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPWalk replays the seed walk against `skillgate serve` over
// streamable HTTP with a bearer token; without a token the server answers
// 401; a SIGHUP rescan notifies the connected client.
func TestHTTPWalk(t *testing.T) {
	f := newFixture(t)
	secret := f.tokenSecret(t, "drafter", "T3", "acme")
	srv := f.serve(t)

	resp, err := http.Post(srv.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", resp.StatusCode)
	}

	changed := make(chan struct{}, 4)
	cs := srv.connectBearer(t, secret, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	mcpservertest.Run(t, mcpservertest.Walk(t, examples, true), caller(cs))

	// A new skill, then SIGHUP: the server rescans and notifies.
	dir := filepath.Join(f.root, "notas", "acta")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: acta\ndescription: Drafts minutes.\n---\n# Acta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed after SIGHUP")
	}
	if got, isErr := caller(cs)(t, "load_skill", map[string]any{"skill": "notas/acta"}); isErr || !strings.HasPrefix(got, "Loaded notas/acta at /skills/acta") {
		t.Errorf("load new skill = %q", got)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// connectRun is a `skillgate connect` running in the background.
type connectRun struct {
	out, errs syncbuf.Buffer
	code      chan int
}

// startConnect runs skillgate with args in the background.
func startConnect(t *testing.T, data string, args ...string) *connectRun {
	t.Helper()
	r := &connectRun{code: make(chan int, 1)}
	m := &Main{Stdout: &r.out, Stderr: &r.errs, Getenv: func(k string) string {
		if k == "SKILLGATE_DATA" {
			return data
		}
		return ""
	}}
	go func() { r.code <- m.Run(t.Context(), args) }()
	return r
}

// authURL waits for the URL connect prints on stderr.
func (r *connectRun) authURL(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s := r.errs.String()
		if _, rest, ok := strings.Cut(s, "):\n  "); ok {
			if u, _, ok := strings.Cut(rest, "\n"); ok {
				return u
			}
		}
		select {
		case c := <-r.code:
			t.Fatalf("connect ended with %d before printing a URL: %s", c, s)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no URL printed: %q", r.errs.String())
	return ""
}

// wait returns connect's exit code, stdout and stderr.
func (r *connectRun) wait(t *testing.T) (int, string, string) {
	t.Helper()
	select {
	case c := <-r.code:
		return c, r.out.String(), r.errs.String()
	case <-time.After(30 * time.Second):
		t.Fatalf("connect did not end: %q", r.errs.String())
		return 0, "", ""
	}
}

// visit GETs u as the browser does and returns the status and page.
func visit(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// connectAs runs connect with args, allows access as subject, and returns
// the exit code, outputs and the page the browser saw.
func connectAs(t *testing.T, as *oauthserver.Server, data, subject string, args ...string) (int, string, string, string) {
	t.Helper()
	r := startConnect(t, data, args...)
	cb, err := as.Authorize(t.Context(), http.DefaultClient, r.authURL(t), subject)
	if err != nil {
		t.Fatal(err)
	}
	if cb.Host == "" || !strings.HasPrefix(cb.Host, "127.0.0.1:") || cb.Path != "/callback" {
		t.Fatalf("the authorization server sent the browser to %s", cb.Redacted())
	}
	status, page := visit(t, cb.String())
	if status != http.StatusOK {
		t.Fatalf("callback page %d: %s", status, page)
	}
	code, out, errs := r.wait(t)
	return code, out, errs, page
}

// TestConnectCLI: connect makes a connection through a loopback callback
// against a real authorization server and MCP server; connection ls,
// rename, default, revoke and rm manage it; a denied consent, a timeout
// and bad input fail with their exit codes; no token appears in any
// output, page or log.
func TestConnectCLI(t *testing.T) {
	data := t.TempDir()
	cfg := "connections:\n  allow_private_networks: true\n  allow_insecure_http: true\n  timeout: 5s\n"
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	as := oauthserver.New(t, &oauthserver.Options{Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}, RequireScopes: true})
	var seen strings.Builder // every output, page and log

	code, out, errs, page := connectAs(t, as, data, "alice", "connect", "remote", "--tenant", "acme", "--account", "work", "--url", rs.URL, "--no-browser", "-v")
	seen.WriteString(out + errs + page)
	if code != 0 || !strings.HasPrefix(out, "connected remote account work for tenant acme: oauth active default expires ") {
		t.Fatalf("connect: %d %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "\nOpen this URL to connect remote for tenant acme (account work):\n  "+as.URL+"/authorize?") {
		t.Errorf("connect's stderr: %q", errs)
	}
	if !strings.Contains(page, "Connected; you can close this tab") {
		t.Errorf("callback page: %q", page)
	}
	code, out, errs, page = connectAs(t, as, data, "bob", "connect", "remote", "--tenant", "acme", "--account", "personal", "--url", rs.URL, "--no-browser", "--json")
	seen.WriteString(out + errs + page)
	var info map[string]any
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil {
		t.Fatalf("connect --json: %d %q %q", code, out, errs)
	}
	if info["account"] != "personal" || info["default"] != false || info["state"] != "active" {
		t.Errorf("connect --json: %s", out)
	}

	// The grant is bound to the server; its tokens are what must never show.
	st, err := credential.Open(t.Context(), data, credential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	work := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}
	conn, err := st.Connection(t.Context(), work)
	if err != nil {
		t.Fatal(err)
	}
	if conn.OAuth.Resource != rs.URL || conn.OAuth.Issuer != as.URL {
		t.Errorf("grant bound to %q issued by %q", conn.OAuth.Resource, conn.OAuth.Issuer)
	}
	secrets := []string{conn.OAuth.AccessToken, conn.OAuth.RefreshToken}
	if c, err := st.Connection(t.Context(), credential.ConnectionKey{Scope: work.Scope, Provider: "remote", Account: "personal"}); err == nil {
		secrets = append(secrets, c.OAuth.AccessToken, c.OAuth.RefreshToken)
	}

	// ls --json: exactly the fields of a connection's info.
	code, out, errs = runIn(t, data, "", nil, "connection", "ls", "--json")
	seen.WriteString(out + errs)
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 2 {
		t.Fatalf("ls --json: %d %q %q", code, out, errs)
	}
	var keys []string
	for k := range list[1] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"account", "created", "default", "expiry", "issuer", "kind", "provider", "refreshable", "scopes", "state", "tenant"}; !slices.Equal(keys, want) {
		t.Errorf("ls --json fields %v, want %v", keys, want)
	}
	for _, c := range []struct {
		i    int
		k    string
		want any
	}{{0, "account", "personal"}, {1, "account", "work"}, {1, "tenant", "acme"}, {1, "provider", "remote"}, {1, "kind", "oauth"},
		{1, "state", "active"}, {1, "default", true}, {0, "default", false}, {1, "issuer", as.URL}, {1, "refreshable", true}} {
		if list[c.i][c.k] != c.want {
			t.Errorf("ls --json [%d].%s = %v, want %v", c.i, c.k, list[c.i][c.k], c.want)
		}
	}

	steps := []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"default", []string{"connection", "default", "remote", "personal", "--tenant", "acme"}, 0, "remote account personal for tenant acme is the default\n", ""},
		{"rename", []string{"connection", "rename", "remote", "personal", "home", "--tenant", "acme"}, 0, "renamed remote account personal to home for tenant acme\n", ""},
		{"rename taken", []string{"connection", "rename", "remote", "home", "work", "--tenant", "acme"}, 1, "",
			"Error: connection exists: remote account work for tenant acme already exists; remove it or choose another label\n"},
		{"revoke", []string{"connection", "revoke", "remote", "home", "--tenant", "acme"}, 0, "revoked remote account home for tenant acme\n", ""},
		{"revoke forget", []string{"connection", "revoke", "remote", "work", "--tenant", "acme", "--forget"}, 0, "revoked and removed remote account work for tenant acme\n", ""},
		{"rm", []string{"connection", "rm", "remote", "home", "--tenant", "acme"}, 0, "removed remote account home for tenant acme\n", ""},
		{"rm absent", []string{"connection", "rm", "remote", "home", "--tenant", "acme"}, 1, "",
			"Error: connection required: no remote account home for tenant acme (list them with skillgate connection ls)\n"},
		{"ls none", []string{"connection", "ls", "--tenant", "acme"}, 0, "", "no connections; make one with 'skillgate connect PROVIDER --tenant T'\n"},
		{"bad account", []string{"connection", "default", "remote", "a b", "--tenant", "acme"}, 2, "",
			"Error: invalid connection: account \"a b\": use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most 64 bytes\n"},
		{"no tenant", []string{"connection", "rm", "remote", "work"}, 2, "", "Error: invalid credential scope: a tenant is required (--tenant)\n"},
		{"group", []string{"connection"}, 2, "", "Error: connection needs a subcommand: ls, rename, default, revoke or rm (see 'skillgate connection --help')\n"},
		{"connect bad provider", []string{"connect", "Remote!", "--tenant", "acme", "--url", rs.URL}, 2, "",
			"Error: invalid connection: provider \"Remote!\": use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most 128 bytes, e.g. github\n"},
		{"connect no tenant", []string{"connect", "remote", "--url", rs.URL}, 2, "", "Error: invalid credential scope: a tenant is required (--tenant)\n"},
		{"connect no wait", []string{"connect", "remote", "--tenant", "acme", "--url", rs.URL, "--timeout", "0s"}, 2, "",
			"Error: --timeout 0s: give how long to wait for the browser, e.g. 10m\n"},
		{"connect bad url", []string{"connect", "remote", "--tenant", "acme", "--url", "ftp://x"}, 2, "",
			"Error: --url \"ftp://x\": give the remote MCP server's http(s) URL, without user info\n"},
		{"connect undeclared", []string{"connect", "remote", "--tenant", "acme"}, 1, "",
			"Error: no enabled skill declares a remote server \"remote\": a provider is the mcp.json ID of a server with a url; see a skill's servers with 'skillgate review SKILL', or give the server's URL with --url\n"},
	}
	revocations := as.Stats().Revocations
	for _, s := range steps {
		code, out, errs := runIn(t, data, "", nil, s.args...)
		seen.WriteString(out + errs)
		if code != s.code || out != s.out || errs != s.errs {
			t.Errorf("%s: code %d out %q err %q\nwant %d %q %q", s.name, code, out, errs, s.code, s.out, s.errs)
		}
		if s.name == "revoke" {
			if got := as.Stats().Revocations; got <= revocations {
				t.Errorf("revoke: the authorization server saw %d revocations, as before", got)
			}
			_, lsOut, _ := runIn(t, data, "", nil, "connection", "ls")
			seen.WriteString(lsOut)
			lines := strings.Split(strings.TrimSuffix(lsOut, "\n"), "\n")
			if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "TENANT AGENT PROVIDER ACCOUNT KIND STATE DEFAULT EXPIRES REFRESHED" ||
				strings.Join(strings.Fields(lines[1])[:7], " ") != "acme * remote home oauth revoked yes" ||
				strings.Join(strings.Fields(lines[2])[:7], " ") != "acme * remote work oauth active no" {
				t.Errorf("ls after revoke:\n%s", lsOut)
			}
		}
	}
	// Every change the CLI made is audited in the operator's name, the
	// failed ones not at all.
	code, out, errs = runIn(t, data, "", nil, "audit", "query", "--action", "connection.", "--json")
	seen.WriteString(out + errs)
	if code != 0 {
		t.Fatalf("audit query: %d %q %q", code, out, errs)
	}
	var audited []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var r struct {
			Action, Actor, Subject string
			Data                   map[string]any
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit query line %q: %v", line, err)
		}
		audited = append(audited, fmt.Sprintf("%s %s %s %v/%v", r.Actor, r.Action, r.Subject, r.Data["tenant"], r.Data["account"]))
	}
	if want := []string{
		"operator:local connection.connect remote acme/work", "operator:local connection.connect remote acme/personal",
		"operator:local connection.default remote acme/personal", "operator:local connection.rename remote acme/personal",
		"operator:local connection.revoke remote acme/home", "operator:local connection.revoke remote acme/work",
		"operator:local connection.remove remote acme/home",
	}; !slices.Equal(audited, want) {
		t.Errorf("audited:\n%s\nwant:\n%s", strings.Join(audited, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range []string{"connect", "connection", "connection ls", "connection rename", "connection default", "connection revoke", "connection rm"} {
		code, out, _ := runIn(t, data, "", nil, append(strings.Fields(c), "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%s --help: %d %q", c, code, out)
		}
	}

	// Denied at the consent page: exit 1, the server's answer named.
	r := startConnect(t, data, "connect", "remote", "--tenant", "acme", "--account", "denied", "--url", rs.URL, "--no-browser")
	au, err := url.Parse(r.authURL(t))
	if err != nil {
		t.Fatal(err)
	}
	redirect, _ := url.Parse(au.Query().Get("redirect_uri"))
	forged := *redirect
	forged.RawQuery = url.Values{"state": {"forged"}, "code": {"x"}}.Encode()
	if status, page := visit(t, forged.String()); status != http.StatusBadRequest || !strings.Contains(page, "Connection failed") {
		t.Errorf("forged callback: %d %q", status, page)
	}
	redirect.RawQuery = url.Values{"state": {au.Query().Get("state")}, "error": {"access_denied"}}.Encode()
	status, page := visit(t, redirect.String())
	code, out, errs = r.wait(t)
	seen.WriteString(out + errs + page)
	if wantErr := "Error: connect remote account denied for tenant acme: oauth authorization failed: the authorization server answered access_denied (); start again with a new authorization\n"; code != 1 || out != "" || !strings.HasSuffix(errs, wantErr) {
		t.Errorf("denied: %d %q %q", code, out, errs)
	}
	if status != http.StatusBadRequest || !strings.Contains(page, "Connection failed") || !strings.Contains(page, "access_denied") {
		t.Errorf("denied page: %d %q", status, page)
	}

	// Nobody comes back: exit 1 after --timeout.
	r = startConnect(t, data, "connect", "remote", "--tenant", "acme", "--url", rs.URL, "--no-browser", "--timeout", "300ms")
	code, out, errs = r.wait(t)
	if want := "Error: connect remote account default for tenant acme: no answer from the browser within 300ms: open the URL and allow access, or run connect again (with a longer --timeout)\n"; code != 1 || !strings.HasSuffix(errs, want) {
		t.Errorf("timeout: %d %q %q", code, out, errs)
	}
	if list, _ := st.Connections(context.Background()); len(list) != 0 {
		t.Errorf("failed connects stored %v", list)
	}
	for _, s := range secrets {
		if s == "" || strings.Contains(seen.String(), s) {
			t.Fatalf("a token is empty or was printed:\n%s", seen.String())
		}
		assertNoSecret(t, data, s)
	}
}

// TestConnectProviderFromSkill: without --url, connect finds the remote
// server PROVIDER among the servers skills declare (here a first_party
// skill's mcp.json); two skills declaring it with different URLs make
// connect ask for --url, and a disabled skill's server does not count.
func TestConnectProviderFromSkill(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	as := oauthserver.New(t, &oauthserver.Options{Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}})
	skill := func(name, serverURL string) map[string]string {
		man := `{"$schema":"https://skillgate.dev/schemas/manifest.v1.json","skillId":"` + name + `","version":"sha256:` + strings.Repeat("0", 64) + `",` +
			`"providers":[{"type":"mcp","serverId":"remote"}],` +
			`"capabilities":[{"extensionId":"remote","capabilityId":"whoami","description":"Who the token is for.",` +
			`"inputSchema":{"type":"object"},` +
			`"risk":{"riskLevel":{"value":"read","source":"operator"},"sideEffects":{"value":"none","source":"operator"},"dataEgress":{"value":"network","source":"operator"}}}]}`
		return map[string]string{
			name + "/SKILL.md":      "---\nname: " + name + "\ndescription: A remote server.\n---\nUse whoami.\n",
			name + "/mcp.json":      `{"mcpServers":{"remote":{"type":"http","url":"` + serverURL + `"}}}`,
			name + "/manifest.json": man,
		}
	}
	write(t, root, skill("remote-a", rs.URL))
	write(t, root, skill("remote-b", "https://mcp.example.com/mcp"))
	signing := trustedKey(t, data)
	signSkill(t, data, filepath.Join(root, "remote-a"))
	signSkill(t, data, filepath.Join(root, "remote-b"))
	cfg := "roots:\n  - path: " + root + "\n    trust: first_party\n" + signing +
		"connections:\n  allow_private_networks: true\n  allow_insecure_http: true\n"
	if err := os.WriteFile(filepath.Join(data, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, data, "scan"); code != 0 {
		t.Fatalf("scan: %s %s", out, errs)
	}
	code, out, errs := run(t, data, "connect", "remote", "--tenant", "acme", "--no-browser")
	if want := "Error: remote server \"remote\" has 2 different URLs:\n  remote-a: " + rs.URL + "\n  remote-b: https://mcp.example.com/mcp\npass --url URL to choose one\n"; code != 1 || out != "" || errs != want {
		t.Fatalf("two URLs: %d %q %q\nwant %q", code, out, errs, want)
	}
	if code, out, errs := run(t, data, "disable", "remote-b"); code != 0 {
		t.Fatalf("disable: %s %s", out, errs)
	}
	code, out, errs, _ = connectAs(t, as, data, "alice", "connect", "remote", "--tenant", "acme", "--account", "lab", "--no-browser")
	if code != 0 || !strings.HasPrefix(out, "connected remote account lab for tenant acme: oauth active default expires ") {
		t.Fatalf("connect: %d %q %q", code, out, errs)
	}
	st, err := credential.Open(t.Context(), data, credential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Connection(t.Context(), credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "lab"})
	if err != nil || c.OAuth.Resource != rs.URL {
		t.Fatalf("stored %v %v", c, err)
	}
	// An agent's own connection: its own default, listed with the agent.
	code, out, errs, _ = connectAs(t, as, data, "bob", "connect", "remote", "--tenant", "acme", "--agent", "drafter", "--account", "bob", "--no-browser")
	if code != 0 || !strings.HasPrefix(out, "connected remote account bob for agent acme/drafter: oauth active default expires ") ||
		!strings.Contains(errs, "Open this URL to connect remote for agent acme/drafter (account bob):\n  ") {
		t.Fatalf("connect --agent: %d %q %q", code, out, errs)
	}
	_, out, _ = run(t, data, "connection", "ls")
	var rows []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		rows = append(rows, strings.Join(strings.Fields(l)[:7], " "))
	}
	if want := []string{"acme * remote lab oauth active yes", "acme drafter remote bob oauth active yes"}; !slices.Equal(rows, want) {
		t.Errorf("ls:\n%s", out)
	}
}

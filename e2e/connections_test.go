package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/app"
	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/credential"
)

// tokenLifetime is how long the authorization server's access tokens
// live: short, so that serve refreshes them many times during the test.
const tokenLifetime = 5 * time.Second

// TestConnections is issue 34's acceptance over the real binary, a real
// OAuth authorization server and a real remote MCP server on loopback.
// An operator tenant connects with the CLI and installs a skill whose
// mcp.json declares the remote server (introspected with that
// connection); tenant acme connects through the console in Chromium,
// tenant beta does not. acme's agent calls whoami as its account; beta's
// does not list it, and calling it is told which connection is required.
// Tokens living 5 s are refreshed by serve (connections.refresh_lead and
// refresh_interval) without the agent noticing; once the grant is revoked
// at the authorization server the connection expires, acme's agent is
// told its tools changed, whoami is gone and a call says the account
// expired, and pending names both tenants; connecting again with the CLI
// brings it back. No token or client secret is ever in serve's log, the
// audit log or the CLI's output.
//
// The authorization server retires an access token as soon as it is
// refreshed, before serve has stored the new one: acme's agent calls all
// along, and a call landing in that moment is answered 401 and made again
// with the new token, so every call succeeds.
func TestConnections(t *testing.T) {
	chrome := chromiumPath(t)
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: tokenLifetime})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as})
	f := emptyFixture(t)
	f.writeConfig(t, "connections:\n  allow_private_networks: true\n  allow_insecure_http: true\n  refresh_lead: 1s\n  refresh_interval: 250ms\n")
	var seen syncbuf.Buffer // every output of the CLI and of serve
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("outputs:\n%s", seen.String())
		}
	})

	// The operator's tenant connects first, then installs the skill:
	// install introspects the remote server with ops's connection.
	out := f.connectCLI(t, &seen, as, "operator", "connect", "remote", "--tenant", "ops", "--url", rs.URL, "--no-browser")
	if !strings.HasPrefix(out, "connected remote account default for tenant ops: oauth active default expires ") {
		t.Fatalf("connect ops: %q", out)
	}
	watch := watchTokens(t, f)

	src := writeImport(t, "identity", "---\nAsk the remote server who you are with `whoami`.\n",
		map[string]any{"remote": map[string]any{"type": "http", "url": rs.URL}})
	if code, _ := f.credentialRun(t, &seen, "", nil, "install", src, "--tenant", "ops"); code != 0 && code != 1 {
		t.Fatalf("install: exit %d", code)
	}
	for _, args := range [][]string{
		{"complete", "identity", "remote/whoami", "--risk", "read", "--side-effects", "none", "--egress", "none", "--why", "reports who the token is for, nothing else"},
		{"approve", "identity"},
		{"enable", "identity"},
	} {
		if code, out := f.credentialRun(t, &seen, "", nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}

	admin := f.tokenSecret(t, "alice", "T0", "ops")
	acmeSecret, betaSecret := f.tokenSecret(t, "a1", "T3", "acme"), f.tokenSecret(t, "b1", "T3", "beta")
	srv := startServe(t, []string{"-v", "--data", f.data, "serve", "--addr", "127.0.0.1:0"},
		func(line string) { seen.Write([]byte(line + "\n")) })

	// acme connects through the console, in Chromium.
	b := chromeTab(t, chrome)
	base := strings.Replace(srv.url, "127.0.0.1", "localhost", 1)
	var rows []string
	if err := chromedp.Run(b,
		chromedp.Navigate(base+"/admin/login"),
		chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, admin+kb.Enter),
		chromedp.WaitVisible(`//h1[text()="Overview"]`),
		chromedp.Click(`//nav/a[text()="Connections"]`),
		chromedp.WaitVisible(`//h1[text()="Connections"]`),
		chromedp.WaitVisible(`#c-tenant`),
		chromedp.SendKeys(`#c-tenant`, "acme"),
		chromedp.SendKeys(`#c-provider`, "remote"),
		chromedp.SendKeys(`#c-account`, "work"),
		chromedp.Click(`//button[text()="Connect"]`),
		chromedp.WaitVisible(`#allow`),
		chromedp.SetValue(`#account`, "acme-alice"),
		chromedp.Click(`#allow`),
		chromedp.WaitVisible(`//main[h1="Connections"]/p[@class="done" and normalize-space()="Connected remote account work for tenant acme."]`),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('table.connections tbody tr')).map(tr =>
  [0, 1, 2, 3, 5, 6].map(i => tr.cells[i].innerText.trim()).filter(s => s).join(' '))`, &rows),
	); err != nil {
		var now string
		_ = chromedp.Run(b, chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 600) : ""`, &now))
		t.Fatalf("connecting acme in the console: %v; the page shows:\n%s", err, now)
	}
	if want := "acme remote work active default\nops remote default active default"; strings.Join(rows, "\n") != want {
		t.Fatalf("the console's connections: %q; want %q", rows, want)
	}

	acme, acmeChanged := connectAgent(t, srv, acmeSecret)
	beta, _ := connectAgent(t, srv, betaSecret)
	if !hasTool(t, acme, "whoami") {
		t.Fatal("acme's agent does not list whoami")
	}
	if hasTool(t, beta, "whoami") {
		t.Fatal("beta's agent lists whoami without a connection")
	}
	acmeKey := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}
	first := whoami(t, acme)
	if first.Subject != "acme-alice" {
		t.Fatalf("acme's whoami: %+v", first)
	}
	got, isErr := caller(beta)(t, "whoami", map[string]any{})
	if want := "skillgate: connection required: remote for tenant beta (no account is connected; an operator connects one with skillgate connect remote --tenant beta)"; !isErr || got != want {
		t.Errorf("beta's whoami: %v %q\nwant %q", isErr, got, want)
	}

	// For several lifetimes acme's agent keeps calling while serve
	// refreshes the token, none the wiser.
	refreshes := as.Stats().RefreshGrants
	deadline := time.Now().Add(4 * tokenLifetime)
	later, calls := first, 0
	for time.Now().Before(deadline) || as.Stats().RefreshGrants < refreshes+3 {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("serve refreshed %d grants in %v", as.Stats().RefreshGrants-refreshes, 4*tokenLifetime+30*time.Second)
		}
		if later = whoami(t, acme); later.Subject != first.Subject {
			t.Fatalf("call %d while serve refreshes: %+v; first %+v", calls, later, first)
		}
		calls++
		time.Sleep(150 * time.Millisecond)
	}
	if later.TokenID == first.TokenID {
		t.Fatalf("after %d calls over the token's expiry the same token answers: %+v", calls, later)
	}

	// The grant is revoked at the authorization server: the next refresh
	// fails, the connection expires, acme's agent is told.
	drain(acmeChanged)
	for deadline := time.Now().Add(30 * time.Second); ; {
		c := watch.connection(t, acmeKey)
		if c.State == credential.StateExpired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("acme's connection is %s after its client was revoked", c.State)
		}
		if c.OAuth != nil {
			as.RevokeClient(c.OAuth.Client.ClientID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitTool(t, acme, acmeChanged, "whoami", false)
	got, isErr = caller(acme)(t, "whoami", map[string]any{})
	if want := "skillgate: connection required: remote for tenant acme (account work is expired; an operator reconnects it with skillgate connect remote --tenant acme --account work)"; !isErr || got != want {
		t.Errorf("acme's whoami once expired: %v %q\nwant %q", isErr, got, want)
	}
	if code, out := f.credentialRun(t, &seen, "", nil, "connection", "ls", "--tenant", "acme"); code != 0 || !strings.Contains(out, "acme    *      remote    work     oauth  expired") {
		t.Errorf("connection ls once expired: %d %q", code, out)
	}
	if code, out := f.credentialRun(t, &seen, "", nil, "pending"); code != 0 || !strings.Contains(out, "tenant acme needs remote") || !strings.Contains(out, "tenant beta needs remote") {
		t.Errorf("pending: %d %q", code, out)
	}

	// acme connects again with the CLI: whoami comes back.
	drain(acmeChanged)
	out = f.connectCLI(t, &seen, as, "acme-alice", "connect", "remote", "--tenant", "acme", "--account", "work", "--no-browser")
	if !strings.HasPrefix(out, "connected remote account work for tenant acme: oauth active default expires ") {
		t.Fatalf("reconnect acme: %q", out)
	}
	waitTool(t, acme, acmeChanged, "whoami", true)
	if again := whoami(t, acme); again.Subject != "acme-alice" {
		t.Fatalf("acme's whoami after reconnecting: %+v", again)
	}

	// No token anywhere.
	for _, args := range [][]string{{"audit", "query", "-n", "1000"}, {"audit", "query", "-n", "1000", "--json"}, {"connection", "ls"}, {"connection", "ls", "--json"}} {
		if code, _ := f.credentialRun(t, &seen, "", nil, args...); code != 0 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	secrets := watch.stop()
	if len(secrets) < 6 {
		t.Fatalf("only %d tokens seen in the credential store", len(secrets))
	}
	all := seen.String()
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Fatal("a token is in the output of serve or of the CLI")
		}
	}
	if !strings.Contains(all, "connection.connect") {
		t.Errorf("the audit log does not name the connections made")
	}
}

// chromiumPath finds Chromium, or skips t.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// chromeTab starts a headless Chromium and returns a context of one tab,
// ended with the test.
func chromeTab(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancel3)
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// connectCLI runs `skillgate connect` (args), plays the person allowing
// access as subject at the authorization server, brings the browser back
// to the loopback callback, and returns connect's stdout once it exits 0.
// Everything it printed goes to seen.
func (f *fixture) connectCLI(t *testing.T, seen *syncbuf.Buffer, as *oauthserver.Server, subject string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--data", f.data}, args...)...)
	var out, errb syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		seen.Write([]byte(out.String() + errb.String()))
	}()
	var authURL string
	for deadline := time.Now().Add(30 * time.Second); authURL == ""; {
		if _, rest, ok := strings.Cut(errb.String(), "):\n  "); ok {
			if u, _, ok := strings.Cut(rest, "\n"); ok {
				authURL = u
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("%v ended before printing a URL: %v\n%s", args, err, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			t.Fatalf("%v printed no URL: %q", args, errb.String())
		}
	}
	cb, err := as.Authorize(t.Context(), http.DefaultClient, authURL, subject)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	seen.Write(page)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%v: the callback answered %d: %s", args, resp.StatusCode, page)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%v did not end after the callback", args)
	}
	return out.String()
}

// connectAgent connects an agent to srv with the token secret and returns
// its session and a channel receiving its tools/list_changed.
func connectAgent(t *testing.T, srv *server, secret string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 1)
	cs := srv.connectBearer(t, secret, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	return cs, changed
}

// hasTool reports whether cs lists the tool name.
func hasTool(t *testing.T, cs *mcp.ClientSession, name string) bool {
	t.Helper()
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == name {
			return true
		}
	}
	return false
}

// waitTool waits for a tools/list_changed on changed after which cs lists
// name (want) or no longer does.
func waitTool(t *testing.T, cs *mcp.ClientSession, changed chan struct{}, name string, want bool) {
	t.Helper()
	notified := false
	deadline := time.After(30 * time.Second)
	for !notified || hasTool(t, cs, name) != want {
		select {
		case <-changed:
			notified = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%s listed is not %v after 30 s (tools/list_changed received: %v)", name, want, notified)
		}
	}
}

// whoami calls the remote server's whoami through cs and returns what it
// reported.
func whoami(t *testing.T, cs *mcp.ClientSession) remotemcp.Whoami {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("whoami: %s", textOf(res))
	}
	var w remotemcp.Whoami
	if err := json.Unmarshal([]byte(textOf(res)), &w); err != nil {
		t.Fatalf("whoami answered %q: %v", textOf(res), err)
	}
	return w
}

// tokenWatch reads the credential store behind serve's back, the way
// serve opens it, and keeps every token and client secret it ever holds.
type tokenWatch struct {
	st   *credential.Store
	a    *app.App
	mu   sync.Mutex
	seen map[string]bool
	done chan struct{}
	wg   sync.WaitGroup
}

// watchTokens opens f's credential store and polls it until stop.
func watchTokens(t *testing.T, f *fixture) *tokenWatch {
	t.Helper()
	a := app.New(app.Options{Data: f.data, Getenv: os.Getenv})
	st, err := a.OpenCredentials(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	w := &tokenWatch{st: st, a: a, seen: map[string]bool{}, done: make(chan struct{})}
	w.collect(t.Context())
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.done:
				return
			case <-time.After(100 * time.Millisecond):
				w.collect(context.Background())
			}
		}
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

// collect reloads the store and keeps its secrets.
func (w *tokenWatch) collect(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.st.Reload(ctx); err != nil {
		return
	}
	list, err := w.st.Connections(ctx)
	if err != nil {
		return
	}
	for _, info := range list {
		c, err := w.st.Connection(ctx, info.ConnectionKey)
		if err != nil || c.OAuth == nil {
			continue
		}
		for _, s := range []string{c.OAuth.AccessToken, c.OAuth.RefreshToken, c.OAuth.Client.ClientSecret} {
			if s != "" {
				w.seen[s] = true
			}
		}
	}
}

// connection is k's connection as the store holds it now.
func (w *tokenWatch) connection(t *testing.T, k credential.ConnectionKey) credential.Connection {
	t.Helper()
	w.collect(t.Context())
	w.mu.Lock()
	defer w.mu.Unlock()
	c, err := w.st.Connection(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stop ends the polling (once) and returns the secrets seen.
func (w *tokenWatch) stop() []string {
	select {
	case <-w.done:
	default:
		close(w.done)
		w.wg.Wait()
		w.a.Close()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var list []string
	for s := range w.seen {
		list = append(list, s)
	}
	slices.Sort(list)
	return list
}

package admin_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// fakeConnections records the calls the console makes and answers with
// err (nil: success).
type fakeConnections struct {
	mu       sync.Mutex
	list     []credential.ConnectionInfo
	calls    []string
	err      error
	complete func(url.Values) (credential.ConnectionInfo, error)
}

var _ admin.Connections = (*fakeConnections)(nil)

func (f *fakeConnections) call(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
	return f.err
}

func (f *fakeConnections) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *fakeConnections) List(context.Context) ([]credential.ConnectionInfo, error) {
	return f.list, nil
}

func (f *fakeConnections) Start(_ context.Context, k credential.ConnectionKey, redirectURI string, makeDefault bool, actor string) (string, error) {
	if err := f.call(fmt.Sprintf("start %s %s default=%t by %s", k, redirectURI, makeDefault, actor)); err != nil {
		return "", err
	}
	return "https://as.example.com/authorize?client_id=c1&state=s1", nil
}

func (f *fakeConnections) Complete(_ context.Context, q url.Values) (credential.ConnectionInfo, error) {
	_ = f.call("complete " + q.Encode())
	return f.complete(q)
}

func (f *fakeConnections) Rename(_ context.Context, k credential.ConnectionKey, account, actor string) error {
	return f.call(fmt.Sprintf("rename %s to %s by %s", k, account, actor))
}

func (f *fakeConnections) SetDefault(_ context.Context, k credential.ConnectionKey, actor string) error {
	return f.call(fmt.Sprintf("default %s by %s", k, actor))
}

func (f *fakeConnections) Revoke(_ context.Context, k credential.ConnectionKey, forget bool, actor string) error {
	return f.call(fmt.Sprintf("revoke %s forget=%t by %s", k, forget, actor))
}

// connConsole is a console with only connections (conns may be nil), on
// loopback; publicURL is admin.Options.PublicURL.
func connConsole(t *testing.T, conns admin.Connections, publicURL string) *console {
	t.Helper()
	opts := admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { p, ok := tokens[s]; return s, p, ok },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			p, ok := tokens[id]
			return p, ok, nil
		},
		PublicURL: publicURL,
	}
	if conns != nil {
		opts.Connections = conns
	}
	h, err := admin.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	return &console{url: ts.URL, handler: h, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var acmeWork = url.Values{"tenant": {"acme"}, "provider": {"remote"}, "account": {"work"}}

// with is v plus the pairs k1, v1, k2, v2, ...
func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// TestConnectionsForms: every form of the Connections page needs the
// session's CSRF token, checks its input before calling the service
// (with the messages of the credential package), maps the service's
// errors to statuses, and on success redirects with a notice; connecting
// answers with a page that continues to the authorization server, whose
// callback URL is the console's own (or Options.PublicURL's).
func TestConnectionsForms(t *testing.T) {
	f := &fakeConnections{}
	c := connConsole(t, f, "")
	csrf := c.signIn(t, "sgt_admin")
	const by = "operator:ops/alice@T0"
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		err    error // the service's answer
		status int
		loc    string // the redirect, for a 303
		page   string // text the page holds
		calls  string
	}{
		{"connect without CSRF", "connect", acmeWork, nil, 403, "", "the form&#39;s CSRF token is missing or wrong: reload the page and submit it again", ""},
		{"rename with a wrong CSRF", "rename", with(acmeWork, "to", "home", "csrf", "x"), nil, 403, "", "CSRF token is missing or wrong", ""},
		{"default without CSRF", "default", acmeWork, nil, 403, "", "CSRF token is missing or wrong", ""},
		{"revoke without CSRF", "revoke", acmeWork, nil, 403, "", "CSRF token is missing or wrong", ""},
		{"no tenant", "connect", with(acmeWork, "csrf", csrf, "tenant", ""), nil, 400, "", "invalid credential scope: a tenant is required (--tenant)", ""},
		{"bad agent", "connect", with(acmeWork, "csrf", csrf, "agent", "a//b"), nil, 400, "",
			"invalid credential scope: invalid principal: agent id &#34;a//b&#34; has an empty segment: no &#39;/&#39; at its start or end, nor two in a row", ""},
		{"bad provider", "connect", with(acmeWork, "csrf", csrf, "provider", "Remote"), nil, 400, "",
			"invalid connection: provider &#34;Remote&#34;: use lower-case letters, digits, &#39;.&#39;, &#39;_&#39; and &#39;-&#39; (optionally category/name), at most 128 bytes, e.g. github", ""},
		{"bad account", "connect", with(acmeWork, "csrf", csrf, "account", "-x"), nil, 400, "",
			"invalid connection: account &#34;-x&#34;: use letters, digits, &#39;.&#39;, &#39;_&#39;, &#39;-&#39;, &#39;@&#39; and &#39;&#43;&#39;, starting with a letter or digit, at most 64 bytes", ""},
		{"bad new label", "rename", with(acmeWork, "csrf", csrf, "to", "a b"), nil, 400, "", "invalid connection: account &#34;a b&#34;", ""},
		{"empty new label", "rename", with(acmeWork, "csrf", csrf), nil, 400, "", "invalid connection: the account is empty; name it, e.g. work or alice@example.com", ""},
		{"unknown operation", "merge", with(acmeWork, "csrf", csrf), nil, 404, "", "unknown operation &#34;merge&#34;", ""},
		{"connect", "connect", with(acmeWork, "csrf", csrf, "default", "1"), nil, 200, "",
			`<meta http-equiv="refresh" content="0; url=https://as.example.com/authorize?client_id=c1&amp;state=s1">`,
			"start remote account work for tenant acme " + c.url + "/admin/connections/callback default=true by " + by},
		{"connect an agent's default account", "connect", url.Values{"csrf": {csrf}, "tenant": {"acme"}, "agent": {"planner"}, "provider": {"remote"}}, nil, 200, "",
			`<a href="https://as.example.com/authorize?client_id=c1&amp;state=s1" id="continue">Continue to as.example.com</a>`,
			"start remote account default for agent acme/planner " + c.url + "/admin/connections/callback default=false by " + by},
		{"connect to a provider without a server", "connect", with(acmeWork, "csrf", csrf), fmt.Errorf("%w: remote: no installed skill declares it", connection.ErrNoServer), 400, "",
			"no remote server for the provider: remote: no installed skill declares it",
			"start remote account work for tenant acme " + c.url + "/admin/connections/callback default=false by " + by},
		{"discovery fails", "connect", with(acmeWork, "csrf", csrf), fmt.Errorf("connect: %w: no metadata", oauth.ErrDiscovery), 502, "",
			"connect: oauth discovery failed: no metadata", "start remote account work for tenant acme " + c.url + "/admin/connections/callback default=false by " + by},
		{"rename", "rename", with(acmeWork, "csrf", csrf, "to", "home"), nil, 303, "/admin/connections?done=Renamed+remote+account+work+for+tenant+acme+to+home.", "",
			"rename remote account work for tenant acme to home by " + by},
		{"rename onto another", "rename", with(acmeWork, "csrf", csrf, "to", "home"), fmt.Errorf("%w: taken", credential.ErrConnectionExists), 409, "", "connection exists: taken",
			"rename remote account work for tenant acme to home by " + by},
		{"default", "default", with(acmeWork, "csrf", csrf), nil, 303, "/admin/connections?done=remote+account+work+for+tenant+acme+is+the+default.", "",
			"default remote account work for tenant acme by " + by},
		{"default of a missing one", "default", with(acmeWork, "csrf", csrf), fmt.Errorf("%w: no such", credential.ErrNoConnection), 404, "", "connection required: no such",
			"default remote account work for tenant acme by " + by},
		{"revoke", "revoke", with(acmeWork, "csrf", csrf), nil, 303, "/admin/connections?done=Revoked+remote+account+work+for+tenant+acme.", "",
			"revoke remote account work for tenant acme forget=false by " + by},
		{"revoke and forget", "revoke", with(acmeWork, "csrf", csrf, "forget", "1"), nil, 303, "/admin/connections?done=Revoked+and+forgot+remote+account+work+for+tenant+acme.", "",
			"revoke remote account work for tenant acme forget=true by " + by},
		{"revocation refused", "revoke", with(acmeWork, "csrf", csrf), fmt.Errorf("%w: 503", oauth.ErrRevocation), 502, "", "oauth revocation failed: 503",
			"revoke remote account work for tenant acme forget=false by " + by},
	} {
		f.err = tc.err
		status, loc, page := c.post(t, "/admin/connections/"+tc.path, tc.form)
		if status != tc.status || loc != tc.loc || !strings.Contains(page, tc.page) {
			t.Errorf("%s: %d %q; want %d %q with %s\n%s", tc.name, status, loc, tc.status, tc.loc, tc.page, page)
		}
		if got := strings.Join(f.taken(), "\n"); got != tc.calls {
			t.Errorf("%s: calls %q; want %q", tc.name, got, tc.calls)
		}
	}

	// Behind a proxy: the callback is at the public URL.
	f.err = nil
	p := connConsole(t, f, "https://gw.example.com/")
	csrf = p.signIn(t, "sgt_admin")
	if status, _, _ := p.post(t, "/admin/connections/connect", with(acmeWork, "csrf", csrf)); status != 200 {
		t.Fatalf("connect behind a proxy: %d", status)
	}
	if got, want := strings.Join(f.taken(), ""), "start remote account work for tenant acme https://gw.example.com/admin/connections/callback default=false by "+by; got != want {
		t.Errorf("behind a proxy: %q; want %q", got, want)
	}
	_, err := admin.New(admin.Options{Verify: func(string) (string, capability.Principal, bool) { return "", capability.Principal{}, false },
		Token: func(context.Context, string) (capability.Principal, bool, error) {
			return capability.Principal{}, false, nil
		},
		PublicURL: "gw.example.com"})
	if want := `admin: Options.PublicURL "gw.example.com": want the scheme and host browsers reach the console at, such as https://gw.example.com`; err == nil || err.Error() != want {
		t.Errorf("a public URL without a scheme: %v; want %s", err, want)
	}
}

// TestConnectionsCallback: the callback needs no session (a browser
// coming back from the authorization server does not send the
// SameSite=Strict cookie); on success it shows the notice and continues
// to the Connections page, on failure it shows why with the error's
// status.
func TestConnectionsCallback(t *testing.T) {
	f := &fakeConnections{}
	c := connConsole(t, f, "")
	work := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}
	for _, tc := range []struct {
		name   string
		query  string
		err    error
		status int
		page   string
	}{
		{"connected", "code=c&state=s", nil, 200, `<meta http-equiv="refresh" content="0; url=/admin/connections?done=Connected&#43;remote&#43;account&#43;work&#43;for&#43;tenant&#43;acme.">`},
		{"connected notice", "code=c&state=s", nil, 200, `<p class="done" role="status">Connected remote account work for tenant acme.</p>`},
		{"stale", "code=c&state=old", fmt.Errorf("%w: it is older than 10m0s, was used already, or was not started here; start the connection again", connection.ErrUnknownFlow), 400,
			"no authorization is waiting for this callback: it is older than 10m0s, was used already, or was not started here; start the connection again"},
		{"denied", "error=access_denied&state=s", fmt.Errorf("connect remote account work for tenant acme: %w: the authorization server answered \"access_denied\"", oauth.ErrAuthorization), 403,
			"connect remote account work for tenant acme: oauth authorization failed: the authorization server answered &#34;access_denied&#34;"},
	} {
		f.complete = func(url.Values) (credential.ConnectionInfo, error) {
			return credential.ConnectionInfo{ConnectionKey: work, State: credential.StateActive}, tc.err
		}
		status, _, page := c.get(t, "/admin/connections/callback?"+tc.query)
		if status != tc.status || !strings.Contains(page, tc.page) {
			t.Errorf("%s: %d; want %d with %s\n%s", tc.name, status, tc.status, tc.page, page)
		}
		if got := strings.Join(f.taken(), ""); got != "complete "+tc.query {
			t.Errorf("%s: calls %q", tc.name, got)
		}
	}
}

// TestConnectionsPage: the page lists connections (never a secret field)
// with their forms, a default without "Make default", a revoked one
// with "Reconnect" instead of "Revoke"; without connections configured it says so, and its
// actions and callback answer 404.
func TestConnectionsPage(t *testing.T) {
	exp := time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)
	f := &fakeConnections{list: []credential.ConnectionInfo{
		{ConnectionKey: credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "home"}, Kind: credential.KindOAuth,
			State: credential.StateRevoked},
		{ConnectionKey: credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}, Kind: credential.KindOAuth,
			State: credential.StateActive, Default: true, Scopes: []string{"tools", "offline_access"}, Expiry: exp, Refreshed: exp.Add(-time.Hour), LastError: "oauth token request failed: 503"},
	}}
	c := connConsole(t, f, "")
	c.signIn(t, "sgt_admin")
	status, _, page := c.get(t, "/admin/connections")
	rows := rowsRE.FindAllStringSubmatch(page, -1)
	var got []string
	for _, r := range rows {
		got = append(got, cellsOf(r[1]))
	}
	want := []string{
		"acme |  | remote | home | oauth | revoked |  |  | — | never |  | Rename Make default Reconnect Revoke and forget",
		"acme |  | remote | work | oauth | active | default | tools offline_access | 2026-11-29 11:00:00Z | 2026-11-29 10:00:00Z | oauth token request failed: 503 | Rename Revoke Revoke and forget",
	}
	if status != 200 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("page %d rows:\n%s\nwant:\n%s", status, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(page, `<a href="/admin/connections" aria-current="page">Connections</a>`) {
		t.Error("the navigation does not mark Connections")
	}

	off := connConsole(t, nil, "")
	csrf := off.signIn(t, "sgt_admin")
	const msg = "connections are not configured on this server: skillgate serve needs a credential store (skillgate credential init)"
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/admin/connections", 200}, {"POST", "/admin/connections/connect", 404}, {"GET", "/admin/connections/callback?code=c&state=s", 404}} {
		var status int
		var page string
		if tc.method == "GET" {
			status, _, page = off.get(t, tc.path)
		} else {
			status, _, page = off.post(t, tc.path, with(acmeWork, "csrf", csrf))
		}
		if status != tc.status || !strings.Contains(page, msg) {
			t.Errorf("%s %s without connections: %d; want %d with %s\n%s", tc.method, tc.path, status, tc.status, msg, page)
		}
	}
}

// rowsRE and cellRE find the connections table's rows and their cells.
var (
	rowsRE   = regexp.MustCompile(`(?s)<tr class="conn-[a-z]+">(.*?)</tr>`)
	cellRE   = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	tagRE    = regexp.MustCompile(`(?s)<[^>]*>`)
	buttonTx = regexp.MustCompile(`(?s)<button[^>]*>(.*?)</button>`)
)

// cellsOf renders a row's cells as text joined by " | ", a cell with
// buttons as their texts.
func cellsOf(row string) string {
	var cells []string
	for _, m := range cellRE.FindAllStringSubmatch(row, -1) {
		if bs := buttonTx.FindAllStringSubmatch(m[1], -1); bs != nil {
			var texts []string
			for _, b := range bs {
				texts = append(texts, b[1])
			}
			cells = append(cells, strings.Join(texts, " "))
			continue
		}
		cells = append(cells, strings.TrimSpace(html.UnescapeString(tagRE.ReplaceAllString(m[1], ""))))
	}
	return strings.Join(cells, " | ")
}

package admin_test

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/audit"
)

// htmlText is s as html/template writes it in an element's text.
func htmlText(s string) string {
	return strings.ReplaceAll(template.HTMLEscapeString(s), "+", "&#43;")
}

// TestPrincipalsRefusedConsole: the grant form and the policy replay form
// refuse a principal with control characters, bidi formatting characters
// or empty '/' segments with Principal.Validate's message; nothing is
// stored.
func TestPrincipalsRefusedConsole(t *testing.T) {
	c := newConsole(t)
	csrf := c.signIn(t, "sgt_admin")
	for _, tc := range []struct{ principal, want string }{
		{"acme/x\x00y", `invalid principal: agent id "x\x00y" contains control characters or invalid UTF-8`},
		{"acme/x\x07y", `invalid principal: agent id "x\ay" contains control characters or invalid UTF-8`},
		{"acme/x\x1b[2Jy", `invalid principal: agent id "x\x1b[2Jy" contains control characters or invalid UTF-8`},
		{"acme/x\x7fy", `invalid principal: agent id "x\x7fy" contains control characters or invalid UTF-8`},
		{"acme/x\u202ey", `invalid principal: agent id "x\u202ey" contains a bidirectional formatting character (U+202E)`},
		{"acme/x\u2067y", `invalid principal: agent id "x\u2067y" contains a bidirectional formatting character (U+2067)`},
		{"ac\x00me/x", `invalid principal: tenant "ac\x00me" must be letters, digits, '.', '_' and '-', starting with a letter or digit`},
		{"acme//x", `invalid principal: agent id "/x" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"acme/x/", `invalid principal: agent id "x/" has an empty segment: no '/' at its start or end, nor two in a row`},
		{"/x", `invalid principal: tenant is empty`},
	} {
		status, _, page := c.post(t, "/admin/grants", url.Values{"csrf": {csrf}, "principal": {tc.principal}, "capability": {"tools/fs:fs/delete_file"},
			"level": {"destructive"}, "uses": {"1"}, "reason": {"a reason"}})
		if want := htmlText("invalid grant: principal: " + tc.want); status != http.StatusBadRequest || !strings.Contains(page, want) {
			t.Errorf("grant for %q: %d; want 400 with %s\n%s", tc.principal, status, want, page)
		}
		_, _, page = c.get(t, "/admin/policies?"+url.Values{"principal": {tc.principal}, "tier": {"T3"}, "capability": {"tools/fs:fs/delete_file"}}.Encode())
		if want := htmlText(tc.want); !strings.Contains(page, want) {
			t.Errorf("policy test of %q: want %s\n%s", tc.principal, want, page)
		}
	}
	if gs := c.eng.Grants(); len(gs) != 0 {
		t.Errorf("grants stored: %+v", gs)
	}
}

// TestConsoleTenancyMatrix: every route of the console (Console.Routes)
// but the sign-in form, the static files, the redirect from /admin and a
// connection's callback (authenticated by its flow's state) is an
// operator's (capability.AccessOperator): tokens of tiers T1–T4 of any
// tenant cannot sign in, and a request without a session is sent to sign
// in; a T0 token of any tenant (acme, beta) reaches every route; a
// session whose token is lowered to T1 ends at its next request, whatever
// the route.
func TestConsoleTenancyMatrix(t *testing.T) {
	base := newConsole(t)
	var mu sync.Mutex
	toks := map[string]capability.Principal{}
	for _, tenant := range []string{"acme", "beta"} {
		for _, tier := range skill.AllAgentTiers {
			toks["sgt_"+tenant+"_"+string(tier)] = capability.Principal{Tenant: tenant, Agent: "op", Tier: tier}
		}
	}
	lookup := func(id string) (capability.Principal, bool) {
		mu.Lock()
		defer mu.Unlock()
		p, ok := toks[id]
		return p, ok
	}
	h, err := admin.New(admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { p, ok := lookup(s); return s, p, ok },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			p, ok := lookup(id)
			return p, ok, nil
		},
		Installs: base.svc, Policy: base.eng, Audit: audit.NewLog(base.db), Registry: base.reg, Changes: base.changes,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c := &console{url: ts.URL}
	fresh := func() {
		jar, _ := cookiejar.New(nil)
		c.http = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	open := []string{"GET /admin/static/", "GET /admin/login", "POST /admin/login", "/admin", "GET /admin/connections/callback"}
	routes := h.Routes()
	if len(routes) < 20 {
		t.Fatalf("only %d routes: %v", len(routes), routes)
	}
	for _, o := range open {
		if !slices.Contains(routes, o) {
			t.Errorf("open route %s is gone: update the matrix", o)
		}
	}
	call := func(route, csrf string) (int, string, string) {
		method, path, _ := strings.Cut(route, " ")
		path = strings.NewReplacer("{$}", "", "{op}", "x").Replace(path)
		if method == http.MethodGet {
			return c.get(t, path)
		}
		return c.post(t, path, url.Values{"csrf": {csrf}})
	}
	signedOut := func(route, loc string) bool {
		if strings.HasPrefix(route, "GET ") {
			return strings.HasPrefix(loc, "/admin/login?next=")
		}
		return loc == "/admin/login?expired=1"
	}
	for _, route := range routes {
		if slices.Contains(open, route) {
			continue
		}
		fresh()
		if status, loc, _ := call(route, ""); status != http.StatusSeeOther || !signedOut(route, loc) {
			t.Errorf("%s signed out: %d %s; want sent to sign in", route, status, loc)
		}
		for secret, p := range toks {
			if p.Tier == skill.T0 {
				continue
			}
			fresh()
			if status, _, _ := c.post(t, "/admin/login", url.Values{"token": {secret}}); status != http.StatusForbidden {
				t.Errorf("%s signs in: %d; want 403", p, status)
			}
			if status, loc, _ := call(route, ""); status != http.StatusSeeOther || !signedOut(route, loc) {
				t.Errorf("%s as %s: %d %s; want sent to sign in", route, p, status, loc)
			}
		}
		for _, tenant := range []string{"acme", "beta"} {
			secret := "sgt_" + tenant + "_T0"
			fresh()
			csrf := c.signIn(t, secret)
			if status, loc, body := call(route, csrf); status == http.StatusForbidden || strings.HasPrefix(loc, "/admin/login?") {
				t.Errorf("%s as %s's T0: %d %s; want it admitted\n%s", route, tenant, status, loc, body)
			}
			if route == "POST /admin/logout" {
				continue
			}
			mu.Lock()
			toks[secret] = capability.Principal{Tenant: tenant, Agent: "op", Tier: skill.T1}
			mu.Unlock()
			status, loc, _ := call(route, csrf)
			mu.Lock()
			toks[secret] = capability.Principal{Tenant: tenant, Agent: "op", Tier: skill.T0}
			mu.Unlock()
			if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/login?ended=token") {
				t.Errorf("%s as %s's token lowered to T1: %d %s; want the session ended", route, tenant, status, loc)
			}
		}
	}
}

// TestConsoleTokenSetUnreadable: while the token set cannot be read, a
// session's requests are refused (503, nothing done) and the session is
// kept; once it can, the session goes on.
func TestConsoleTokenSetUnreadable(t *testing.T) {
	base := newConsole(t)
	var mu sync.Mutex
	var broken error
	admin0 := capability.Principal{Tenant: "ops", Agent: "alice", Tier: skill.T0}
	h, err := admin.New(admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { return "id-" + s, admin0, s == "sgt_admin" },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			return admin0, id == "id-sgt_admin" && broken == nil, broken
		},
		Policy: base.eng,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &console{url: ts.URL, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	csrf := c.signIn(t, "sgt_admin")
	mu.Lock()
	broken = errors.New("tokens: shared tokens.json: connection refused")
	mu.Unlock()
	status, _, page := c.post(t, "/admin/grants", url.Values{"csrf": {csrf}, "principal": {"acme/planner"}, "capability": {"tools/fs:fs/delete_file"}, "level": {"destructive"}, "reason": {"a reason"}})
	if want := htmlText("the bearer tokens cannot be read to check this session's: tokens: shared tokens.json: connection refused"); status != http.StatusServiceUnavailable || !strings.Contains(page, want) {
		t.Errorf("token set unreadable: %d; want 503 with %s\n%s", status, want, page)
	}
	if gs := base.eng.Grants(); len(gs) != 0 {
		t.Errorf("a grant was added: %+v", gs)
	}
	mu.Lock()
	broken = nil
	mu.Unlock()
	if status, loc, _ := c.get(t, "/admin/grants"); status != http.StatusOK {
		t.Errorf("token set readable again: %d %s; want the session kept", status, loc)
	}
}

package admin_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit/syncbuf"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skillgate/skillgate/internal/edge/admin"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// TestBrowserConnections connects accounts through the console in a real
// Chromium as a person does: sign in, open Connections from the
// navigation, fill the Connect form, allow on the authorization server's
// consent page (a real OAuth server on loopback, in front of a real
// remote MCP server), come back signed in (the console is reached as
// localhost, the authorization server as 127.0.0.1: the way back is a
// cross-site navigation, which does not carry the SameSite=Strict
// cookie), see the connection; deny once and see why; then make another
// account the default, rename one, revoke one and revoke and forget
// another, and reconnect the revoked one, each seen on the page, in the
// store and in the audit log. No token is ever in a page or the log.
func TestBrowserConnections(t *testing.T) {
	ctx := t.Context()
	as := oauthserver.New(t, &oauthserver.Options{Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}, RequireScopes: true})
	logs := &syncbuf.Buffer{}
	lg := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client := oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 10 * time.Second, Logger: lg})
	creds, err := credential.Open(ctx, t.TempDir(), credential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "skillgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	log := audit.NewLog(db)
	svc := connection.NewService(creds, connection.NewConnector(client, creds, &connection.ConnectorOptions{Logger: lg}),
		connection.New(creds, client, &connection.Options{Logger: lg}),
		func(_ context.Context, provider string) (string, error) {
			if provider != "remote" {
				return "", errors.New("no installed skill declares it")
			}
			return rs.URL, nil
		}, &connection.ServiceOptions{Audit: log, Logger: lg})
	h, err := admin.New(admin.Options{
		Verify: func(s string) (string, capability.Principal, bool) { p, ok := tokens[s]; return s, p, ok },
		Token: func(_ context.Context, id string) (capability.Principal, bool, error) {
			p, ok := tokens[id]
			return p, ok, nil
		},
		Connections: svc, Audit: log, Logger: lg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	base := strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)
	b := browser(t)

	var pages []string // every page's HTML, searched for tokens at the end
	var html string
	keep := chromedp.ActionFunc(func(ctx context.Context) error {
		if err := chromedp.OuterHTML("html", &html).Do(ctx); err != nil {
			return err
		}
		pages = append(pages, html)
		return nil
	})
	var rows []string
	readRows := chromedp.Evaluate(`Array.from(document.querySelectorAll('table.connections tbody tr')).map(tr =>
  [0, 1, 2, 3, 5, 6].map(i => tr.cells[i].innerText.trim()).filter(s => s).join(' '))`, &rows)
	var done string
	// connect fills the Connect form and allows (or denies) on the
	// consent page as account.
	connect := func(label string, makeDefault bool, decision string) {
		t.Helper()
		actions := []chromedp.Action{
			chromedp.WaitVisible(`#c-tenant`),
			chromedp.SendKeys(`#c-tenant`, "acme"),
			chromedp.SendKeys(`#c-provider`, "remote"),
			chromedp.SendKeys(`#c-account`, label),
		}
		if makeDefault {
			actions = append(actions, chromedp.Click(`#c-default`))
		}
		actions = append(actions,
			chromedp.Click(`//button[text()="Connect"]`),
			chromedp.WaitVisible(`#allow`),
			keep,
			chromedp.SetValue(`#account`, "alice-"+label),
			chromedp.Click("#"+decision),
		)
		if err := chromedp.Run(b, actions...); err != nil {
			t.Fatalf("connect %s: %v", label, err)
		}
	}
	// see waits for the Connections page with the notice want (not the
	// page before, nor the callback's page on the way, which have notices
	// too), reads the notice and the rows, and
	// keeps the page.
	see := func(step, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(b, 30*time.Second)
		defer cancel()
		if err := chromedp.Run(ctx, chromedp.WaitVisible(`//main[h1="Connections"]/p[@class="done" and normalize-space()="`+want+`"]`), chromedp.Text(`.done`, &done), readRows, keep); err != nil {
			var now string
			_ = chromedp.Run(b, chromedp.Evaluate(`document.body.innerText.slice(0, 400)`, &now))
			t.Fatalf("%s: %v; the page shows:\n%s", step, err, now)
		}
	}

	if err := chromedp.Run(b,
		chromedp.Navigate(base+"/admin/login"),
		chromedp.WaitVisible(`#token`),
		chromedp.SendKeys(`#token`, "sgt_admin"+kb.Enter),
		chromedp.WaitVisible(`//h1[text()="Overview"]`),
		chromedp.Click(`//nav/a[text()="Connections"]`),
		chromedp.WaitVisible(`//h1[text()="Connections"]`),
		chromedp.WaitVisible(`//p[text()="No connections."]`),
	); err != nil {
		t.Fatal(err)
	}
	connect("work", true, "allow")
	see("connected work", "Connected remote account work for tenant acme.")
	if done != "Connected remote account work for tenant acme." || strings.Join(rows, "\n") != "acme remote work active default" {
		t.Fatalf("after connecting: %q, rows %q", done, rows)
	}
	shot(t, b, "17-connections")
	work := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}
	got, err := creds.Connection(ctx, work)
	if err != nil || got.OAuth == nil || got.OAuth.Resource != rs.URL || !got.Default {
		t.Fatalf("stored %v (%v)", got, err)
	}
	secrets := []string{got.OAuth.AccessToken, got.OAuth.RefreshToken, got.OAuth.Client.ClientSecret}

	// Denied at the consent page: the console says why.
	var problem string
	connect("denied", false, "deny")
	if err := chromedp.Run(b, chromedp.WaitVisible(`.problem`), chromedp.Text(`.problem`, &problem), keep); err != nil {
		t.Fatal(err)
	}
	if want := `connect remote account denied for tenant acme: oauth authorization failed: the authorization server answered access_denied (the user denied the request); start again with a new authorization`; problem != want {
		t.Fatalf("denied: %q; want %q", problem, want)
	}

	// A second account, then the row actions.
	if err := chromedp.Run(b, chromedp.Navigate(base+"/admin/connections")); err != nil {
		t.Fatal(err)
	}
	connect("home", false, "allow")
	see("connected home", "Connected remote account home for tenant acme.")
	if strings.Join(rows, "\n") != "acme remote home active\nacme remote work active default" {
		t.Fatalf("after connecting home: rows %q", rows)
	}
	home := work
	home.Account = "home"
	if c, err := creds.Connection(ctx, home); err == nil {
		secrets = append(secrets, c.OAuth.AccessToken, c.OAuth.RefreshToken)
	}
	steps := []struct {
		name    string
		actions []chromedp.Action
		done    string
		rows    string
		shot    string // the screenshot taken after it, if any
	}{
		{"make home the default", []chromedp.Action{chromedp.Click(`button[aria-label="make remote account home for tenant acme the default"]`)},
			"remote account home for tenant acme is the default.", "acme remote home active default\nacme remote work active", ""},
		{"rename work to office", []chromedp.Action{
			chromedp.SendKeys(`//input[@id="to-acme..remote.work"]`, "office", chromedp.BySearch),
			chromedp.Click(`button[aria-label="rename remote account work for tenant acme"]`)},
			"Renamed remote account work for tenant acme to office.", "acme remote home active default\nacme remote office active", ""},
		{"revoke office", []chromedp.Action{chromedp.Click(`button[aria-label="revoke remote account office for tenant acme"]`)},
			"Revoked remote account office for tenant acme.", "acme remote home active default\nacme remote office revoked", "18-connections-revoked"},
		{"revoke and forget home", []chromedp.Action{chromedp.Click(`button[aria-label="revoke and forget remote account home for tenant acme"]`)},
			"Revoked and forgot remote account home for tenant acme.", "acme remote office revoked default", ""},
	}
	for _, s := range steps {
		if err := chromedp.Run(b, s.actions...); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		see(s.name, s.done)
		if done != s.done || strings.Join(rows, "\n") != s.rows {
			t.Errorf("%s: %q, rows %q; want %q, %q", s.name, done, rows, s.done, s.rows)
		}
		if s.shot != "" {
			shot(t, b, s.shot)
		}
	}
	// Reconnecting the revoked account makes it active again, keeping its
	// default flag.
	if err := chromedp.Run(b,
		chromedp.Click(`button[aria-label="reconnect remote account office for tenant acme"]`),
		chromedp.WaitVisible(`#allow`),
		keep,
		chromedp.Click(`#allow`),
	); err != nil {
		t.Fatal(err)
	}
	see("reconnect office", "Connected remote account office for tenant acme.")
	if strings.Join(rows, "\n") != "acme remote office active default" {
		t.Errorf("after reconnecting: rows %q", rows)
	}
	office := work
	office.Account = "office"
	if c, err := creds.Connection(ctx, office); err == nil {
		secrets = append(secrets, c.OAuth.AccessToken, c.OAuth.RefreshToken)
	} else {
		t.Error(err)
	}
	if st := as.Stats(); st.Revocations < 2 {
		t.Errorf("the authorization server saw %d revocations; want 2", st.Revocations)
	}

	// On a phone-sized screen the page fits its width: the table scrolls
	// in its card.
	if _, overflow := phonePage(t, b, base+"/admin/connections", `h1`); overflow {
		t.Error("the Connections page is wider than a 390-pixel screen")
	}

	// The audit log names the operator for each change.
	recs, err := db.AuditRecords(ctx, store.AuditFilter{Action: "connection."})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range recs {
		lines = append(lines, r.Actor+" "+r.Action+" "+r.Subject+" "+string(r.Data))
	}
	wantAudit := []string{
		`operator:ops/alice@T0 connection.connect remote {"account":"work","default":true,"issuer":"` + as.URL + `","scopes":["tools","offline_access"],"tenant":"acme"}`,
		`operator:ops/alice@T0 connection.connect remote {"account":"home","default":false,"issuer":"` + as.URL + `","scopes":["tools","offline_access"],"tenant":"acme"}`,
		`operator:ops/alice@T0 connection.default remote {"account":"home","tenant":"acme"}`,
		`operator:ops/alice@T0 connection.rename remote {"account":"work","tenant":"acme","to":"office"}`,
		`operator:ops/alice@T0 connection.revoke remote {"account":"office","forgotten":false,"tenant":"acme"}`,
		`operator:ops/alice@T0 connection.revoke remote {"account":"home","forgotten":true,"tenant":"acme"}`,
		`operator:ops/alice@T0 connection.connect remote {"account":"office","default":true,"issuer":"` + as.URL + `","scopes":["tools","offline_access"],"tenant":"acme"}`,
	}
	if strings.Join(lines, "\n") != strings.Join(wantAudit, "\n") {
		t.Errorf("audit:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantAudit, "\n"))
	}

	all := strings.Join(pages, "\n")
	logged := logs.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(all, s) {
			t.Fatal("a token or client secret is in a page of the console")
		}
		if s != "" && strings.Contains(logged, s) {
			t.Fatalf("a token or client secret is in the log:\n%s", logged)
		}
	}
	if !strings.Contains(logged, "admin console: connection started") || !strings.Contains(logged, "connection made") {
		t.Errorf("the log does not tell the connections made:\n%s", logged)
	}
	if len(pages) < 8 || !strings.Contains(all, "acme") {
		t.Fatalf("only %d pages kept", len(pages))
	}
}

package credential_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// clock is a settable test clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

func key(tenant, agent, provider, account string) credential.ConnectionKey {
	return credential.ConnectionKey{Scope: credential.Scope{Tenant: tenant, Agent: agent}, Provider: provider, Account: account}
}

// grant is a valid OAuth grant whose secrets all contain tag.
func grant(tag string) *credential.Grant {
	return &credential.Grant{
		Grant: oauth.Grant{AccessToken: "at-" + tag, RefreshToken: "rt-" + tag, TokenType: "Bearer",
			Expiry: t0.Add(time.Hour), Scopes: []string{"tools", "offline_access"}},
		Issuer: "https://as.example.com", TokenEndpoint: "https://as.example.com/token",
		RevocationEndpoint: "https://as.example.com/revoke", Resource: "https://mcp.example.com/mcp",
		Client: oauth.Registration{ClientID: "client-1", ClientSecret: "cs-" + tag, AuthMethod: "client_secret_basic"},
	}
}

// brief lists connections as "tenant/agent provider account kind state default".
func brief(list []credential.ConnectionInfo) string {
	var b strings.Builder
	for _, c := range list {
		fmt.Fprintf(&b, "%s/%s %s %s %s %s %v\n", c.Tenant, c.Agent, c.Provider, c.Account, c.Kind, c.State, c.Default)
	}
	return b.String()
}

func TestConnectionLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := &clock{t: t0}
	s := open(t, dir, credential.Options{Now: clk.now})
	work, home := key("acme", "", "github", "work"), key("acme", "", "github", "home")
	mine := key("acme", "drafter", "github", "alice@example.com")
	for _, c := range []credential.Connection{
		{ConnectionKey: work, OAuth: grant("work-secret")},
		{ConnectionKey: home, Secret: "static-home-secret"},
		{ConnectionKey: mine, OAuth: grant("mine-secret")},
		{ConnectionKey: key("globex", "", "gitlab", "main"), Secret: "static-globex-secret"},
	} {
		if err := s.PutConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Connections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := "acme/ github home secret active false\nacme/ github work oauth active true\nacme/drafter github alice@example.com oauth active true\nglobex/ gitlab main secret active true\n"
	if got := brief(list); got != want {
		t.Fatalf("after puts:\n%s\nwant\n%s", got, want)
	}
	if !list[1].Created.Equal(t0) || !list[1].Expiry.Equal(t0.Add(time.Hour)) || !list[1].Refreshable || list[1].Issuer != "https://as.example.com" {
		t.Errorf("work's info: %+v", list[1])
	}

	// The default moves; a replaced default stays default and keeps Created.
	clk.t = t0.Add(time.Minute)
	if err := s.SetDefaultConnection(ctx, home); err != nil {
		t.Fatal(err)
	}
	if err := s.PutConnection(ctx, credential.Connection{ConnectionKey: home, Secret: "static-home-secret-2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameConnection(ctx, work, "office"); err != nil {
		t.Fatal(err)
	}
	office := key("acme", "", "github", "office")
	if err := s.RenameConnection(ctx, office, "home"); !errors.Is(err, credential.ErrConnectionExists) ||
		err.Error() != "connection exists: github account home for tenant acme already exists; remove it or choose another label" {
		t.Errorf("rename onto another: %v", err)
	}
	// A second process's view: a fresh store on the same directory.
	s2 := open(t, dir, credential.Options{Now: clk.now})
	list, _ = s2.Connections(ctx)
	want = "acme/ github home secret active true\nacme/ github office oauth active false\nacme/drafter github alice@example.com oauth active true\nglobex/ gitlab main secret active true\n"
	if got := brief(list); got != want {
		t.Fatalf("after default, rename:\n%s\nwant\n%s", got, want)
	}
	if !list[0].Created.Equal(t0) {
		t.Errorf("a replaced connection's Created moved: %v", list[0].Created)
	}
	c, err := s2.Connection(ctx, home)
	if err != nil || c.Secret != "static-home-secret-2" {
		t.Fatalf("Connection(home) = %v %v", c, err)
	}

	// Removing the default promotes the first remaining account.
	if err := s2.RemoveConnection(ctx, home); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkConnection(ctx, office, credential.StateExpired, "oauth refresh failed:\ninvalid_grant"); err != nil {
		t.Fatal(err)
	}
	list, _ = s.Connections(ctx)
	want = "acme/ github office oauth expired true\nacme/drafter github alice@example.com oauth active true\nglobex/ gitlab main secret active true\n"
	if got := brief(list); got != want {
		t.Fatalf("after rm, mark:\n%s\nwant\n%s", got, want)
	}
	if list[0].LastError != "oauth refresh failed: invalid_grant" {
		t.Errorf("last error %q", list[0].LastError)
	}

	// A refresh changes the connection under the store's lock; the
	// default flag stays the store's, a malformed change writes nothing,
	// and no change writes nothing either.
	clk.t = t0.Add(2 * time.Minute)
	if err := s.UpdateConnection(ctx, office, func(c *credential.Connection) (bool, error) {
		c.OAuth.Grant = oauth.Grant{AccessToken: "at-new-secret", RefreshToken: c.OAuth.RefreshToken, TokenType: "Bearer", Expiry: t0.Add(2 * time.Hour), Scopes: []string{"tools"}}
		c.State, c.LastError, c.Refreshed, c.Default = credential.StateActive, "", clk.t, false
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := s2.Connection(ctx, office)
	if g := got.OAuth; got.State != credential.StateActive || got.LastError != "" || !got.Refreshed.Equal(clk.t) || !got.Default ||
		g.AccessToken != "at-new-secret" || g.RefreshToken != "rt-work-secret" || g.Client.ClientSecret != "cs-work-secret" || g.TokenEndpoint != "https://as.example.com/token" {
		t.Fatalf("after UpdateConnection: %v %+v", got, *g)
	}
	gen := s2.Generation()
	err = s.UpdateConnection(ctx, office, func(c *credential.Connection) (bool, error) { c.OAuth.TokenType = "mac"; return true, nil })
	if !errors.Is(err, credential.ErrInvalidConnection) || err.Error() != "github account office for tenant acme: invalid connection: oauth.token_type: only Bearer is kept" {
		t.Errorf("malformed change: %v", err)
	}
	if err := s.UpdateConnection(ctx, office, func(*credential.Connection) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Reload(ctx); err != nil || s2.Generation() != gen {
		t.Errorf("a refused or empty change moved the store: %v", err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"Connection", func() error { _, err := s.Connection(ctx, home); return err }()},
		{"SetDefault", s.SetDefaultConnection(ctx, home)},
		{"Rename", s.RenameConnection(ctx, home, "x")},
		{"Remove", s.RemoveConnection(ctx, home)},
		{"Mark", s.MarkConnection(ctx, home, credential.StateRevoked, "")},
		{"UpdateConnection", s.UpdateConnection(ctx, home, func(*credential.Connection) (bool, error) { return true, nil })},
	} {
		if want := "connection required: no github account home for tenant acme (list them with skillgate connection ls)"; !errors.Is(tc.err, credential.ErrNoConnection) || tc.err.Error() != want {
			t.Errorf("%s of an absent connection: %v", tc.name, tc.err)
		}
	}
	// Credentials entries live beside connections in the same document.
	if err := s.Set(ctx, "GITHUB_TOKEN", credential.Scope{Tenant: "acme"}, "ghp-entry"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s2.Connections(ctx); len(l) != 3 {
		t.Errorf("a Set lost connections: %v", l)
	}
}

func TestResolveConnection(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), credential.Options{})
	for _, k := range []credential.ConnectionKey{
		key("acme", "", "github", "work"), // the tenant's default
		key("acme", "", "github", "home"),
		key("acme", "drafter", "github", "bot"), // drafter's default
		key("acme", "drafter", "github", "work"),
		key("acme", "", "gitlab", "main"),
	} {
		if err := s.PutConnection(ctx, credential.Connection{ConnectionKey: k, Secret: "secret-" + k.Account}); err != nil {
			t.Fatal(err)
		}
	}
	p := func(agent string) capability.Principal {
		return capability.Principal{Tenant: "acme", Agent: agent, Tier: "T3"}
	}
	for _, tc := range []struct {
		p                 capability.Principal
		provider, pin     string
		wantAgent, wantAc string
		err               string
	}{
		{p("drafter"), "github", "", "drafter", "bot", ""},      // agent default first
		{p("reviewer"), "github", "", "", "work", ""},           // then the tenant's
		{p("drafter"), "github", "home", "", "home", ""},        // a pin, from the tenant
		{p("drafter"), "github", "work", "drafter", "work", ""}, // a pin, the agent's first
		{p("drafter"), "gitlab", "", "", "main", ""},            // the tenant's default
		{p("reviewer"), "github", "bot", "", "", "connection required: github account bot for acme/reviewer (connect it with skillgate connect github --tenant acme --account bot)"},
		{p("drafter"), "jira", "", "", "", "connection required: jira for acme/drafter (connect it with skillgate connect jira --tenant acme)"},
		{capability.Principal{Tenant: "beta", Agent: "x", Tier: "T3"}, "github", "", "", "", "connection required: github for beta/x (connect it with skillgate connect github --tenant beta)"},
		{p("drafter"), "Bad", "", "", "", `invalid connection: provider "Bad": use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most 128 bytes, e.g. github`},
	} {
		got, err := s.ResolveConnection(tc.p, tc.provider, tc.pin)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %s pin %q: %v, want %q", tc.p, tc.provider, tc.pin, err, tc.err)
			}
			continue
		}
		if err != nil || got.Agent != tc.wantAgent || got.Account != tc.wantAc || got.Provider != tc.provider {
			t.Errorf("%s %s pin %q = %v %v, want %s/%s", tc.p, tc.provider, tc.pin, got, err, tc.wantAgent, tc.wantAc)
		}
	}
	// A put marked Default takes the default from the tenant's work.
	if err := s.PutConnection(ctx, credential.Connection{ConnectionKey: key("acme", "", "github", "new"), Secret: "s", Default: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ResolveConnection(p("reviewer"), "github", ""); err != nil || got.Account != "new" {
		t.Errorf("after a default put: %v %v", got, err)
	}
	if list, _ := s.Connections(ctx); brief(list)[:len("acme/ github home secret active false\nacme/ github new secret active true\nacme/ github work secret active false\n")] !=
		"acme/ github home secret active false\nacme/ github new secret active true\nacme/ github work secret active false\n" {
		t.Errorf("defaults after a default put:\n%s", brief(list))
	}
	if _, err := s.ResolveConnection(p("x"), "jira", ""); !errors.Is(err, credential.ErrNoConnection) {
		t.Errorf("not ErrNoConnection: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), credential.Options{})
	work := key("acme", "", "github", "work")
	mod := func(f func(g *credential.Grant)) *credential.Grant { g := grant("refused-secret"); f(g); return g }
	for _, tc := range []struct {
		c    credential.Connection
		is   error
		want string
	}{
		{credential.Connection{ConnectionKey: key("", "", "github", "work"), Secret: "s"}, credential.ErrInvalidScope, "invalid credential scope: a tenant is required (--tenant)"},
		{credential.Connection{ConnectionKey: key("acme", "", "", "work"), Secret: "s"}, credential.ErrInvalidConnection, "invalid connection: the provider is empty; name the provider skill or server, e.g. github"},
		{credential.Connection{ConnectionKey: key("acme", "", "git hub", "work"), Secret: "s"}, credential.ErrInvalidConnection, `invalid connection: provider "git hub": use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most 128 bytes, e.g. github`},
		{credential.Connection{ConnectionKey: key("acme", "", strings.Repeat("a", 129), "work"), Secret: "s"}, credential.ErrInvalidConnection, ""},
		{credential.Connection{ConnectionKey: key("acme", "", "github", ""), Secret: "s"}, credential.ErrInvalidConnection, "invalid connection: the account is empty; name it, e.g. work or alice@example.com"},
		{credential.Connection{ConnectionKey: key("acme", "", "github", "a b"), Secret: "s"}, credential.ErrInvalidConnection, `invalid connection: account "a b": use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most 64 bytes`},
		{credential.Connection{ConnectionKey: key("acme", "", "github", strings.Repeat("a", 65)), Secret: "s"}, credential.ErrInvalidConnection, ""},
		{credential.Connection{ConnectionKey: work}, credential.ErrInvalidConnection, "github account work for tenant acme: invalid connection: neither an oauth grant nor a secret"},
		{credential.Connection{ConnectionKey: work, Secret: "a\x00-refused-secret"}, credential.ErrInvalidValue, "github account work for tenant acme: secret: invalid credential value: the value contains a NUL byte"},
		{credential.Connection{ConnectionKey: work, Secret: "s", State: "gone"}, credential.ErrInvalidConnection, `github account work for tenant acme: invalid connection: state "gone": use active, expired or revoked`},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.AccessToken = "" })}, credential.ErrInvalidValue, "github account work for tenant acme: oauth.access_token: invalid credential value: the value is empty"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.TokenEndpoint = "https://user:refused-secret@as.example.com/token" })}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: oauth.token_endpoint: not an absolute http(s) URL without user info or fragment"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.TokenEndpoint = "" })}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: oauth.token_endpoint: missing"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.Client.ClientID = "" })}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: oauth.client_id: 1 to 512 bytes without control characters"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.Client.AuthMethod = "private_key_jwt" })}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: oauth.auth_method: use none, client_secret_basic or client_secret_post"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.Scopes = make([]string, 65) })}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: oauth.scopes: 65 scopes; the limit is 64"},
		{credential.Connection{ConnectionKey: work, OAuth: mod(func(g *credential.Grant) { g.RefreshToken = strings.Repeat("r", credential.MaxValueBytes+1) })}, credential.ErrInvalidValue,
			"github account work for tenant acme: oauth.refresh_token: invalid credential value: the value is 65537 bytes; the limit is 65536"},
		{credential.Connection{ConnectionKey: work, Secret: "s", OAuth: grant("refused-secret")}, credential.ErrInvalidConnection,
			"github account work for tenant acme: invalid connection: both an oauth grant and a secret; keep one"},
	} {
		err := s.PutConnection(ctx, tc.c)
		if !errors.Is(err, tc.is) || (tc.want != "" && err.Error() != tc.want) {
			t.Errorf("PutConnection(%v)\n got %v\nwant %v %q", tc.c.ConnectionKey, err, tc.is, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "refused-secret") {
			t.Errorf("error repeats a secret: %v", err)
		}
	}
	if err := s.MarkConnection(ctx, work, "gone", ""); err == nil || err.Error() != `invalid connection: state "gone": use active, expired or revoked` {
		t.Errorf("MarkConnection with a bad state: %v", err)
	}
	if err := s.RenameConnection(ctx, work, "bad label"); !errors.Is(err, credential.ErrInvalidConnection) {
		t.Errorf("rename to a bad label: %v", err)
	}
	if l, _ := s.Connections(ctx); len(l) != 0 {
		t.Errorf("refused puts stored %v", l)
	}
	if _, err := os.Stat(s.Path()); !os.IsNotExist(err) {
		t.Errorf("refused puts wrote the store: %v", err)
	}
}

// TestConnectionViewsHoldNoSecret: no token, client secret or static
// secret appears in listings, their String, GoString, %v, %+v, %#v, JSON,
// slog output, nor in the formatted secret-holding types.
func TestConnectionViewsHoldNoSecret(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), credential.Options{})
	conns := []credential.Connection{
		{ConnectionKey: key("acme", "", "github", "work"), OAuth: grant("tok-sentinel-1")},
		{ConnectionKey: key("acme", "", "github", "home"), Secret: "static-sentinel-2"},
	}
	for _, c := range conns {
		if err := s.PutConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.Connections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Connection(ctx, conns[0].ConnectionKey)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	js, _ := json.Marshal(list)
	out.Write(js)
	log := slog.New(slog.NewJSONHandler(&out, nil))
	for _, v := range []any{list, list[0], list[1], full, *full.OAuth, full.OAuth, conns[1]} {
		fmt.Fprintf(&out, "%v %+v %#v %s %d %x\n", v, v, v, v, v, v)
		js, _ := json.Marshal(v)
		out.Write(js)
		log.Info("x", "v", v)
	}
	out.WriteString(s.String())
	for _, secret := range []string{"tok-sentinel-1", "static-sentinel-2"} {
		if bytes.Contains(out.Bytes(), []byte(secret)) {
			t.Fatalf("%s leaked:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "github account work for tenant acme: oauth active default") {
		t.Errorf("the views do not describe the connection:\n%s", out.String())
	}
	// The store file holds none of them in clear.
	b, _ := os.ReadFile(s.Path())
	for _, secret := range []string{"tok-sentinel-1", "static-sentinel-2"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s is in the store file in clear", secret)
		}
	}
}

// TestVersion1StoreUpgraded: a version 1 store (credentials only) is read,
// and the next write makes it version 2 with its entries kept.
func TestVersion1StoreUpgraded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	id, _ := age.GenerateX25519Identity()
	opts := credential.Options{Identity: id.String()}
	var buf bytes.Buffer
	w, _ := age.Encrypt(&buf, id.Recipient())
	io.WriteString(w, `{"version":1,"credentials":[{"name":"GITHUB_TOKEN","tenant":"acme","value":"v1-value"}]}`)
	w.Close()
	if err := os.WriteFile(dir+"/"+credential.StoreFile, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, opts)
	acme := capability.Principal{Tenant: "acme", Agent: "a", Tier: "T3"}
	if v, ok := s.Resolve(acme, "GITHUB_TOKEN"); !ok || v != "v1-value" {
		t.Fatalf("version 1 entry: %q %v", v, ok)
	}
	plainText := func() []byte {
		t.Helper()
		b, _ := os.ReadFile(s.Path())
		r, err := age.Decrypt(bytes.NewReader(b), id)
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := io.ReadAll(r)
		return plain
	}
	// Without connections, the store stays a version 1 document, which a
	// skillgate from before connections still reads.
	if err := s.Set(ctx, "GITLAB_TOKEN", credential.Scope{Tenant: "acme"}, "gl-value"); err != nil {
		t.Fatal(err)
	}
	if plain := plainText(); !bytes.HasPrefix(plain, []byte(`{"version":1,"credentials":[`)) || bytes.Contains(plain, []byte("connections")) {
		t.Errorf("written without connections: %s", plain)
	}
	if err := s.Remove(ctx, "GITLAB_TOKEN", credential.Scope{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutConnection(ctx, credential.Connection{ConnectionKey: key("acme", "", "github", "work"), OAuth: grant("x")}); err != nil {
		t.Fatal(err)
	}
	if plain := plainText(); !bytes.HasPrefix(plain, []byte(`{"version":2,"credentials":[{"name":"GITHUB_TOKEN","tenant":"acme","value":"v1-value"}],"connections":[{"tenant":"acme","provider":"github","account":"work","default":true,"state":"active"`)) {
		t.Errorf("written document: %s", plain)
	}
	if v, ok := open(t, dir, opts).Resolve(acme, "GITHUB_TOKEN"); !ok || v != "v1-value" {
		t.Errorf("after the upgrade: %q %v", v, ok)
	}
}

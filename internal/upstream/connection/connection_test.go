package connection_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/connection"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// bearer sends a fixed bearer token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// whoami calls the remote server's whoami tool, sending token.
func whoami(ctx context.Context, endpoint, token string) (remotemcp.Whoami, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return remotemcp.Whoami{}, err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return remotemcp.Whoami{}, err
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var w remotemcp.Whoami
	return w, json.Unmarshal(raw, &w)
}

const redirect = "http://127.0.0.1:9/callback"

// env is an authorization server and an MCP server on loopback, the OAuth
// client, and a credential store.
type env struct {
	as     *oauthserver.Server
	rs     *remotemcp.Server
	client *oauth.Client
	md     *oauth.Metadata
	reg    oauth.Registration
	store  *credential.Store
	logs   *bytes.Buffer
	log    *slog.Logger
}

func newEnv(t *testing.T, lifetime time.Duration) *env {
	t.Helper()
	ctx := t.Context()
	e := &env{logs: &bytes.Buffer{}}
	e.log = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.as = oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: lifetime, Scopes: []string{"tools"}})
	e.rs = remotemcp.New(t, &remotemcp.Options{AuthServer: e.as, Scopes: []string{"tools"}, RequireScopes: true})
	e.client = oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 5 * time.Second, Logger: e.log})
	var err error
	if e.md, err = e.client.Discover(ctx, e.rs.URL); err != nil {
		t.Fatal(err)
	}
	if e.reg, err = e.client.Register(ctx, e.md, []string{redirect}); err != nil {
		t.Fatal(err)
	}
	if e.store, err = credential.Open(ctx, t.TempDir(), credential.Options{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// connect authorizes account and stores the grant as connection k.
func (e *env) connect(t *testing.T, k credential.ConnectionKey, account string) credential.Grant {
	t.Helper()
	ctx := t.Context()
	a, err := e.client.Begin(e.md, e.reg, redirect, nil)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := e.as.Authorize(ctx, http.DefaultClient, a.URL, account)
	if err != nil {
		t.Fatal(err)
	}
	g, err := e.client.Exchange(ctx, e.md, e.reg, a, cb.Query())
	if err != nil {
		t.Fatal(err)
	}
	cg := credential.NewGrant(e.md, e.reg, g)
	if err := e.store.PutConnection(ctx, credential.Connection{ConnectionKey: k, OAuth: &cg}); err != nil {
		t.Fatal(err)
	}
	return cg
}

func (e *env) grant(t *testing.T, k credential.ConnectionKey) credential.Connection {
	t.Helper()
	c, err := e.store.Connection(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noSecret fails t if a token or client secret is in the logs or text.
func (e *env) noSecret(t *testing.T, text string, grants ...credential.Grant) {
	t.Helper()
	all := e.logs.String() + "\n" + text
	for _, g := range grants {
		for _, s := range []string{g.AccessToken, g.RefreshToken, g.Client.ClientSecret} {
			if s != "" && strings.Contains(all, s) {
				t.Fatalf("a secret leaked:\n%s", all)
			}
		}
	}
}

var work = credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "work"}

// TestRefreshBeforeExpiry: Run refreshes a grant before its access token
// expires; after the old token's expiry the new one is accepted by the
// MCP server and the old one refused.
func TestRefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// 6 s: the token response's expires_in is whole seconds, truncated,
	// and a loaded machine answers late, so the client may see 4 or 5 s;
	// with a lead of 3 s the refresh comes 1 to 2 s after issue, and the
	// new token outlives the old one at the server by as much.
	e := newEnv(t, 6*time.Second)
	first := e.connect(t, work, "alice")
	r := connection.New(e.store, e.client, &connection.Options{Lead: 3 * time.Second, Jitter: -1, Interval: 100 * time.Millisecond, Logger: e.log})
	// Not due yet by a fixed clock: no request.
	early := connection.New(e.store, e.client, &connection.Options{Lead: time.Second, Jitter: -1, Now: func() time.Time { return first.Expiry.Add(-3 * time.Second) }})
	if n, err := early.RefreshDue(ctx); n != 0 || err != nil {
		t.Fatalf("a grant not due: refreshed %d, %v", n, err)
	}
	if got := e.as.Stats().RefreshGrants; got != 0 {
		t.Fatalf("%d refreshes before due", got)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx) }()
	deadline := time.Now().Add(5 * time.Second)
	var c credential.Connection
	for {
		c = e.grant(t, work)
		if c.OAuth.AccessToken != first.AccessToken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the grant was not refreshed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	refreshedAt := time.Now()
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
	c = e.grant(t, work) // the last grant Run stored
	if !refreshedAt.Before(first.Expiry) {
		t.Fatalf("refreshed at %v, after the expiry %v", refreshedAt, first.Expiry)
	}
	if c.State != credential.StateActive || c.Refreshed.IsZero() || !c.OAuth.Expiry.After(first.Expiry) ||
		c.OAuth.RefreshToken == first.RefreshToken || c.OAuth.Client.ClientSecret != first.Client.ClientSecret {
		t.Fatalf("after refresh: %v", c)
	}
	// Once the old token has expired at the server (up to 1 s after the
	// client's expiry, by the truncation), the new one is still accepted.
	time.Sleep(time.Until(first.Expiry))
	for {
		if _, err := whoami(ctx, e.rs.URL, first.AccessToken); err != nil {
			break
		}
		if time.Now().After(first.Expiry.Add(3 * time.Second)) {
			t.Fatal("the expired token is still accepted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	w, err := whoami(ctx, e.rs.URL, c.OAuth.AccessToken)
	if err != nil || w.Subject != "alice" {
		t.Fatalf("whoami with the refreshed token at %v: %+v %v (first expiry %v, refreshed %v, new expiry %v, refreshes %d)", time.Now(), w, err, first.Expiry, c.Refreshed, c.OAuth.Expiry, e.as.Stats().RefreshGrants)
	}
	if got := e.as.Stats().RefreshGrants; got < 1 {
		t.Fatalf("%d refreshes", got)
	}
	e.noSecret(t, "", first, *c.OAuth)
}

// TestOneRefreshAtATime: callers that found the same token stale share one
// refresh: the server sees one.
func TestOneRefreshAtATime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEnv(t, 30*time.Second)
	first := e.connect(t, work, "alice")
	r := connection.New(e.store, e.client, nil)
	var wg sync.WaitGroup
	var refreshed atomic.Int32
	for range 8 {
		wg.Go(func() {
			ok, err := r.Refresh(ctx, work, first.AccessToken)
			if err != nil {
				t.Error(err)
			}
			if ok {
				refreshed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := e.as.Stats().RefreshGrants; got != 1 || refreshed.Load() != 1 {
		t.Fatalf("%d refreshes at the server, %d reported; want 1", got, refreshed.Load())
	}
	// A due scan with a clock past the lead refreshes the new grant.
	c := e.grant(t, work)
	late := connection.New(e.store, e.client, &connection.Options{Now: func() time.Time { return c.OAuth.Expiry }})
	if n, err := late.RefreshDue(ctx); n != 1 || err != nil {
		t.Fatalf("due scan: %d %v", n, err)
	}
	if got := e.as.Stats().RefreshGrants; got != 2 {
		t.Fatalf("%d refreshes, want 2", got)
	}
}

// TestRefreshTokenRevoked: a refresh token revoked at the server makes the
// connection expired, calls OnExpired once, and stops further refreshes.
func TestRefreshTokenRevoked(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEnv(t, 30*time.Second)
	g := e.connect(t, work, "alice")
	other := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "home"}
	e.connect(t, other, "bob")
	if !e.as.RevokeRefreshToken(g.RefreshToken) {
		t.Fatal("the server did not know the refresh token")
	}
	var mu sync.Mutex
	var expired []credential.ConnectionKey
	r := connection.New(e.store, e.client, &connection.Options{
		Now:    func() time.Time { return g.Expiry },
		Logger: e.log,
		OnExpired: func(_ context.Context, k credential.ConnectionKey) {
			mu.Lock()
			defer mu.Unlock()
			expired = append(expired, k)
		},
	})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Refresh(ctx, work, g.AccessToken) })
	}
	wg.Wait()
	n, err := r.RefreshDue(ctx) // refreshes bob's, skips the expired one
	if n != 1 || err != nil {
		t.Fatalf("due scan after the expiry: %d %v", n, err)
	}
	if len(expired) != 1 || expired[0] != work {
		t.Fatalf("OnExpired calls %v, want once for %v", expired, work)
	}
	var dead, inactive int
	var text string
	for _, err := range errs {
		text += err.Error() + "\n"
		switch {
		case errors.Is(err, oauth.ErrRefreshFailed):
			dead++
		case errors.Is(err, connection.ErrNotActive):
			inactive++
		default:
			t.Errorf("refresh error %v", err)
		}
	}
	if dead != 1 || inactive != 3 {
		t.Fatalf("errors:\n%s", text)
	}
	c := e.grant(t, work)
	if c.State != credential.StateExpired || !strings.Contains(c.LastError, "invalid_grant") {
		t.Fatalf("after a dead refresh: %v %q", c, c.LastError)
	}
	list, _ := e.store.Connections(ctx)
	for _, i := range list {
		text += i.String() + i.LastError + "\n"
	}
	e.noSecret(t, text, g)
}

// TestRevoke: revoking at the server then marking or forgetting; a grant
// without a revocation endpoint is only forgotten.
func TestRevoke(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEnv(t, 30*time.Second)
	g := e.connect(t, work, "alice")
	home := credential.ConnectionKey{Scope: credential.Scope{Tenant: "acme"}, Provider: "remote", Account: "home"}
	h := e.connect(t, home, "bob")
	r := connection.New(e.store, e.client, &connection.Options{Logger: e.log})
	if err := r.Revoke(ctx, work, false); err != nil {
		t.Fatal(err)
	}
	if c := e.grant(t, work); c.State != credential.StateRevoked {
		t.Fatalf("after revoke: %v", c)
	}
	if _, err := e.client.Refresh(ctx, e.md, e.reg, oauth.Grant{RefreshToken: g.RefreshToken, TokenType: "Bearer"}); !errors.Is(err, oauth.ErrRefreshFailed) {
		t.Fatalf("refresh of a revoked grant: %v", err)
	}
	if _, err := whoami(ctx, e.rs.URL, g.AccessToken); err == nil {
		t.Fatal("the revoked grant's access token still works")
	}
	if _, err := r.Refresh(ctx, work, ""); !errors.Is(err, connection.ErrNotActive) {
		t.Fatalf("refresh of a revoked connection: %v", err)
	}
	if err := r.Revoke(ctx, work, true); err != nil { // forget it now
		t.Fatal(err)
	}
	if st := e.as.Stats(); st.Revocations != 2 {
		t.Fatalf("%d revocations at the server, want 2", st.Revocations)
	}
	// A server without revocation: the connection is only forgotten.
	c := e.grant(t, home)
	c.OAuth.RevocationEndpoint = ""
	if err := e.store.PutConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := r.Revoke(ctx, home, true); err != nil {
		t.Fatal(err)
	}
	if st := e.as.Stats(); st.Revocations != 2 {
		t.Fatalf("%d revocations, want still 2", st.Revocations)
	}
	if list, _ := e.store.Connections(ctx); len(list) != 0 {
		t.Fatalf("left %v", list)
	}
	if err := r.Revoke(ctx, home, true); !errors.Is(err, credential.ErrNoConnection) {
		t.Fatalf("revoke of a forgotten connection: %v", err)
	}
	e.noSecret(t, "", g, h)
}

// TestRefreshTransientFailure: an unreachable token endpoint keeps the
// connection active with its last error, and calls no hook; a static
// secret is not refreshed.
func TestRefreshTransientFailure(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := credential.Open(ctx, t.TempDir(), credential.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := credential.Grant{Grant: oauth.Grant{AccessToken: "at-transient-secret", RefreshToken: "rt-transient-secret", TokenType: "Bearer",
		Expiry: time.Now().Add(time.Minute)}, TokenEndpoint: "http://127.0.0.1:1/token", Client: oauth.Registration{ClientID: "c1", AuthMethod: "none"}}
	if err := store.PutConnection(ctx, credential.Connection{ConnectionKey: work, OAuth: &g}); err != nil {
		t.Fatal(err)
	}
	static := credential.ConnectionKey{Scope: work.Scope, Provider: "static", Account: "main"}
	if err := store.PutConnection(ctx, credential.Connection{ConnectionKey: static, Secret: "static-secret-value"}); err != nil {
		t.Fatal(err)
	}
	called := 0
	client := oauth.New(&oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Timeout: 2 * time.Second})
	r := connection.New(store, client, &connection.Options{OnExpired: func(context.Context, credential.ConnectionKey) { called++ }})
	n, err := r.RefreshDue(ctx)
	if n != 0 || !errors.Is(err, oauth.ErrTokenEndpoint) || errors.Is(err, oauth.ErrRefreshFailed) {
		t.Fatalf("refresh against a closed port: %d %v", n, err)
	}
	c, _ := store.Connection(ctx, work)
	if c.State != credential.StateActive || !strings.HasPrefix(c.LastError, "oauth token request failed: refresh at POST http://127.0.0.1:1/token") || called != 0 {
		t.Fatalf("after a transient failure: %v %q, hook called %d", c, c.LastError, called)
	}
	if strings.Contains(err.Error()+c.LastError, "transient-secret") {
		t.Fatalf("a secret leaked: %v", err)
	}
	if _, err := r.Refresh(ctx, static, ""); !errors.Is(err, connection.ErrNotOAuth) {
		t.Fatalf("refresh of a static secret: %v", err)
	}
}

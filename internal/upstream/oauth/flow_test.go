package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
	"github.com/skillgate/skillgate/internal/testkit/remotemcp"
	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// bearer sends a fixed bearer token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// whoami calls the remote server's whoami tool with the go-sdk client,
// sending token.
func whoami(ctx context.Context, endpoint, token string) (remotemcp.Whoami, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "skillgate-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: bearer(token)},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return remotemcp.Whoami{}, err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return remotemcp.Whoami{}, err
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return remotemcp.Whoami{}, err
	}
	var w remotemcp.Whoami
	return w, json.Unmarshal(raw, &w)
}

// testOptions are the client options for servers on loopback.
func testOptions(logger *slog.Logger) *oauth.Options {
	return &oauth.Options{AllowPrivateNetworks: true, AllowInsecureHTTP: true, Logger: logger, Timeout: 5 * time.Second}
}

// connect runs discovery-free authorization against as for account and
// returns the grant.
func authorize(t *testing.T, c *oauth.Client, as *oauthserver.Server, md *oauth.Metadata, reg oauth.Registration, account string) oauth.Grant {
	t.Helper()
	ctx := t.Context()
	a, err := c.Begin(md, reg, redirect, nil)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := as.Authorize(ctx, http.DefaultClient, a.URL, account)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Exchange(ctx, md, reg, a, cb.Query())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

const redirect = "http://127.0.0.1:9/callback"

// TestFlow runs the whole life of a connection against a real
// authorization server and a real MCP server on loopback.
func TestFlow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: 2 * time.Second, Scopes: []string{"tools"}})
	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as, Scopes: []string{"tools"}, RequireScopes: true})
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := oauth.New(testOptions(logger))
	var secrets []string
	var errs []error

	md, err := c.Discover(ctx, rs.URL)
	if err != nil {
		t.Fatal(err)
	}
	if md.Server.Issuer != as.URL || md.ResourceMetadataURL != rs.MetadataURL || md.Resource.Resource != rs.URL || !slices.Equal(md.Scopes, []string{"tools"}) {
		t.Fatalf("discovered issuer %s, metadata %s, resource %s, scopes %q", md.Server.Issuer, md.ResourceMetadataURL, md.Resource.Resource, md.Scopes)
	}

	reg, err := c.Register(ctx, md, []string{redirect})
	if err != nil {
		t.Fatal(err)
	}
	if reg.ClientID == "" || reg.ClientSecret == "" || reg.AuthMethod != "client_secret_basic" {
		t.Fatalf("registration %v: want a confidential client_secret_basic client", reg)
	}
	secrets = append(secrets, reg.ClientSecret)

	a, err := c.Begin(md, reg, redirect, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Scopes, []string{"tools", "offline_access"}) {
		t.Fatalf("requested scopes %q, want tools offline_access", a.Scopes)
	}
	cb, err := as.Authorize(ctx, http.DefaultClient, a.URL, "alice")
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, cb.Query().Get("code"), a.Verifier)

	// a callback for another authorization is refused before any request
	forged := cb.Query()
	forged.Set("state", "forged")
	_, err = c.Exchange(ctx, md, reg, a, forged)
	errs = append(errs, err)
	if want := "oauth authorization failed: the callback's state does not match this authorization (a stale or forged callback); start again with a new authorization"; err == nil || err.Error() != want || !errors.Is(err, oauth.ErrAuthorization) {
		t.Fatalf("forged state: %v\nwant %s", err, want)
	}

	g, err := c.Exchange(ctx, md, reg, a, cb.Query())
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, g.AccessToken, g.RefreshToken)
	if !g.ExpiryKnown() || g.RefreshToken == "" || !slices.Equal(g.Scopes, []string{"tools", "offline_access"}) {
		t.Fatalf("grant %v: want an expiry, a refresh token and the scopes", g)
	}
	w1, err := whoami(ctx, rs.URL, g.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if w1.Subject != "alice" || w1.ClientID != reg.ClientID || w1.TokenID == "" {
		t.Fatalf("whoami %+v: want alice through client %s", w1, reg.ClientID)
	}

	// the access token expires at the server (2 s after issue) ...
	time.Sleep(2100 * time.Millisecond)
	if !g.NeedsRefresh(time.Now(), 0) {
		t.Fatal("the expired grant does not need a refresh")
	}
	_, err = whoami(ctx, rs.URL, g.AccessToken)
	if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("call with an expired token: %v, want 401", err)
	}
	// ... and a refresh brings a rotated grant for the same account
	g2, err := c.Refresh(ctx, md, reg, g)
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, g2.AccessToken, g2.RefreshToken)
	if g2.AccessToken == g.AccessToken || g2.RefreshToken == g.RefreshToken || g2.RefreshToken == "" {
		t.Fatal("refresh did not rotate the tokens")
	}
	w2, err := whoami(ctx, rs.URL, g2.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if w2.Subject != "alice" || w2.ClientID != reg.ClientID || w2.TokenID == w1.TokenID {
		t.Fatalf("whoami after refresh %+v, before %+v: want alice with a new token", w2, w1)
	}

	// the rotated-away refresh token is dead
	_, err = c.Refresh(ctx, md, reg, g)
	errs = append(errs, err)
	if !errors.Is(err, oauth.ErrRefreshFailed) {
		t.Fatalf("refresh with a rotated token: %v, want ErrRefreshFailed", err)
	}

	// the server's administrator revokes the refresh token: the grant is dead
	if !as.RevokeRefreshToken(g2.RefreshToken) {
		t.Fatal("the server did not know the refresh token")
	}
	_, err = c.Refresh(ctx, md, reg, g2)
	errs = append(errs, err)
	want := fmt.Sprintf("oauth refresh failed: POST %s/oauth/token answered invalid_grant (): the grant is no longer valid; authorize again", as.URL)
	if !errors.Is(err, oauth.ErrRefreshFailed) || err.Error() != want {
		t.Fatalf("refresh after revocation: %v\nwant %s", err, want)
	}

	// a second account through the same client; the client revokes it (RFC 7009)
	g3 := authorize(t, c, as, md, reg, "bob")
	secrets = append(secrets, g3.AccessToken, g3.RefreshToken)
	w3, err := whoami(ctx, rs.URL, g3.AccessToken)
	if err != nil || w3.Subject != "bob" {
		t.Fatalf("whoami for bob: %+v, %v", w3, err)
	}
	if err := c.Revoke(ctx, md, reg, g3); err != nil {
		t.Fatal(err)
	}
	_, err = c.Refresh(ctx, md, reg, g3)
	errs = append(errs, err)
	if !errors.Is(err, oauth.ErrRefreshFailed) {
		t.Fatalf("refresh after the client's revocation: %v, want ErrRefreshFailed", err)
	}
	if _, err := whoami(ctx, rs.URL, g3.AccessToken); err == nil {
		t.Fatal("the access token of a revoked grant still works")
	}

	st := as.Stats()
	if st.Registrations != 1 || st.RefreshGrants != 1 || st.Revocations != 1 || st.CodeGrants != 2 {
		t.Fatalf("server stats %+v: want 1 registration, 1 refresh, 1 revocation, 2 code grants", st)
	}
	if got := rs.Stats().ToolCalls; got != 3 {
		t.Fatalf("tool calls %d, want 3", got)
	}

	// no secret in any error or log record
	text := logs.String()
	for _, e := range errs {
		text += "\n" + e.Error()
	}
	for _, s := range secrets {
		if s == "" {
			t.Fatal("an empty secret in the list")
		}
		if strings.Contains(text, s) {
			t.Fatalf("a secret appears in the errors or logs:\n%s", text)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"oauth grant refreshed"`) {
		t.Fatalf("no refresh in the logs:\n%s", logs.String())
	}
}

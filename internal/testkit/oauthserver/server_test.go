package oauthserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
)

// register registers a public client through RFC 7591 and returns its id.
func register(t *testing.T, as *oauthserver.Server, redirect string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"redirect_uris":              []string{redirect},
		"token_endpoint_auth_method": "none",
		"client_name":                "skillgate test",
	})
	resp, err := http.Post(as.URL+oauthserver.RegistrationPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %s, %v", resp.Status, err)
	}
	if got.ClientID == "" || got.ClientSecret != "" {
		t.Fatalf("register: a public client got id %q and a secret: %t", got.ClientID, got.ClientSecret != "")
	}
	return got.ClientID
}

func TestCodeRefreshRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: 30 * time.Second})
	const redirect = "http://127.0.0.1:9/callback"
	cfg := &oauth2.Config{
		ClientID:    register(t, as, redirect),
		RedirectURL: redirect,
		Scopes:      []string{"openid", "offline_access"},
		Endpoint: oauth2.Endpoint{
			AuthURL:   as.URL + "/authorize",
			TokenURL:  as.URL + "/oauth/token",
			AuthStyle: oauth2.AuthStyleInParams,
		},
	}
	verifier := oauth2.GenerateVerifier()

	// without PKCE the server refuses before the login page
	cb, err := as.Authorize(ctx, http.DefaultClient, cfg.AuthCodeURL("s0"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := cb.Query().Get("error"); got != "invalid_request" {
		t.Fatalf("authorize without PKCE: error=%q, want invalid_request (%s)", got, cb)
	}

	cb, err = as.Authorize(ctx, http.DefaultClient, cfg.AuthCodeURL("s1", oauth2.S256ChallengeOption(verifier)), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if cb.Query().Get("state") != "s1" || cb.Query().Get("code") == "" {
		t.Fatalf("callback %s: want state s1 and a code", cb.Redacted())
	}
	if _, err := cfg.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption("wrong-verifier-wrong-verifier-wrong-verifier")); err == nil {
		t.Fatal("exchange with a wrong verifier succeeded")
	}
	// the failed attempt did not consume the code: op deletes it on success only
	tok, err := cfg.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.RefreshToken == "" || tok.ExpiresIn != 30 && tok.ExpiresIn != 29 {
		t.Fatalf("token: refresh %t, expires_in %d; want a refresh token and 30 s", tok.RefreshToken != "", tok.ExpiresIn)
	}

	refreshed, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatal(err)
	}
	if refreshed.RefreshToken == tok.RefreshToken || refreshed.AccessToken == tok.AccessToken {
		t.Fatal("refresh did not rotate the tokens")
	}
	// the old refresh token is retired by rotation
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh with a rotated token: %v, want invalid_grant", err)
	}

	// RFC 7009 revocation by the client
	form := url.Values{"token": {refreshed.RefreshToken}, "token_type_hint": {"refresh_token"}, "client_id": {cfg.ClientID}}
	resp, err := http.PostForm(as.URL+"/revoke", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %s", resp.Status)
	}
	_, err = cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: refreshed.RefreshToken}).Token()
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh after revocation: %v, want invalid_grant", err)
	}

	want := oauthserver.Stats{TokenRequests: 5, CodeGrants: 2, RefreshGrants: 1, Registrations: 1, Revocations: 1}
	if got := as.Stats(); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
}

func TestMetadata(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, &oauthserver.Options{Scopes: []string{"tools"}})
	for _, path := range []string{oauthserver.MetadataPath, "/.well-known/openid-configuration"} {
		resp, err := http.Get(as.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var md map[string]any
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for field, want := range map[string]string{
			"issuer":                as.URL,
			"registration_endpoint": as.URL + oauthserver.RegistrationPath,
			"revocation_endpoint":   as.URL + "/revoke",
			"token_endpoint":        as.URL + "/oauth/token",
		} {
			if md[field] != want {
				t.Errorf("%s: %s = %v, want %s", path, field, md[field], want)
			}
		}
		if got, _ := json.Marshal(md["code_challenge_methods_supported"]); string(got) != `["S256"]` {
			t.Errorf("%s: code_challenge_methods_supported = %s", path, got)
		}
	}
}

func TestRegistrationRefused(t *testing.T) {
	t.Parallel()
	as := oauthserver.New(t, nil)
	for _, tc := range []struct {
		name, body, want string
	}{
		{"no redirect", `{}`, "invalid_redirect_uri"},
		{"bad redirect", `{"redirect_uris":["javascript:alert(1)"]}`, "invalid_redirect_uri"},
		{"bad method", `{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"private_key_jwt"}`, "invalid_client_metadata"},
		{"bad grant", `{"redirect_uris":["http://127.0.0.1/cb"],"grant_types":["implicit"]}`, "invalid_client_metadata"},
		{"not json", `redirect_uris=x`, "invalid_client_metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, err := http.Post(as.URL+oauthserver.RegistrationPath, "application/json", bytes.NewReader([]byte(tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Error string }
			_ = json.NewDecoder(resp.Body).Decode(&e)
			if resp.StatusCode != http.StatusBadRequest || e.Error != tc.want {
				t.Fatalf("%s %q, want 400 %q", resp.Status, e.Error, tc.want)
			}
		})
	}
	if got := as.Stats().Registrations; got != 0 {
		t.Fatalf("registrations %d, want 0", got)
	}
}

// TestDeny holds the consent page's second button: the client's
// redirect_uri gets error=access_denied and its state back.
func TestDeny(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	as := oauthserver.New(t, nil)
	const redirect = "http://127.0.0.1:9/callback"
	cfg := &oauth2.Config{ClientID: register(t, as, redirect), RedirectURL: redirect, Scopes: []string{"openid"},
		Endpoint: oauth2.Endpoint{AuthURL: as.URL + "/authorize", TokenURL: as.URL + "/oauth/token"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.AuthCodeURL("s9", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`id="allow"`, `id="deny"`, `Authorize skillgate test`} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("the consent page lacks %s:\n%s", want, page)
		}
	}
	form := url.Values{"id": {resp.Request.URL.Query().Get("id")}, "decision": {"deny"}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noFollow.PostForm(as.URL+oauthserver.LoginPath, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirect+"?") || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "s9" {
		t.Fatalf("deny redirected to %q (%v), want %s with error=access_denied and state s9", resp.Header.Get("Location"), err, redirect)
	}
}

package oauth_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// TestNoExpiry holds the decision for a token response without
// expires_in: the grant's expiry is unknown, and the clock never asks for
// a refresh (the caller refreshes after a 401).
func TestNoExpiry(t *testing.T) {
	t.Parallel()
	base := hostile(t, map[string]http.HandlerFunc{"/token": jsonHandler(map[string]any{"access_token": theAccess, "refresh_token": theRefresh, "token_type": "bearer", "scope": "a b"})})
	c := oauth.New(testOptions(nil))
	g, err := c.Refresh(t.Context(), metadataFor(base), oauth.StaticRegistration("c1", ""), oauth.Grant{RefreshToken: theRefresh, Scopes: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if g.ExpiryKnown() || g.NeedsRefresh(time.Now().Add(1000*time.Hour), time.Hour) {
		t.Fatalf("grant %v: want an unknown expiry that never needs a refresh by the clock", g)
	}
	if g.TokenType != "Bearer" || strings.Join(g.Scopes, " ") != "a b" || g.AccessToken != theAccess || g.RefreshToken != theRefresh {
		t.Fatalf("grant %v: want Bearer, scopes a b and the tokens", g)
	}
}

// TestNoSecretInText prints, encodes and logs a grant, a registration and
// an authorization every way the standard library offers; no secret may
// appear.
func TestNoSecretInText(t *testing.T) {
	t.Parallel()
	g := oauth.Grant{AccessToken: theAccess, RefreshToken: theRefresh, TokenType: "Bearer", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Scopes: []string{"tools"}}
	r := oauth.StaticRegistration("client-1", theSecret)
	a := oauth.Authorization{URL: "https://as.example/authorize", State: theCode, Verifier: theVerifier, RedirectURI: redirect, Scopes: []string{"tools"}}
	for _, v := range []any{g, &g, r, &r, a, &a, []any{g}, map[string]any{"g": g}, struct{ G oauth.Grant }{g}} {
		var out []string
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X", "%T %v"} {
			out = append(out, fmt.Sprintf(verb, v))
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(j))
		var logs bytes.Buffer
		slog.New(slog.NewJSONHandler(&logs, nil)).Info("m", "v", v)
		slog.New(slog.NewTextHandler(&logs, nil)).Info("m", "v", v)
		out = append(out, logs.String())
		text := strings.Join(out, "\n")
		for _, s := range []string{theAccess, theRefresh, theSecret, theVerifier, theCode} {
			if strings.Contains(text, s) {
				t.Fatalf("%T leaks a secret:\n%s", v, text)
			}
		}
	}
	want := `oauth.Grant{type=Bearer scopes=["tools"] expiry=2030-01-02T03:04:05Z access_token=set refresh_token=set}`
	if got := fmt.Sprint(g); got != want {
		t.Fatalf("String:\n got %s\nwant %s", got, want)
	}
	if got, want := fmt.Sprint(oauth.Grant{}), `oauth.Grant{type= scopes=[] expiry=unknown access_token=unset refresh_token=unset}`; got != want {
		t.Fatalf("String:\n got %s\nwant %s", got, want)
	}
}

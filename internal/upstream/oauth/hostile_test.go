package oauth_test

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// Secrets a hostile server may echo; no error may repeat them.
const (
	theCode     = "code-0123456789abcdef"
	theVerifier = "verifier-0123456789abcdef0123456789abcdef0123"
	theRefresh  = "refresh-0123456789abcdef"
	theAccess   = "access-0123456789abcdef"
	theSecret   = "secret-0123456789abcdef"
)

// hostile is an MCP server and authorization server in one, well behaved
// except where a test replaces one path's handler.
func hostile(t *testing.T, override map[string]http.HandlerFunc) (base string) {
	t.Helper()
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	serveHostile(srv, override)
	return srv.URL
}

// serveHostile installs hostile's routes on srv.
func serveHostile(srv *httptest.Server, override map[string]http.HandlerFunc) {
	base := srv.URL
	asm := map[string]any{
		"issuer":                           base,
		"authorization_endpoint":           base + "/authorize",
		"token_endpoint":                   base + "/token",
		"registration_endpoint":            base + "/register",
		"revocation_endpoint":              base + "/revoke",
		"response_types_supported":         []string{"code"},
		"code_challenge_methods_supported": []string{"S256"},
		"scopes_supported":                 []string{"offline_access"},
	}
	routes := map[string]http.HandlerFunc{
		"/mcp": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, base+"/.well-known/oauth-protected-resource/mcp"))
			http.Error(w, "no token", http.StatusUnauthorized)
		},
		"/.well-known/oauth-protected-resource/mcp": jsonHandler(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}}),
		"/.well-known/oauth-authorization-server":   jsonHandler(asm),
		"/token":    jsonHandler(map[string]any{"access_token": theAccess, "refresh_token": theRefresh, "token_type": "Bearer", "expires_in": 3600}),
		"/register": jsonHandler(map[string]any{"client_id": "c1", "client_secret": theSecret, "token_endpoint_auth_method": "client_secret_basic"}),
		"/revoke":   func(w http.ResponseWriter, r *http.Request) {},
	}
	for p, h := range override {
		routes[p] = h
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	})
}

func jsonHandler(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/register" {
			w.WriteHeader(http.StatusCreated)
		}
		_ = jsonEncode(w, v)
	}
}

// raw answers body, with {base} replaced by the server's own URL.
func raw(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(strings.ReplaceAll(body, "{base}", "http://"+r.Host)))
	}
}

func huge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"resource":"` + strings.Repeat("a", 1<<20) + `"}`))
}

func slow(w http.ResponseWriter, r *http.Request) {
	select {
	case <-time.After(3 * time.Second):
	case <-r.Context().Done():
	}
}

// elsewhere is another origin a hostile server redirects to.
func elsewhere(t *testing.T) string {
	t.Helper()
	other := httptest.NewServer(jsonHandler(map[string]any{"access_token": theAccess, "token_type": "Bearer"}))
	t.Cleanup(other.Close)
	return other.URL
}

// metadataFor is what discovery would have found at base.
func metadataFor(base string) *oauth.Metadata {
	return &oauth.Metadata{
		ServerURL: base + "/mcp",
		Resource:  &oauthex.ProtectedResourceMetadata{Resource: base + "/mcp", AuthorizationServers: []string{base}},
		Server: &oauthex.AuthServerMeta{
			Issuer:                        base,
			AuthorizationEndpoint:         base + "/authorize",
			TokenEndpoint:                 base + "/token",
			RegistrationEndpoint:          base + "/register",
			RevocationEndpoint:            base + "/revoke",
			CodeChallengeMethodsSupported: []string{"S256"},
		},
	}
}

// step runs one operation against base and returns its error.
type step func(t *testing.T, c *oauth.Client, base string) error

func discover(t *testing.T, c *oauth.Client, base string) error {
	_, err := c.Discover(t.Context(), base+"/mcp")
	return err
}

func exchange(t *testing.T, c *oauth.Client, base string) error {
	a := oauth.Authorization{State: "st", Verifier: theVerifier, RedirectURI: redirect}
	_, err := c.Exchange(t.Context(), metadataFor(base), oauth.StaticRegistration("c1", theSecret), a, url.Values{"state": {"st"}, "code": {theCode}})
	return err
}

func refresh(t *testing.T, c *oauth.Client, base string) error {
	_, err := c.Refresh(t.Context(), metadataFor(base), oauth.StaticRegistration("c1", theSecret), oauth.Grant{AccessToken: theAccess, RefreshToken: theRefresh})
	return err
}

func register(t *testing.T, c *oauth.Client, base string) error {
	_, err := c.Register(t.Context(), metadataFor(base), []string{redirect})
	return err
}

func revoke(t *testing.T, c *oauth.Client, base string) error {
	return c.Revoke(t.Context(), metadataFor(base), oauth.StaticRegistration("c1", theSecret), oauth.Grant{AccessToken: theAccess, RefreshToken: theRefresh})
}

// TestHostile runs every step against authorization and resource servers
// that misbehave in one way each: every one is refused with a clear error
// that wraps the right sentinels and repeats no secret.
func TestHostile(t *testing.T) {
	t.Parallel()
	const prm = "/.well-known/oauth-protected-resource/mcp"
	const asm = "/.well-known/oauth-authorization-server"
	for _, tc := range []struct {
		name    string
		routes  func(other string) map[string]http.HandlerFunc
		private bool // leave Options.AllowPrivateNetworks off
		host    string
		step    step
		want    string // {base} is the hostile server, {other} the origin it redirects to
		wantIs  []error
	}{{
		name:   "resource metadata too large",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{prm: huge} },
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: protected resource metadata at {base}" + prm + ": response too large: the body exceeds 4096 bytes (raise Options.MaxResponseBytes only for a server you trust)",
		wantIs: []error{oauth.ErrDiscovery, oauth.ErrResponseTooLarge},
	}, {
		name: "resource metadata redirects to another origin",
		routes: func(other string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prm: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, other+"/prm", http.StatusFound) }}
		},
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: protected resource metadata at {base}" + prm + ": redirect refused: GET {base}" + prm + " redirected to another origin, {other} (an endpoint must answer at its own origin)",
		wantIs: []error{oauth.ErrDiscovery, oauth.ErrForbiddenRedirect},
	}, {
		name: "resource metadata is not JSON",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prm: raw(200, "application/json", "{not json")}
		},
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: no usable protected resource metadata (RFC 9728): {base}" + prm + " (json: expected '\"' at the beginning of a string value: not json), {base}/.well-known/oauth-protected-resource (bad status 404); the server must publish it",
		wantIs: []error{oauth.ErrDiscovery},
	}, {
		name:   "resource metadata is slow",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{prm: slow} },
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: protected resource metadata at {base}" + prm + ": request timed out: no complete answer within 300ms (raise Options.Timeout only for a server you trust)",
		wantIs: []error{oauth.ErrDiscovery, oauth.ErrTimeout},
	}, {
		name: "resource metadata names no authorization server",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{prm: raw(200, "application/json", `{"resource":"{base}/mcp"}`)}
		},
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: protected resource metadata at {base}" + prm + ": authorization_servers is empty; it must name the authorization server",
		wantIs: []error{oauth.ErrDiscovery},
	}, {
		name: "challenge points at another origin",
		routes: func(other string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/mcp": func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+other+`/prm"`)
				w.WriteHeader(http.StatusUnauthorized)
			}}
		},
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: the 401 challenge names resource_metadata \"{other}/prm\" at another origin; the metadata must be served by the MCP server itself",
		wantIs: []error{oauth.ErrDiscovery},
	}, {
		name:   "authorization server metadata too large",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{asm: huge} },
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: authorization server metadata of {base}: response too large: the body exceeds 4096 bytes (raise Options.MaxResponseBytes only for a server you trust)",
		wantIs: []error{oauth.ErrDiscovery, oauth.ErrResponseTooLarge},
	}, {
		name: "authorization server without PKCE",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{asm: raw(200, "application/json", `{"issuer":"{base}","authorization_endpoint":"{base}/a","token_endpoint":"{base}/t","code_challenge_methods_supported":["plain"]}`)}
		},
		step:   discover,
		want:   "oauth discovery failed: {base}/mcp: authorization server {base}: code_challenge_methods_supported lacks S256; OAuth 2.1 requires PKCE with S256",
		wantIs: []error{oauth.ErrDiscovery},
	}, {
		name:    "loopback address literal",
		private: true,
		step:    discover,
		want:    "oauth discovery failed: the MCP server URL \"{base}/mcp\": destination address refused: 127.0.0.1 is not a public address (set Options.AllowPrivateNetworks only in tests)",
		wantIs:  []error{oauth.ErrDiscovery, oauth.ErrForbiddenAddress},
	}, {
		name:    "a name resolving to loopback",
		private: true,
		host:    "localhost",
		step:    discover,
		want:    "oauth discovery failed: {base}/mcp: GET {base}/mcp without a token: destination address refused: {loopback} is not a public address (set Options.AllowPrivateNetworks only in tests)",
		wantIs:  []error{oauth.ErrDiscovery, oauth.ErrForbiddenAddress},
	}, {
		name:   "token response too large",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"/token": huge} },
		step:   exchange,
		want:   "oauth token request failed: exchange the code at POST {base}/token: response too large: the body exceeds 4096 bytes (raise Options.MaxResponseBytes only for a server you trust)",
		wantIs: []error{oauth.ErrTokenEndpoint, oauth.ErrResponseTooLarge},
	}, {
		name: "token response is not JSON",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/token": raw(200, "application/json", `{"access_token":"`+theAccess+`",`)}
		},
		step:   exchange,
		want:   "oauth token request failed: malformed response: exchange the code at POST {base}/token: cannot parse json: unexpected end of JSON input",
		wantIs: []error{oauth.ErrTokenEndpoint, oauth.ErrMalformedResponse},
	}, {
		name: "token endpoint redirects to another origin",
		routes: func(other string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/token": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other+"/token", http.StatusTemporaryRedirect)
			}}
		},
		step:   exchange,
		want:   "oauth token request failed: exchange the code at POST {base}/token: redirect refused: POST {base}/token redirected to another origin, {other} (an endpoint must answer at its own origin)",
		wantIs: []error{oauth.ErrTokenEndpoint, oauth.ErrForbiddenRedirect},
	}, {
		name:   "token endpoint is slow",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"/token": slow} },
		step:   refresh,
		want:   "oauth token request failed: refresh at POST {base}/token: request timed out: no complete answer within 300ms (raise Options.Timeout only for a server you trust)",
		wantIs: []error{oauth.ErrTokenEndpoint, oauth.ErrTimeout},
	}, {
		name: "token type is not bearer",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/token": jsonHandler(map[string]any{"access_token": theAccess, "token_type": "mac"})}
		},
		step:   exchange,
		want:   "oauth token request failed: malformed response: POST {base}/token: token_type \"mac\" is not Bearer; skillgate sends bearer tokens only",
		wantIs: []error{oauth.ErrTokenEndpoint, oauth.ErrMalformedResponse},
	}, {
		name: "token endpoint fails",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/token": raw(503, "text/html", "<p>"+theCode+"</p>")}
		},
		step:   exchange,
		want:   "oauth token request failed: exchange the code at POST {base}/token: the server answered 503 Service Unavailable",
		wantIs: []error{oauth.ErrTokenEndpoint},
	}, {
		name: "refresh refused with the token echoed",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/token": raw(400, "application/json", `{"error":"invalid_grant","error_description":"unknown token `+theRefresh+`"}`)}
		},
		step:   refresh,
		want:   "oauth refresh failed: POST {base}/token answered invalid_grant (unknown token [redacted]): the grant is no longer valid; authorize again",
		wantIs: []error{oauth.ErrRefreshFailed},
	}, {
		name: "registration with an auth method skillgate does not use",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/register": jsonHandler(map[string]any{"client_id": "c1", "client_secret": theSecret, "token_endpoint_auth_method": "private_key_jwt"})}
		},
		step:   register,
		want:   "oauth client registration failed: POST {base}/register: token_endpoint_auth_method \"private_key_jwt\" is not one skillgate uses (none, client_secret_basic, client_secret_post)",
		wantIs: []error{oauth.ErrRegistration},
	}, {
		name: "registration answer is not JSON and holds a secret",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/register": raw(201, "application/json", `{"client_id":"c1","client_secret":"`+theSecret+`"`)}
		},
		step:   register,
		want:   "oauth client registration failed: POST {base}/register: failed to decode successful registration response: unexpected EOF",
		wantIs: []error{oauth.ErrRegistration},
	}, {
		name:   "registration answer too large",
		routes: func(string) map[string]http.HandlerFunc { return map[string]http.HandlerFunc{"/register": huge} },
		step:   register,
		want:   "oauth client registration failed: POST {base}/register: response too large: the body exceeds 4096 bytes (raise Options.MaxResponseBytes only for a server you trust)",
		wantIs: []error{oauth.ErrRegistration, oauth.ErrResponseTooLarge},
	}, {
		name: "revocation refused",
		routes: func(string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/revoke": raw(400, "application/json", `{"error":"unsupported_token_type","error_description":"no `+theRefresh+`"}`)}
		},
		step:   revoke,
		want:   "oauth revocation failed: POST {base}/revoke answered 400 Bad Request unsupported_token_type (no [redacted])",
		wantIs: []error{oauth.ErrRevocation},
	}, {
		name: "revocation redirects to another origin",
		routes: func(other string) map[string]http.HandlerFunc {
			return map[string]http.HandlerFunc{"/revoke": func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other+"/revoke", http.StatusTemporaryRedirect)
			}}
		},
		step:   revoke,
		want:   "oauth revocation failed: POST {base}/revoke: redirect refused: POST {base}/revoke redirected to another origin, {other} (an endpoint must answer at its own origin)",
		wantIs: []error{oauth.ErrRevocation, oauth.ErrForbiddenRedirect},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			other := elsewhere(t)
			var routes map[string]http.HandlerFunc
			if tc.routes != nil {
				routes = tc.routes(other)
			}
			base := hostile(t, routes)
			if tc.host != "" {
				base = strings.Replace(base, "127.0.0.1", tc.host, 1)
			}
			c := oauth.New(&oauth.Options{
				AllowPrivateNetworks: !tc.private,
				AllowInsecureHTTP:    true,
				MaxResponseBytes:     4096,
				Timeout:              300 * time.Millisecond,
			})
			err := tc.step(t, c, base)
			if err == nil {
				t.Fatal("no error")
			}
			want := strings.NewReplacer("{base}", base, "{other}", other).Replace(tc.want)
			// localhost may resolve to either loopback address first
			if got := err.Error(); got != strings.ReplaceAll(want, "{loopback}", "127.0.0.1") && got != strings.ReplaceAll(want, "{loopback}", "::1") {
				t.Errorf("error:\n got %s\nwant %s", got, want)
			}
			for _, is := range tc.wantIs {
				if !errors.Is(err, is) {
					t.Errorf("error does not wrap %v", is)
				}
			}
			for _, s := range []string{theCode, theVerifier, theRefresh, theAccess, theSecret} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the error repeats a secret: %s", err)
				}
			}
		})
	}
}

// jsonEncode writes v as JSON.
func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }

// TestTLSVerified holds that certificates are verified: a server whose
// certificate the client's roots do not hold is refused, and accepted
// once they do.
func TestTLSVerified(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	serveHostile(srv, nil)
	opts := &oauth.Options{AllowPrivateNetworks: true}
	_, err := oauth.New(opts).Discover(t.Context(), srv.URL+"/mcp")
	want := "oauth discovery failed: " + srv.URL + "/mcp: GET " + srv.URL + "/mcp without a token: tls: failed to verify certificate: x509: certificate signed by unknown authority"
	if err == nil || err.Error() != want || !errors.Is(err, oauth.ErrDiscovery) {
		t.Fatalf("untrusted certificate: %v\nwant %s", err, want)
	}
	opts.RootCAs = x509.NewCertPool()
	opts.RootCAs.AddCert(srv.Certificate())
	md, err := oauth.New(opts).Discover(t.Context(), srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if md.Server.TokenEndpoint != srv.URL+"/token" {
		t.Fatalf("token endpoint %s", md.Server.TokenEndpoint)
	}
}

// TestCallbackRefused holds Exchange's checks of the callback, made
// before any request.
func TestCallbackRefused(t *testing.T) {
	t.Parallel()
	c := oauth.New(testOptions(nil))
	md := metadataFor("http://127.0.0.1:9")
	a := oauth.Authorization{State: "st", Verifier: theVerifier, RedirectURI: redirect}
	for _, tc := range []struct {
		name     string
		callback url.Values
		want     string
	}{
		{"denied", url.Values{"error": {"access_denied"}, "error_description": {"the user denied the request"}, "state": {"st"}},
			"oauth authorization failed: the authorization server answered access_denied (the user denied the request); start again with a new authorization"},
		{"no state", url.Values{"code": {theCode}},
			"oauth authorization failed: the callback's state does not match this authorization (a stale or forged callback); start again with a new authorization"},
		{"another issuer", url.Values{"code": {theCode}, "state": {"st"}, "iss": {"https://evil.example"}},
			"oauth authorization failed: the callback's iss \"https://evil.example\" is not the authorization server http://127.0.0.1:9 (a mix-up attack, RFC 9207)"},
		{"no code", url.Values{"state": {"st"}},
			"oauth authorization failed: the callback has no code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Exchange(t.Context(), md, oauth.StaticRegistration("c1", ""), a, tc.callback)
			if err == nil || err.Error() != tc.want || !errors.Is(err, oauth.ErrAuthorization) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// Package oauthserver runs a real OAuth 2.1 authorization server on
// loopback for tests, built on github.com/zitadel/oidc/v3's op provider
// with an in-memory storage: authorization code with PKCE (S256 only),
// refresh tokens with rotation, token revocation (RFC 7009), token
// introspection (RFC 7662), authorization server metadata (RFC 8414 and
// OpenID discovery) and dynamic client registration (RFC 7591, a small
// handler of this package, since op has none).
//
// The login step has no user database: the authorize endpoint redirects to
// a page with an "Allow" and a "Deny" button (a form POST) that completes
// the grant for the fixed test user, or for the account typed in the page's
// account field. A browser can click it; a Go HTTP client can post it, as
// [Authorize] does.
//
//	as := oauthserver.New(t, &oauthserver.Options{AccessTokenLifetime: 2 * time.Second})
//	// discover from as.URL, register, authorize, exchange, refresh ...
//	as.RevokeRefreshToken(refresh) // the next refresh fails with invalid_grant
//	as.Stats().RefreshGrants
package oauthserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// DefaultSubject is the fixed test user a grant is for when the login page
// is submitted without an account.
const DefaultSubject = "test-user"

// Paths of the endpoints this package adds to op's.
const (
	// RegistrationPath is the dynamic client registration endpoint.
	RegistrationPath = "/register"
	// LoginPath is the consent page the authorize endpoint redirects to.
	LoginPath = "/login"
	// MetadataPath is the RFC 8414 authorization server metadata.
	MetadataPath = "/.well-known/oauth-authorization-server"
)

// maxBodyBytes bounds the body of a registration, token or login request.
const maxBodyBytes = 64 << 10

// Options configure a [Server]. The zero value (or nil) means the
// defaults.
type Options struct {
	// AccessTokenLifetime is how long an access token is valid; tests set
	// a few seconds to make it expire. Default one hour. The token
	// response's expires_in is this in whole seconds.
	AccessTokenLifetime time.Duration
	// RefreshTokenLifetime is how long a refresh token is valid. Default 24 hours.
	RefreshTokenLifetime time.Duration
	// Scopes are the scopes announced in the metadata besides openid and
	// offline_access. Any scope is granted as requested.
	Scopes []string
	// Logger receives op's logs. Nil means discard.
	Logger *slog.Logger
}

// Stats counts what the server was asked to do, for tests to assert on.
type Stats struct {
	// TokenRequests is every POST to the token endpoint, answered or refused.
	TokenRequests int64
	// CodeGrants is every token request with grant_type authorization_code.
	CodeGrants int64
	// RefreshGrants is every refresh that succeeded (a rotated refresh token).
	RefreshGrants int64
	// Registrations is every client registered through RFC 7591.
	Registrations int64
	// Revocations is every RFC 7009 request that reached the storage.
	Revocations int64
}

// counters is the live form of [Stats].
type counters struct {
	tokens, codes, refreshes, registrations, revocations atomic.Int64
}

// Server is a running authorization server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the issuer: http://127.0.0.1:PORT, no trailing slash.
	URL string

	srv      *httptest.Server
	provider *op.Provider
	store    *storage
	counters counters
	scopes   []string
}

// New starts a server on 127.0.0.1 and closes it at tb's cleanup. It fails
// tb if the provider cannot be built.
func New(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AccessTokenLifetime <= 0 {
		o.AccessTokenLifetime = time.Hour
	}
	if o.RefreshTokenLifetime <= 0 {
		o.RefreshTokenLifetime = 24 * time.Hour
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("oauthserver: signing key: %v", err)
	}
	s := &Server{srv: httptest.NewUnstartedServer(nil)}
	s.URL = "http://" + s.srv.Listener.Addr().String()
	s.scopes = append([]string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess}, o.Scopes...)
	s.store = &storage{
		accessTTL:     o.AccessTokenLifetime,
		refreshTTL:    o.RefreshTokenLifetime,
		counters:      &s.counters,
		key:           key,
		keyID:         newID(),
		clients:       map[string]*client{},
		authRequests:  map[string]*authRequest{},
		codes:         map[string]string{},
		accessTokens:  map[string]*accessToken{},
		refreshTokens: map[string]*refreshToken{},
	}
	var cryptoKey [32]byte
	if _, err := rand.Read(cryptoKey[:]); err != nil {
		tb.Fatalf("oauthserver: crypto key: %v", err)
	}
	s.provider, err = op.NewProvider(&op.Config{
		CryptoKey:             cryptoKey,
		CryptoKeyId:           "k1",
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       s.scopes,
	}, s.store, op.StaticIssuer(s.URL), op.WithAllowInsecure(), op.WithLogger(logger))
	if err != nil {
		tb.Fatalf("oauthserver: provider: %v", err)
	}
	withIssuer := op.NewIssuerInterceptor(s.provider.IssuerFromRequest)
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+MetadataPath, s.metadata)
	mux.HandleFunc("GET "+oidc.DiscoveryEndpoint, s.metadata)
	mux.HandleFunc("POST "+RegistrationPath, s.register)
	mux.HandleFunc("GET "+LoginPath, s.loginPage)
	mux.Handle("POST "+LoginPath, withIssuer.HandlerFunc(s.loginSubmit))
	mux.Handle("/", s.countTokens(s.provider))
	s.srv.Config.Handler = mux
	s.srv.Start()
	tb.Cleanup(s.srv.Close)
	return s
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{
		TokenRequests: s.counters.tokens.Load(),
		CodeGrants:    s.counters.codes.Load(),
		RefreshGrants: s.counters.refreshes.Load(),
		Registrations: s.counters.registrations.Load(),
		Revocations:   s.counters.revocations.Load(),
	}
}

// RevokeRefreshToken retires a refresh token (and the access token issued
// with it) as the server's administrator would, and reports whether the
// server knew it. The next refresh with it fails with invalid_grant.
func (s *Server) RevokeRefreshToken(token string) bool { return s.store.revokeRefresh(token) }

// RevokeClient retires every refresh and access token issued to a client
// and returns how many refresh tokens that was, for a test that does not
// hold the token values.
func (s *Server) RevokeClient(clientID string) int { return s.store.revokeClient(clientID) }

// AddClient registers a confidential client with a secret (for example a
// resource server that introspects tokens, or a pre-registered client) and
// returns its id and secret. redirectURIs may be empty for a client that
// never authorizes.
func (s *Server) AddClient(redirectURIs ...string) (id, secret string) {
	c := s.newClient(redirectURIs, oidc.AuthMethodBasic, op.ApplicationTypeWeb, "pre-registered")
	return c.id, c.secret
}

// newClient stores a client; it gets a secret unless authMethod is none.
func (s *Server) newClient(redirectURIs []string, authMethod oidc.AuthMethod, appType op.ApplicationType, name string) *client {
	c := &client{
		id:           newID(),
		name:         name,
		redirectURIs: redirectURIs,
		authMethod:   authMethod,
		appType:      appType,
		grantTypes:   []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken},
		loginURL:     func(id string) string { return LoginPath + "?id=" + url.QueryEscape(id) },
	}
	if authMethod != oidc.AuthMethodNone {
		c.secret = newID()
	}
	s.store.addClient(c)
	return c
}

// countTokens counts token requests by grant type before op answers them.
func (s *Server) countTokens(next http.Handler) http.Handler {
	tokenPath := s.provider.TokenEndpoint().Relative()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == tokenPath {
			s.counters.tokens.Add(1)
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
			if err := r.ParseForm(); err == nil && r.PostForm.Get("grant_type") == string(oidc.GrantTypeCode) {
				s.counters.codes.Add(1)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// metadataDoc is op's discovery document narrowed to OAuth 2.1 (code flow
// only) with the registration endpoint added.
func (s *Server) metadataDoc(ctx context.Context) *oidc.DiscoveryConfiguration {
	d := op.CreateDiscoveryConfig(op.ContextWithIssuer(ctx, s.URL), s.provider, s.store)
	d.RegistrationEndpoint = s.URL + RegistrationPath
	d.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
	d.GrantTypesSupported = []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
	d.CheckSessionIframe = ""
	d.DeviceAuthorizationEndpoint = ""
	return d
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.metadataDoc(r.Context()))
}

// registrationRequest is the subset of RFC 7591 client metadata the
// server honours.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
	ApplicationType         string   `json:"application_type"`
}

// registrationResponse is RFC 7591 §3.2.1's answer.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   int64    `json:"client_secret_expires_at"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ApplicationType         string   `json:"application_type"`
}

// registrationError is RFC 7591 §3.2.2's error.
type registrationError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// register implements RFC 7591 dynamic client registration into the same
// storage the provider reads.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeJSON(w, http.StatusBadRequest, registrationError{"invalid_client_metadata", "Content-Type must be application/json"})
		return
	}
	var req registrationRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, registrationError{"invalid_client_metadata", "body is not a JSON client metadata object"})
		return
	}
	if len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, registrationError{"invalid_redirect_uri", "redirect_uris is required"})
		return
	}
	for _, u := range req.RedirectURIs {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Fragment != "" {
			writeJSON(w, http.StatusBadRequest, registrationError{"invalid_redirect_uri", "redirect_uris must be absolute http(s) URLs without a fragment"})
			return
		}
	}
	method := oidc.AuthMethod(req.TokenEndpointAuthMethod)
	switch method {
	case "":
		method = oidc.AuthMethodBasic
	case oidc.AuthMethodNone, oidc.AuthMethodBasic, oidc.AuthMethodPost:
	default:
		writeJSON(w, http.StatusBadRequest, registrationError{"invalid_client_metadata", "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post"})
		return
	}
	for _, g := range req.GrantTypes {
		if g != string(oidc.GrantTypeCode) && g != string(oidc.GrantTypeRefreshToken) {
			writeJSON(w, http.StatusBadRequest, registrationError{"invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only"})
			return
		}
	}
	appType, appTypeName := op.ApplicationTypeWeb, "web"
	if req.ApplicationType == "native" || allLoopback(req.RedirectURIs) {
		appType, appTypeName = op.ApplicationTypeNative, "native"
	}
	c := s.newClient(slices.Clone(req.RedirectURIs), method, appType, req.ClientName)
	s.counters.registrations.Add(1)
	writeJSON(w, http.StatusCreated, registrationResponse{
		ClientID:                c.id,
		ClientSecret:            c.secret,
		ClientIDIssuedAt:        time.Now().Unix(),
		RedirectURIs:            c.redirectURIs,
		TokenEndpointAuthMethod: string(method),
		GrantTypes:              []string{string(oidc.GrantTypeCode), string(oidc.GrantTypeRefreshToken)},
		ResponseTypes:           []string{string(oidc.ResponseTypeCode)},
		ClientName:              c.name,
		ApplicationType:         appTypeName,
	})
}

// allLoopback reports whether every redirect URI is http on a loopback
// host, the shape of a native app's redirect (RFC 8252 §7.3).
func allLoopback(uris []string) bool {
	for _, u := range uris {
		if _, ok := op.HTTPLoopbackOrLocalhost(u); !ok {
			return false
		}
	}
	return true
}

var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Authorize {{.Client}}</title></head>
<body>
<h1>Authorize {{.Client}}</h1>
<p>{{.Client}} asks for: {{.Scopes}}</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="id" value="{{.ID}}">
<label>Account <input type="text" name="account" id="account" value="{{.Account}}"></label>
<button type="submit" id="allow" name="decision" value="allow">Allow</button>
<button type="submit" id="deny" name="decision" value="deny">Deny</button>
</form>
</body></html>
`))

// loginPage shows the consent page for one auth request.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	ar, ok := s.store.request(id)
	if !ok {
		http.Error(w, "unknown or finished authorization request", http.StatusBadRequest)
		return
	}
	name := ar.clientID
	if c, err := s.store.GetClientByClientID(r.Context(), ar.clientID); err == nil && c.(*client).name != "" {
		name = c.(*client).name
	}
	account := ar.loginHint
	if account == "" {
		account = DefaultSubject
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = loginTemplate.Execute(w, map[string]string{
		"Client":  name,
		"Scopes":  strings.Join(ar.scopes, " "),
		"Action":  LoginPath,
		"ID":      id,
		"Account": account,
	})
}

// loginSubmit completes (Allow) or refuses (Deny) an auth request and
// sends the browser back through op's callback, which redirects to the
// client's redirect_uri with a code or an error.
func (s *Server) loginSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot parse the form", http.StatusBadRequest)
		return
	}
	id := r.PostForm.Get("id")
	if r.PostForm.Get("decision") != "allow" {
		ar, err := s.store.AuthRequestByID(r.Context(), id)
		if err != nil {
			http.Error(w, "unknown or finished authorization request", http.StatusBadRequest)
			return
		}
		op.AuthRequestError(w, r, ar, oidc.ErrAccessDenied().WithDescription("the user denied the request"), s.provider)
		return
	}
	account := strings.TrimSpace(r.PostForm.Get("account"))
	if account == "" {
		account = DefaultSubject
	}
	if err := s.store.approve(id, account); err != nil {
		http.Error(w, "unknown or finished authorization request", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, op.AuthCallbackURL(s.provider)(r.Context(), id), http.StatusFound)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Authorize completes an authorization URL the way a user clicking
// "Allow" would: it opens the URL, follows the redirect to the consent
// page, posts the form for account (empty means [DefaultSubject]) and
// returns the URL the server redirected to, the client's redirect_uri
// with code and state, or with error when the server refused the request
// before the page. It uses a copy of hc that stops at the first redirect
// leaving the server, so it never requests the redirect_uri itself.
func (s *Server) Authorize(ctx context.Context, hc *http.Client, authURL, account string) (*url.URL, error) {
	c := *hc
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Scheme+"://"+req.URL.Host != s.URL {
			return http.ErrUseLastResponse
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	page, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		// refused before the login page (bad client, redirect_uri or PKCE)
		return resp.Request.URL.Parse(loc)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("oauthserver: authorize answered " + resp.Status + ": " + string(page))
	}
	id := resp.Request.URL.Query().Get("id")
	if id == "" {
		return nil, errors.New("oauthserver: authorize did not lead to the login page")
	}
	form := url.Values{"id": {id}, "decision": {"allow"}, "account": {account}}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, s.URL+LoginPath, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return nil, errors.New("oauthserver: the login form answered " + resp.Status + " without a redirect")
	}
	return resp.Request.URL.Parse(loc)
}

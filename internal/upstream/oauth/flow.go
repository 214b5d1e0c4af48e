package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Register registers skillgate as a client at the authorization server
// with dynamic client registration (RFC 7591), for the given redirect
// URIs. It asks for a confidential client (client_secret_basic or _post,
// whichever the server supports) and falls back to a public one ("none").
// It fails with ErrRegistration when the server offers no
// registration_endpoint (configure a client with [StaticRegistration]) or
// refuses, wrapping the bound broken if any.
func (c *Client) Register(ctx context.Context, md *Metadata, redirectURIs []string) (Registration, error) {
	ctx, rec := withRecorder(ctx)
	ep := md.Server.RegistrationEndpoint
	if ep == "" {
		return Registration{}, fmt.Errorf("%w: authorization server %s has no registration_endpoint; configure a client id and secret for it instead", ErrRegistration, md.Server.Issuer)
	}
	if len(redirectURIs) == 0 {
		return Registration{}, fmt.Errorf("%w: no redirect URI given; pass the loopback or serve callback URL", ErrRegistration)
	}
	for _, u := range redirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return Registration{}, fmt.Errorf("%w: %w", ErrRegistration, err)
		}
	}
	method := "none"
	for _, m := range []string{"client_secret_basic", "client_secret_post"} {
		if slices.Contains(md.Server.TokenEndpointAuthMethodsSupported, m) {
			method = m
			break
		}
	}
	appType := "native"
	for _, u := range redirectURIs {
		if !loopbackRedirect(u) {
			appType = "web"
		}
	}
	resp, err := oauthex.RegisterClient(ctx, ep, &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            slices.Clone(redirectURIs),
		TokenEndpointAuthMethod: method,
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              c.opts.ClientName,
		ApplicationType:         appType,
	}, c.hc)
	if b := rec.broken(); b != nil {
		return Registration{}, fmt.Errorf("%w: POST %s: %w", ErrRegistration, ep, b)
	}
	if err != nil {
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) {
			return Registration{}, fmt.Errorf("%w: POST %s: the server refused: %s (%s)", ErrRegistration, ep, quote(re.ErrorCode), quote(re.ErrorDescription))
		}
		return Registration{}, fmt.Errorf("%w: POST %s: %s", ErrRegistration, ep, libMessage(err))
	}
	reg := Registration{ClientID: resp.ClientID, ClientSecret: resp.ClientSecret, AuthMethod: resp.TokenEndpointAuthMethod}
	if reg.AuthMethod == "" {
		reg.AuthMethod = method
	}
	if reg.ClientSecret == "" {
		reg.AuthMethod = "none"
	}
	if !slices.Contains([]string{"none", "client_secret_basic", "client_secret_post"}, reg.AuthMethod) {
		return Registration{}, fmt.Errorf("%w: POST %s: token_endpoint_auth_method %q is not one skillgate uses (none, client_secret_basic, client_secret_post)", ErrRegistration, ep, quote(reg.AuthMethod))
	}
	c.log.InfoContext(ctx, "oauth client registered", "endpoint", ep, "registration", reg)
	return reg, nil
}

// libMessage keeps the part of a library's error message before the
// response body it quotes (oauthex puts the body after " (" or after the
// HTTP status), so that a body holding a client secret never reaches a
// message.
func libMessage(err error) string {
	s := err.Error()
	if i := strings.Index(s, " ("); i >= 0 {
		s = s[:i]
	}
	const status = "registration failed with status "
	if i := strings.Index(s, status); i >= 0 {
		rest := s[i+len(status):]
		if j := strings.Index(rest, ": "); j >= 0 {
			s = s[:i+len(status)+j]
		}
	}
	return quote(s)
}

// checkRedirectURI requires an absolute http(s) URL without a fragment.
func checkRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		return fmt.Errorf("%w: redirect URI %q must be an absolute http(s) URL without a fragment", ErrInvalidURL, quote(raw))
	}
	return nil
}

// loopbackRedirect reports whether a redirect URI is http on a loopback
// host (a native app's redirect, RFC 8252 §7.3).
func loopbackRedirect(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// config is the x/oauth2 configuration for one server and client.
func (c *Client) config(md *Metadata, reg Registration, redirectURI string, scopes []string) *oauth2.Config {
	style := oauth2.AuthStyleInHeader
	if reg.AuthMethod == "client_secret_post" || reg.AuthMethod == "none" {
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{
		ClientID:     reg.ClientID,
		ClientSecret: reg.ClientSecret,
		Endpoint: oauth2.Endpoint{
			AuthURL:   md.Server.AuthorizationEndpoint,
			TokenURL:  md.Server.TokenEndpoint,
			AuthStyle: style,
		},
		RedirectURL: redirectURI,
		Scopes:      scopes,
	}
}

// Begin starts an authorization code flow with PKCE (S256): it returns the
// URL a human opens, and the state and verifier [Client.Exchange] needs.
// scopes nil means md.Scopes; offline_access is added when the server
// supports it, so that the grant has a refresh token. The resource
// indicator (RFC 8707) names the MCP server. Begin does no I/O.
func (c *Client) Begin(md *Metadata, reg Registration, redirectURI string, scopes []string) (Authorization, error) {
	if err := checkRedirectURI(redirectURI); err != nil {
		return Authorization{}, fmt.Errorf("%w: %w", ErrAuthorization, err)
	}
	if scopes == nil {
		scopes = md.Scopes
	}
	scopes = slices.Clone(scopes)
	if slices.Contains(md.Server.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	a := Authorization{
		State:       rand.Text(),
		Verifier:    oauth2.GenerateVerifier(),
		RedirectURI: redirectURI,
		Scopes:      scopes,
	}
	a.URL = c.config(md, reg, redirectURI, scopes).AuthCodeURL(a.State,
		oauth2.S256ChallengeOption(a.Verifier),
		oauth2.SetAuthURLParam("resource", md.Resource.Resource))
	return a, nil
}

// Exchange finishes an authorization: it checks the callback's query
// (error, state, iss per RFC 9207) against a, and exchanges its code with
// the PKCE verifier for a [Grant]. It fails with ErrAuthorization when
// the callback is an error or not for a, ErrTokenEndpoint or
// ErrMalformedResponse when the exchange fails, and the bound broken if
// any.
func (c *Client) Exchange(ctx context.Context, md *Metadata, reg Registration, a Authorization, callback url.Values) (Grant, error) {
	if e := callback.Get("error"); e != "" {
		return Grant{}, fmt.Errorf("%w: the authorization server answered %s (%s); start again with a new authorization", ErrAuthorization, quote(e), quote(callback.Get("error_description")))
	}
	if subtle.ConstantTimeCompare([]byte(callback.Get("state")), []byte(a.State)) != 1 || a.State == "" {
		return Grant{}, fmt.Errorf("%w: the callback's state does not match this authorization (a stale or forged callback); start again with a new authorization", ErrAuthorization)
	}
	if iss := callback.Get("iss"); iss != "" && iss != md.Server.Issuer {
		return Grant{}, fmt.Errorf("%w: the callback's iss %q is not the authorization server %s (a mix-up attack, RFC 9207)", ErrAuthorization, quote(iss), md.Server.Issuer)
	} else if iss == "" && md.Server.AuthorizationResponseIssParameterSupported {
		return Grant{}, fmt.Errorf("%w: the callback has no iss though %s announces it (RFC 9207)", ErrAuthorization, md.Server.Issuer)
	}
	code := callback.Get("code")
	if code == "" {
		return Grant{}, fmt.Errorf("%w: the callback has no code", ErrAuthorization)
	}
	ctx, rec := withRecorder(ctx)
	cfg := c.config(md, reg, a.RedirectURI, a.Scopes)
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, c.hc), code,
		oauth2.VerifierOption(a.Verifier),
		oauth2.SetAuthURLParam("resource", md.Resource.Resource))
	if err != nil {
		return Grant{}, c.tokenError(rec, "exchange the code", md.Server.TokenEndpoint, err, false, code, a.Verifier, reg.ClientSecret)
	}
	g, err := grantOf(tok, a.Scopes, md.Server.TokenEndpoint)
	if err != nil {
		return Grant{}, err
	}
	c.log.InfoContext(ctx, "oauth grant issued", "endpoint", md.Server.TokenEndpoint, "grant", g)
	return g, nil
}

// Refresh exchanges g's refresh token for a new grant (with a rotated
// refresh token when the server rotates, else the same). It fails with
// ErrRefreshFailed when the grant is dead (invalid_grant, invalid_client,
// unauthorized_client, or no refresh token): the connection needs a new
// authorization. Other failures are ErrTokenEndpoint or
// ErrMalformedResponse (retry later), with the bound broken if any.
func (c *Client) Refresh(ctx context.Context, md *Metadata, reg Registration, g Grant) (Grant, error) {
	if g.RefreshToken == "" {
		return Grant{}, fmt.Errorf("%w: the grant has no refresh token; authorize again", ErrRefreshFailed)
	}
	ctx, rec := withRecorder(ctx)
	cfg := c.config(md, reg, "", g.Scopes)
	ts := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, c.hc), &oauth2.Token{RefreshToken: g.RefreshToken})
	tok, err := ts.Token()
	if err != nil {
		return Grant{}, c.tokenError(rec, "refresh", md.Server.TokenEndpoint, err, true, g.RefreshToken, g.AccessToken, reg.ClientSecret)
	}
	ng, err := grantOf(tok, g.Scopes, md.Server.TokenEndpoint)
	if err != nil {
		return Grant{}, err
	}
	c.log.InfoContext(ctx, "oauth grant refreshed", "endpoint", md.Server.TokenEndpoint, "grant", ng)
	return ng, nil
}

// deadGrant are the token endpoint's error codes that no retry cures.
var deadGrant = []string{"invalid_grant", "invalid_client", "unauthorized_client"}

// tokenError turns an x/oauth2 failure into this package's errors,
// repeating no secret: a broken bound first, then the server's OAuth
// error (code and description only, never the body), then transport
// failures and unusable responses.
func (c *Client) tokenError(rec *recorder, step, ep string, err error, refresh bool, secrets ...string) error {
	if b := rec.broken(); b != nil {
		return fmt.Errorf("%w: %s at POST %s: %w", ErrTokenEndpoint, step, ep, b)
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := ""
		if re.Response != nil {
			status = re.Response.Status
		}
		if re.ErrorCode == "" {
			return fmt.Errorf("%w: %s at POST %s: the server answered %s", ErrTokenEndpoint, step, ep, quote(status))
		}
		if refresh && slices.Contains(deadGrant, re.ErrorCode) {
			return fmt.Errorf("%w: POST %s answered %s (%s): the grant is no longer valid; authorize again", ErrRefreshFailed, ep, quote(re.ErrorCode, secrets...), quote(re.ErrorDescription, secrets...))
		}
		return fmt.Errorf("%w: %s at POST %s: the server answered %s %s (%s)", ErrTokenEndpoint, step, ep, quote(status), quote(re.ErrorCode, secrets...), quote(re.ErrorDescription, secrets...))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%w: %s at POST %s: %s", ErrTokenEndpoint, step, ep, quote(ue.Err.Error(), secrets...))
	}
	return fmt.Errorf("%w: %w: %s at POST %s: %s", ErrTokenEndpoint, ErrMalformedResponse, step, ep, quote(strings.TrimPrefix(err.Error(), "oauth2: "), secrets...))
}

// grantOf checks a token response and converts it: the token type must be
// Bearer (or absent, read as Bearer), the scope defaults to the requested
// scopes, and a missing expires_in leaves the expiry unknown.
func grantOf(tok *oauth2.Token, requested []string, ep string) (Grant, error) {
	tt := tok.TokenType
	if tt == "" {
		tt = "Bearer"
	}
	if !strings.EqualFold(tt, "bearer") {
		return Grant{}, fmt.Errorf("%w: %w: POST %s: token_type %q is not Bearer; skillgate sends bearer tokens only", ErrTokenEndpoint, ErrMalformedResponse, ep, quote(tt))
	}
	g := Grant{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: "Bearer", Expiry: tok.Expiry, Scopes: slices.Clone(requested)}
	if s, ok := tok.Extra("scope").(string); ok && strings.TrimSpace(s) != "" {
		g.Scopes = strings.Fields(s)
	}
	return g, nil
}

// Revoke revokes g at the server's revocation endpoint (RFC 7009): its
// refresh token, which ends the access tokens issued from it, or its
// access token when it has none. It fails with ErrRevocationUnsupported
// when the server advertises no revocation_endpoint (the caller can only
// forget the grant), ErrRevocation when the server refuses, and the bound
// broken if any.
func (c *Client) Revoke(ctx context.Context, md *Metadata, reg Registration, g Grant) error {
	ep := md.Server.RevocationEndpoint
	if ep == "" {
		return fmt.Errorf("%w: authorization server %s has no revocation_endpoint; forget the grant instead", ErrRevocationUnsupported, md.Server.Issuer)
	}
	token, hint := g.RefreshToken, "refresh_token"
	if token == "" {
		token, hint = g.AccessToken, "access_token"
	}
	if token == "" {
		return fmt.Errorf("%w: the grant holds no token", ErrRevocation)
	}
	ctx, rec := withRecorder(ctx)
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	if reg.AuthMethod != "client_secret_basic" {
		form.Set("client_id", reg.ClientID)
		if reg.ClientSecret != "" {
			form.Set("client_secret", reg.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("%w: POST %s: %s", ErrRevocation, ep, quote(err.Error()))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if reg.AuthMethod == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(reg.ClientID), url.QueryEscape(reg.ClientSecret))
	}
	resp, err := c.hc.Do(req)
	if b := rec.broken(); b != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return fmt.Errorf("%w: POST %s: %w", ErrRevocation, ep, b)
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%w: POST %s: %s", ErrRevocation, ep, quote(err.Error(), token, reg.ClientSecret))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if b := rec.broken(); b != nil {
		return fmt.Errorf("%w: POST %s: %w", ErrRevocation, ep, b)
	}
	if err != nil {
		return fmt.Errorf("%w: POST %s: reading the answer: %s", ErrRevocation, ep, quote(err.Error(), token))
	}
	if resp.StatusCode == http.StatusOK {
		c.log.InfoContext(ctx, "oauth grant revoked", "endpoint", ep, slog.String("token_type_hint", hint))
		return nil
	}
	if oe, ok := parseOAuthError(body); ok {
		return fmt.Errorf("%w: POST %s answered %s %s (%s)", ErrRevocation, ep, quote(resp.Status), quote(oe.Code, token, reg.ClientSecret), quote(oe.Description, token, reg.ClientSecret))
	}
	return fmt.Errorf("%w: POST %s answered %s", ErrRevocation, ep, quote(resp.Status))
}

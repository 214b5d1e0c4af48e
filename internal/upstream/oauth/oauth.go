// Package oauth is skillgate's client side of OAuth 2.1 for remote MCP
// servers, as the MCP authorization specification describes it: discover
// the protected resource metadata (RFC 9728) and the authorization
// server's metadata (RFC 8414), register a client dynamically (RFC 7591)
// or use a configured one, start an authorization code flow with PKCE
// (RFC 7636), exchange the code, refresh the grant and revoke it (RFC
// 7009). It builds on the go-sdk's oauthex and auth packages and on
// golang.org/x/oauth2; it keeps no state, so connections (issue 34) store
// the [Metadata], [Registration] and [Grant] it returns.
//
// Every outbound request is hostile ground: a [Client] bounds its time
// ([Options.Timeout]) and body ([Options.MaxResponseBytes]), follows
// redirects only within the same origin, verifies TLS, and refuses
// loopback and private destinations, checked on the address dialled,
// unless [Options.AllowPrivateNetworks] is set (tests do).
//
//	c := oauth.New(nil)
//	md, err := c.Discover(ctx, "https://mcp.example.com/mcp")
//	reg, err := c.Register(ctx, md, []string{callback})
//	a, err := c.Begin(md, reg, callback, nil)   // a human opens a.URL
//	g, err := c.Exchange(ctx, md, reg, a, callbackQuery)
//	g, err = c.Refresh(ctx, md, reg, g)         // errors.Is(err, oauth.ErrRefreshFailed): reconnect
//	err = c.Revoke(ctx, md, reg, g)
//
// A token response without expires_in gives a [Grant] whose expiry is
// unknown (the zero Expiry): it is never refreshed by the clock, only
// after the resource server answers 401.
package oauth

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"time"
)

// Defaults of [Options].
const (
	// DefaultTimeout bounds one request, its body included.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxResponseBytes bounds one response body. Metadata, token
	// and registration responses are a few kilobytes.
	DefaultMaxResponseBytes = 256 << 10
	// DefaultMaxRedirects bounds the same-origin redirects of one request.
	DefaultMaxRedirects = 3
	// DefaultClientName is the client_name sent at registration.
	DefaultClientName = "skillgate"
)

// Options configure a [Client]. Nil or zero fields mean the defaults.
type Options struct {
	// Timeout bounds each request from dial to the end of its body.
	Timeout time.Duration
	// MaxResponseBytes bounds each response body.
	MaxResponseBytes int64
	// MaxRedirects bounds the redirects of one request; each must stay at
	// the request's origin. Negative means none.
	MaxRedirects int
	// AllowPrivateNetworks lets requests reach loopback, private,
	// link-local and other non-public addresses. Off in production; tests
	// on loopback set it.
	AllowPrivateNetworks bool
	// AllowInsecureHTTP lets URLs use http instead of https. Tests on
	// loopback set it. The go-sdk's metadata fetches still require https
	// for any host but a loopback one.
	AllowInsecureHTTP bool
	// RootCAs verifies servers' certificates; nil means the system pool.
	// Verification is never skipped.
	RootCAs *x509.CertPool
	// ClientName is the client_name sent at dynamic registration.
	ClientName string
	// Logger receives one debug record per request (method, URL without
	// query, status, duration) and one info record per grant issued,
	// never a token. Nil means discard.
	Logger *slog.Logger
}

// Client runs the OAuth steps with bounded requests. It holds no grant
// and is safe for concurrent use.
type Client struct {
	opts Options
	hc   *http.Client
	log  *slog.Logger
}

// New returns a Client; opts is copied, and nil means the defaults.
func New(opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	switch {
	case o.MaxRedirects == 0:
		o.MaxRedirects = DefaultMaxRedirects
	case o.MaxRedirects < 0:
		o.MaxRedirects = 0
	}
	if o.ClientName == "" {
		o.ClientName = DefaultClientName
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{opts: o, hc: newHTTPClient(&o), log: o.Logger}
}

// HTTPClient returns the bounded HTTP client the Client uses, for a caller
// that must fetch from the same servers under the same rules.
func (c *Client) HTTPClient() *http.Client { return c.hc }

package credential

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skillgate/skillgate/internal/upstream/oauth"
)

// A connection is what skillgate holds to act on an external service for a
// scope: an OAuth grant (or a static secret) for one account of one
// provider. A scope may hold several accounts of one provider; exactly one
// of them is the scope's default for that provider.

// Bounds on connections.
const (
	// MaxConnections bounds the connections of one store.
	MaxConnections = 1024
	// MaxProviderBytes bounds a provider name.
	MaxProviderBytes = 128
	// MaxAccountBytes bounds an account label.
	MaxAccountBytes = 64
	// MaxScopes bounds the OAuth scopes of one grant.
	MaxScopes = 64
	// MaxScopeBytes bounds one OAuth scope.
	MaxScopeBytes = 256
	// MaxURLBytes bounds an endpoint, issuer or resource URL.
	MaxURLBytes = 2048
	// MaxClientIDBytes bounds an OAuth client id.
	MaxClientIDBytes = 512
	// MaxErrorBytes bounds the last refresh error kept; longer text is cut
	// by [Store.MarkConnection].
	MaxErrorBytes = 1024
)

// Sentinel errors of connections.
var (
	// ErrInvalidConnection means a connection's provider, account, grant,
	// state or default flag is malformed; the message names the field,
	// never a value.
	ErrInvalidConnection = errors.New("invalid connection")
	// ErrNoConnection means the scope holds no connection that answers:
	// none for the provider, or not the pinned account.
	ErrNoConnection = errors.New("connection required")
	// ErrConnectionExists means a rename would give a connection the key
	// of another.
	ErrConnectionExists = errors.New("connection exists")
)

var (
	// providerPattern: lower-case letters, digits, '.', '_', '-', with an
	// optional category segment ("escrituras/compraventa").
	providerPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)?$`)
	// accountPattern: letters, digits and ". _ - @ +", so that an e-mail
	// address is a label.
	accountPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]*$`)
)

// CheckProvider reports whether name is a valid provider name: a provider
// skill or server name, lower-case letters, digits, '.', '_' and '-',
// starting with a letter or digit, optionally "category/name", at most
// [MaxProviderBytes].
func CheckProvider(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the provider is empty; name the provider skill or server, e.g. github", ErrInvalidConnection)
	}
	if len(name) > MaxProviderBytes || !providerPattern.MatchString(name) {
		return fmt.Errorf("%w: provider %q: use lower-case letters, digits, '.', '_' and '-' (optionally category/name), at most %d bytes, e.g. github", ErrInvalidConnection, clip(name), MaxProviderBytes)
	}
	return nil
}

// CheckAccount reports whether label is a valid account label: letters,
// digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at
// most [MaxAccountBytes] ("work", "alice@example.com").
func CheckAccount(label string) error {
	if label == "" {
		return fmt.Errorf("%w: the account is empty; name it, e.g. work or alice@example.com", ErrInvalidConnection)
	}
	if len(label) > MaxAccountBytes || !accountPattern.MatchString(label) {
		return fmt.Errorf("%w: account %q: use letters, digits, '.', '_', '-', '@' and '+', starting with a letter or digit, at most %d bytes", ErrInvalidConnection, clip(label), MaxAccountBytes)
	}
	return nil
}

// clip quotes at most 64 bytes of s, for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// ConnectionState is where a connection is in its life.
type ConnectionState string

// The states of a connection.
const (
	// StateActive: usable.
	StateActive ConnectionState = "active"
	// StateExpired: the grant could not be refreshed; a human must
	// connect again.
	StateExpired ConnectionState = "expired"
	// StateRevoked: the grant was revoked; a human must connect again.
	StateRevoked ConnectionState = "revoked"
)

// Valid reports whether s is one of the states.
func (s ConnectionState) Valid() bool {
	return s == StateActive || s == StateExpired || s == StateRevoked
}

// ConnectionKey identifies a connection: its scope, provider and account.
type ConnectionKey struct {
	Scope
	Provider string `json:"provider"`
	Account  string `json:"account"`
}

// Check validates the scope, provider and account.
func (k ConnectionKey) Check() error {
	if err := k.Scope.Check(); err != nil {
		return err
	}
	if err := CheckProvider(k.Provider); err != nil {
		return err
	}
	return CheckAccount(k.Account)
}

// String renders the key: "github account work for tenant acme".
func (k ConnectionKey) String() string {
	return k.Provider + " account " + k.Account + " for " + k.Scope.String()
}

// Grant is an OAuth grant as a connection keeps it: the tokens the
// authorization server issued ([oauth.Grant], whose String, Format,
// MarshalText and LogValue it inherits, so it never prints a token), the
// client they were issued to, and the endpoints refreshing and revoking
// them needs.
type Grant struct {
	oauth.Grant
	// Client is the OAuth client the grant was issued to; like the
	// tokens, its secret is never printed.
	Client oauth.Registration
	// Issuer is the authorization server's issuer.
	Issuer string
	// TokenEndpoint is where the grant is refreshed.
	TokenEndpoint string
	// RevocationEndpoint is where the grant is revoked (RFC 7009); empty
	// when the server offers none.
	RevocationEndpoint string
	// Resource is the resource indicator (RFC 8707): the MCP server.
	Resource string
}

// NewGrant is the grant a connection keeps from what the OAuth flow
// returned: the tokens, the client, and md's endpoints.
func NewGrant(md *oauth.Metadata, reg oauth.Registration, g oauth.Grant) Grant {
	g.Scopes = slices.Clone(g.Scopes)
	cg := Grant{Grant: g, Client: reg}
	if md != nil && md.Server != nil {
		cg.Issuer, cg.TokenEndpoint, cg.RevocationEndpoint = md.Server.Issuer, md.Server.TokenEndpoint, md.Server.RevocationEndpoint
	}
	if md != nil && md.Resource != nil {
		cg.Resource = md.Resource.Resource
	}
	return cg
}

// Metadata is the part of the authorization server's metadata the grant
// kept, as the oauth client takes it to refresh or revoke the grant.
func (g Grant) Metadata() *oauth.Metadata {
	return &oauth.Metadata{
		Resource: &oauthex.ProtectedResourceMetadata{Resource: g.Resource},
		Server: &oauthex.AuthServerMeta{Issuer: g.Issuer, TokenEndpoint: g.TokenEndpoint,
			RevocationEndpoint: g.RevocationEndpoint},
	}
}

// Connection is one connection with its secrets, as the broker uses it:
// either OAuth (a grant) or Secret (a static secret), never both. Its
// String, GoString, Format, MarshalText and LogValue are those of its
// [ConnectionInfo], so no secret is printed by mistake. Listings use
// [ConnectionInfo].
type Connection struct {
	ConnectionKey
	// OAuth is the grant of an OAuth connection; nil for a static secret.
	OAuth *Grant
	// Secret is the static secret of a connection without OAuth.
	Secret string
	// State is active, expired or revoked.
	State ConnectionState
	// Default marks the scope's default account for the provider.
	Default bool
	// Created is when the connection was first stored.
	Created time.Time
	// Refreshed is when its grant was last refreshed; zero if never.
	Refreshed time.Time
	// LastError is the last refresh error's text (never a token).
	LastError string
}

// Info is the connection without its secrets.
func (c Connection) Info() ConnectionInfo {
	i := ConnectionInfo{ConnectionKey: c.ConnectionKey, Kind: KindSecret, State: c.State, Default: c.Default,
		Created: c.Created, Refreshed: c.Refreshed, LastError: c.LastError}
	if c.OAuth != nil {
		i.Kind = KindOAuth
		i.Issuer = c.OAuth.Issuer
		i.Scopes = slices.Clone(c.OAuth.Scopes)
		i.Expiry = c.OAuth.Expiry
		i.Refreshable = c.OAuth.RefreshToken != ""
	}
	return i
}

// String describes the connection without its secrets.
func (c Connection) String() string { return c.Info().String() }

// GoString is String, for %#v.
func (c Connection) GoString() string { return c.String() }

// Format prints String for every verb.
func (c Connection) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// MarshalText is String: text encoders never see the secrets.
func (c Connection) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// LogValue logs the connection's info.
func (c Connection) LogValue() slog.Value { return c.Info().LogValue() }

// clone copies c deeply, so a snapshot's connection is never shared.
func (c Connection) clone() Connection {
	if c.OAuth != nil {
		g := *c.OAuth
		g.Scopes = slices.Clone(g.Scopes)
		c.OAuth = &g
	}
	return c
}

// ConnectionKind says what a connection holds.
type ConnectionKind string

// The kinds of connection.
const (
	// KindOAuth holds an OAuth grant.
	KindOAuth ConnectionKind = "oauth"
	// KindSecret holds a static secret.
	KindSecret ConnectionKind = "secret"
)

// ConnectionInfo is a connection as listed: everything but its secrets
// (the tokens, the client secret, the static secret), so it may be shown,
// logged and JSON-encoded.
type ConnectionInfo struct {
	ConnectionKey
	Kind        ConnectionKind  `json:"kind"`
	State       ConnectionState `json:"state"`
	Default     bool            `json:"default"`
	Issuer      string          `json:"issuer,omitempty"`
	Scopes      []string        `json:"scopes,omitempty"`
	Expiry      time.Time       `json:"expiry,omitzero"`
	Refreshable bool            `json:"refreshable"`
	Created     time.Time       `json:"created"`
	Refreshed   time.Time       `json:"refreshed,omitzero"`
	LastError   string          `json:"last_error,omitempty"`
}

// String renders the info on one line.
func (i ConnectionInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", i.ConnectionKey, i.Kind, i.State)
	if i.Default {
		b.WriteString(" default")
	}
	if !i.Expiry.IsZero() {
		b.WriteString(" expires " + i.Expiry.UTC().Format(time.RFC3339))
	}
	return b.String()
}

// LogValue logs the key, kind, state and expiry.
func (i ConnectionInfo) LogValue() slog.Value {
	return slog.GroupValue(slog.String("tenant", i.Tenant), slog.String("agent", i.Agent),
		slog.String("provider", i.Provider), slog.String("account", i.Account),
		slog.String("kind", string(i.Kind)), slog.String("state", string(i.State)),
		slog.Bool("default", i.Default), slog.Time("expiry", i.Expiry))
}

// check validates a connection's content (not its key, nor the default
// rule, which depends on its neighbours). Messages name the field, never
// a value.
func (c *Connection) check() error {
	if !c.State.Valid() {
		return fmt.Errorf("%w: state %q: use active, expired or revoked", ErrInvalidConnection, clip(string(c.State)))
	}
	if len(c.LastError) > MaxErrorBytes || !utf8.ValidString(c.LastError) || strings.IndexByte(c.LastError, 0) >= 0 {
		return fmt.Errorf("%w: last_error: at most %d bytes of UTF-8 without NUL", ErrInvalidConnection, MaxErrorBytes)
	}
	switch {
	case c.OAuth == nil && c.Secret == "":
		return fmt.Errorf("%w: neither an oauth grant nor a secret", ErrInvalidConnection)
	case c.OAuth != nil && c.Secret != "":
		return fmt.Errorf("%w: both an oauth grant and a secret; keep one", ErrInvalidConnection)
	case c.OAuth == nil:
		if err := checkValue(c.Secret); err != nil {
			return fmt.Errorf("secret: %w", err)
		}
		return nil
	}
	g := c.OAuth
	if err := checkValue(g.AccessToken); err != nil {
		return fmt.Errorf("oauth.access_token: %w", err)
	}
	if g.RefreshToken != "" {
		if err := checkValue(g.RefreshToken); err != nil {
			return fmt.Errorf("oauth.refresh_token: %w", err)
		}
	}
	if g.Client.ClientSecret != "" {
		if err := checkValue(g.Client.ClientSecret); err != nil {
			return fmt.Errorf("oauth.client_secret: %w", err)
		}
	}
	if !strings.EqualFold(g.TokenType, "bearer") {
		return fmt.Errorf("%w: oauth.token_type: only Bearer is kept", ErrInvalidConnection)
	}
	if len(g.Scopes) > MaxScopes {
		return fmt.Errorf("%w: oauth.scopes: %d scopes; the limit is %d", ErrInvalidConnection, len(g.Scopes), MaxScopes)
	}
	for i, s := range g.Scopes {
		if s == "" || len(s) > MaxScopeBytes || strings.IndexFunc(s, func(r rune) bool {
			return r <= ' ' || r == 0x7f || r == '"' || r == '\\' || r == utf8.RuneError || !unicode.IsPrint(r)
		}) >= 0 {
			return fmt.Errorf("%w: oauth.scopes[%d]: a scope is 1 to %d printable characters without spaces, '\"' or '\\'", ErrInvalidConnection, i, MaxScopeBytes)
		}
	}
	for _, f := range []struct {
		name, value string
		required    bool
	}{
		{"oauth.token_endpoint", g.TokenEndpoint, true},
		{"oauth.issuer", g.Issuer, false},
		{"oauth.revocation_endpoint", g.RevocationEndpoint, false},
		{"oauth.resource", g.Resource, false},
	} {
		if f.value == "" && !f.required {
			continue
		}
		if err := checkURL(f.value); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidConnection, f.name, err)
		}
	}
	if g.Client.ClientID == "" || len(g.Client.ClientID) > MaxClientIDBytes || strings.IndexFunc(g.Client.ClientID, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }) >= 0 {
		return fmt.Errorf("%w: oauth.client_id: 1 to %d bytes without control characters", ErrInvalidConnection, MaxClientIDBytes)
	}
	switch g.Client.AuthMethod {
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return fmt.Errorf("%w: oauth.auth_method: use none, client_secret_basic or client_secret_post", ErrInvalidConnection)
	}
	if (g.Client.AuthMethod == "none") != (g.Client.ClientSecret == "") {
		return fmt.Errorf("%w: oauth.client_secret: a client secret goes with client_secret_basic or _post, none without", ErrInvalidConnection)
	}
	return nil
}

// checkURL requires an absolute http(s) URL without user info or a
// fragment, at most MaxURLBytes.
func checkURL(raw string) error {
	if raw == "" {
		return errors.New("missing")
	}
	if len(raw) > MaxURLBytes {
		return fmt.Errorf("longer than %d bytes", MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("not an absolute http(s) URL without user info or fragment")
	}
	return nil
}

// cleanError makes an error's text fit to keep as LastError: control
// characters become spaces, and it is cut to MaxErrorBytes.
func cleanError(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r == 0 {
			return -1
		}
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > MaxErrorBytes {
		cut := MaxErrorBytes - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

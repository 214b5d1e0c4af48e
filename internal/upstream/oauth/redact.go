package oauth

import (
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
)

// maxQuoted bounds how much outside text (an error description, a library
// message) an error message repeats.
const maxQuoted = 200

// quote makes outside text safe to repeat in an error message: secrets
// are replaced with [redacted], control and non-printable characters
// dropped, and the result cut to maxQuoted runes.
func quote(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == maxQuoted {
			b.WriteString("…")
			break
		}
		if r == '\n' || r == '\t' {
			r = ' '
		}
		if !unicode.IsPrint(r) {
			continue
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// set says whether a secret field holds a value, never the value.
func set(s string) string {
	if s == "" {
		return "unset"
	}
	return "set"
}

// Grant is what an authorization server issued for one connection: the
// tokens, their type, when the access token expires and the scopes
// granted. Its String, GoString, Format, MarshalText and LogValue never
// print the tokens, so a Grant may be logged, printed or JSON-encoded by
// mistake without leaking them; a store must read the fields explicitly.
type Grant struct {
	// AccessToken is the bearer token to send to the resource server.
	AccessToken string
	// RefreshToken obtains a new access token; empty when the server
	// issued none (then the grant ends when the access token expires).
	RefreshToken string
	// TokenType is the token_type the server answered, "Bearer".
	TokenType string
	// Expiry is when the access token expires. The zero time means the
	// server sent no expires_in: the expiry is unknown, the token is used
	// until the resource server answers 401, and then refreshed once.
	Expiry time.Time
	// Scopes are the scopes granted: the token response's scope, or the
	// scopes requested when the server omits it (RFC 6749 §5.1).
	Scopes []string
}

// ExpiryKnown reports whether the server said when the access token
// expires.
func (g Grant) ExpiryKnown() bool { return !g.Expiry.IsZero() }

// NeedsRefresh reports whether the access token expires within margin of
// now. A grant whose expiry is unknown never needs a refresh by the
// clock: refresh it when the resource server answers 401.
func (g Grant) NeedsRefresh(now time.Time, margin time.Duration) bool {
	return g.ExpiryKnown() && !now.Add(margin).Before(g.Expiry)
}

// String describes the grant without its tokens.
func (g Grant) String() string {
	exp := "unknown"
	if g.ExpiryKnown() {
		exp = g.Expiry.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("oauth.Grant{type=%s scopes=%q expiry=%s access_token=%s refresh_token=%s}",
		g.TokenType, g.Scopes, exp, set(g.AccessToken), set(g.RefreshToken))
}

// GoString is String, for %#v.
func (g Grant) GoString() string { return g.String() }

// Format prints String for every verb, so that no verb (%d, %x, %+v)
// reaches the token fields.
func (g Grant) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(g.String())) }

// MarshalText is String, so encoding/json and other text encoders emit
// the description, never the tokens.
func (g Grant) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// LogValue logs the grant's type, scopes, expiry and which tokens are set.
func (g Grant) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("type", g.TokenType),
		slog.Any("scopes", g.Scopes),
		slog.Bool("refresh_token", g.RefreshToken != ""),
	}
	if g.ExpiryKnown() {
		attrs = append(attrs, slog.Time("expiry", g.Expiry))
	} else {
		attrs = append(attrs, slog.String("expiry", "unknown"))
	}
	return slog.GroupValue(attrs...)
}

// Registration is the OAuth client skillgate is at one authorization
// server: registered dynamically ([Client.Register]) or configured
// ([StaticRegistration]). Like [Grant], it never prints its secret.
type Registration struct {
	// ClientID is the client identifier.
	ClientID string
	// ClientSecret is the client secret; empty for a public client.
	ClientSecret string
	// AuthMethod is how the client authenticates at the token and
	// revocation endpoints: "client_secret_basic", "client_secret_post"
	// or "none".
	AuthMethod string
}

// StaticRegistration returns a configured client: with a secret it
// authenticates with HTTP Basic (client_secret_basic), without one it is
// a public client ("none").
func StaticRegistration(clientID, clientSecret string) Registration {
	if clientSecret == "" {
		return Registration{ClientID: clientID, AuthMethod: "none"}
	}
	return Registration{ClientID: clientID, ClientSecret: clientSecret, AuthMethod: "client_secret_basic"}
}

// String describes the registration without its secret.
func (r Registration) String() string {
	return fmt.Sprintf("oauth.Registration{client_id=%q auth_method=%s client_secret=%s}", r.ClientID, r.AuthMethod, set(r.ClientSecret))
}

// GoString is String, for %#v.
func (r Registration) GoString() string { return r.String() }

// Format prints String for every verb.
func (r Registration) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(r.String())) }

// MarshalText is String: text encoders never see the secret.
func (r Registration) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// LogValue logs the client id and auth method.
func (r Registration) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", r.ClientID), slog.String("auth_method", r.AuthMethod),
		slog.Bool("client_secret", r.ClientSecret != ""))
}

// Authorization is one started authorization ([Client.Begin]): the URL a
// human opens, and what [Client.Exchange] needs to finish it. Verifier and
// State must stay on the server side; they are never printed.
type Authorization struct {
	// URL is the authorization URL to open in a browser.
	URL string
	// State is the anti-forgery value the callback must carry back.
	State string
	// Verifier is the PKCE code verifier (RFC 7636) sent at the exchange.
	Verifier string
	// RedirectURI is the callback URL the server redirects to.
	RedirectURI string
	// Scopes are the scopes requested.
	Scopes []string
}

// String describes the authorization without its state and verifier.
func (a Authorization) String() string {
	return fmt.Sprintf("oauth.Authorization{redirect_uri=%q scopes=%q state=%s verifier=%s}", a.RedirectURI, a.Scopes, set(a.State), set(a.Verifier))
}

// GoString is String, for %#v.
func (a Authorization) GoString() string { return a.String() }

// Format prints String for every verb.
func (a Authorization) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(a.String())) }

// MarshalText is String: text encoders never see the verifier.
func (a Authorization) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// LogValue logs the redirect URI and scopes.
func (a Authorization) LogValue() slog.Value {
	return slog.GroupValue(slog.String("redirect_uri", a.RedirectURI), slog.Any("scopes", a.Scopes))
}

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ErrConnectionRequired means a remote server needs an OAuth connection
// the principal does not have (none, or an expired or revoked one). The
// message names the provider and the tenant, never a URL to authorize: a
// human connects.
var ErrConnectionRequired = errors.New("connection required")

// ErrUnauthorized means a remote server refused a call with HTTP 401:
// the access token it carried is no longer accepted (expired early,
// revoked, or of a grant whose expiry the server never said). The call
// did not run.
var ErrUnauthorized = errors.New("unauthorized")

// Unauthorized is called by a [Pool] when a remote server refuses a
// principal's call with 401 while its connection's token was token: it
// refreshes the connection (once across callers: a token already
// replaced is not refreshed again) and reports whether a new token is
// there to retry with. It must be bounded in time.
type Unauthorized func(ctx context.Context, who capability.Principal, d ServerDecl, account, token string) bool

// ConnectionRequiredError is the error of a call whose remote server
// needs a connection the caller lacks; it matches
// [ErrConnectionRequired]. Its text is what the agent reads:
// "connection required: PROVIDER for tenant TENANT (why)".
type ConnectionRequiredError struct {
	// Provider is the provider to connect (the server's ID).
	Provider string
	// Tenant is the caller's tenant.
	Tenant string
	// Why says what is missing and the operator's command.
	Why string
}

func (e *ConnectionRequiredError) Error() string {
	return fmt.Sprintf("%v: %s for tenant %s (%s)", ErrConnectionRequired, e.Provider, e.Tenant, e.Why)
}

// Is reports whether target is ErrConnectionRequired.
func (e *ConnectionRequiredError) Is(target error) bool { return target == ErrConnectionRequired }

// ConnectionUse names the connection a call to a remote server uses: its
// provider and account, for the audit record and the policy's context.
type ConnectionUse struct {
	Provider string `json:"provider"`
	Tenant   string `json:"tenant"`
	Account  string `json:"account"`
}

// BearerCredential is the reserved credential name under which a route's
// lookup carries the OAuth access token of a principal's connection to a
// remote server. It is not a valid ${NAME}, so no declaration can
// reference it, and it names the token in scrubbed text
// ("[redacted:oauth-bearer]").
const BearerCredential = "oauth-bearer"

// Bearers is the optional ability of a [CredentialSource] to supply the
// OAuth access token a principal's calls to a remote server carry: the
// principal's connection to the provider the server is. The pool asks it
// for every streamable HTTP server that declares no Authorization header.
// Like Resolve, Bearer must not do I/O, and [CredentialSource.Generation]
// must move when its answer may change (a refresh, a new or expired
// connection).
type Bearers interface {
	// Bearer returns the access token who's calls to server d carry, with
	// account pinning one of who's accounts ("" for the default). An empty
	// token and a nil error mean the server is called without one (nobody
	// connects to it); an error wrapping [ErrConnectionRequired] means it
	// needs a connection who lacks.
	Bearer(who capability.Principal, d ServerDecl, account string) (string, error)
}

// BearerTarget reports whether calls to d may carry a connection's
// token: a streamable HTTP server whose declaration sets no
// Authorization header of its own.
func BearerTarget(d ServerDecl) bool {
	if d.Transport != capability.TransportHTTP {
		return false
	}
	for name := range d.Headers {
		if strings.EqualFold(name, "Authorization") {
			return false
		}
	}
	return true
}

// accountKey carries a call's account pin through a context.
type accountKey struct{}

// WithAccount returns ctx carrying account: the pool's route for a call
// made with it uses that account of the principal's connection to a
// remote server instead of the default.
func WithAccount(ctx context.Context, account string) context.Context {
	if account == "" {
		return ctx
	}
	return context.WithValue(ctx, accountKey{}, account)
}

// AccountFrom returns the account pin ctx carries, "" for none.
func AccountFrom(ctx context.Context) string {
	s, _ := ctx.Value(accountKey{}).(string)
	return s
}

// scrubbed returns the credential names whose values are scrubbed from
// what d's server sends: those it references, and its connection's token.
func scrubbed(d ServerDecl) []string {
	names := d.Credentials()
	if BearerTarget(d) {
		names = append(names, BearerCredential)
	}
	return names
}

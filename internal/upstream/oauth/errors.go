package oauth

import "errors"

// Sentinel errors. Every error this package returns wraps at least one of
// them, so callers branch with [errors.Is]; a refused response wraps both
// the step's sentinel (ErrDiscovery, ErrTokenEndpoint, ...) and the bound
// it broke (ErrResponseTooLarge, ErrTimeout, ...). No error text ever
// holds a token, a client secret, a code or a PKCE verifier.
var (
	// ErrInvalidURL means a URL given or discovered is unusable: not
	// absolute, not https (unless [Options.AllowInsecureHTTP]), with user
	// info or a fragment.
	ErrInvalidURL = errors.New("invalid URL")

	// ErrDiscovery means the protected resource metadata (RFC 9728) or the
	// authorization server metadata (RFC 8414) could not be found or is
	// unusable (no authorization server, no PKCE S256, a missing endpoint).
	ErrDiscovery = errors.New("oauth discovery failed")

	// ErrRegistration means dynamic client registration (RFC 7591) is not
	// offered or was refused.
	ErrRegistration = errors.New("oauth client registration failed")

	// ErrAuthorization means the authorization response (the callback) is
	// an error (the user denied, the server refused) or does not belong to
	// this authorization (state or issuer mismatch, no code).
	ErrAuthorization = errors.New("oauth authorization failed")

	// ErrTokenEndpoint means a code exchange or a refresh failed for a
	// reason that does not prove the grant dead: the server is unreachable,
	// answered 5xx, or refused the client's request for another reason.
	// Retrying later may work.
	ErrTokenEndpoint = errors.New("oauth token request failed")

	// ErrRefreshFailed means the grant is dead: the authorization server
	// answered a refresh with invalid_grant (the refresh token expired, was
	// rotated away or revoked), invalid_client or unauthorized_client, or
	// the grant has no refresh token. Only a new authorization revives the
	// connection.
	ErrRefreshFailed = errors.New("oauth refresh failed")

	// ErrRevocation means the revocation endpoint (RFC 7009) refused the
	// request or could not be reached.
	ErrRevocation = errors.New("oauth revocation failed")

	// ErrRevocationUnsupported means the authorization server advertises no
	// revocation_endpoint; the caller can only forget the grant.
	ErrRevocationUnsupported = errors.New("oauth revocation not supported")

	// ErrMalformedResponse means a response could not be used: not JSON,
	// JSON of the wrong shape, a token response without access_token or
	// with a token_type other than Bearer.
	ErrMalformedResponse = errors.New("malformed response")

	// ErrResponseTooLarge means a response body exceeded
	// [Options.MaxResponseBytes].
	ErrResponseTooLarge = errors.New("response too large")

	// ErrTimeout means a request (its response and body included) took
	// longer than [Options.Timeout].
	ErrTimeout = errors.New("request timed out")

	// ErrForbiddenRedirect means a response redirected to another origin
	// (scheme, host or port), or more than [Options.MaxRedirects] times.
	ErrForbiddenRedirect = errors.New("redirect refused")

	// ErrForbiddenAddress means a destination resolved to a loopback,
	// private, link-local or otherwise non-public address while
	// [Options.AllowPrivateNetworks] is off. It is checked on the address
	// actually dialled, so a public name resolving to a private address is
	// refused too.
	ErrForbiddenAddress = errors.New("destination address refused")
)

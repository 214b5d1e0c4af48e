package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Metadata is what discovery found for one MCP server: its protected
// resource metadata, its authorization server's metadata, and the scopes
// to ask for.
type Metadata struct {
	// ServerURL is the MCP server URL discovery started from.
	ServerURL string
	// ResourceMetadataURL is where the resource metadata was found.
	ResourceMetadataURL string
	// Resource is the protected resource metadata (RFC 9728); its Resource
	// is the resource indicator sent with the authorization and token
	// requests (RFC 8707).
	Resource *oauthex.ProtectedResourceMetadata
	// Server is the authorization server metadata (RFC 8414).
	Server *oauthex.AuthServerMeta
	// Scopes are the scopes to request: the 401 challenge's scope, else
	// the resource's scopes_supported.
	Scopes []string
}

// discoveryFailure wraps ErrDiscovery, and the bound broken if the
// operation broke one, around a message naming the step.
func discoveryFailure(rec *recorder, serverURL, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if b := rec.broken(); b != nil {
		return fmt.Errorf("%w: %s: %s: %w", ErrDiscovery, serverURL, msg, b)
	}
	return fmt.Errorf("%w: %s: %s", ErrDiscovery, serverURL, msg)
}

// Discover finds how to authorize against the MCP server at serverURL:
// it asks the server without a token and reads the resource_metadata and
// scope of its 401 challenge, fetches the protected resource metadata
// (from the challenge, else the well-known URLs of RFC 9728 §3.1, the
// endpoint's path inserted first), then the metadata of its first
// authorization server (RFC 8414 and OpenID discovery URLs). The resource
// metadata URL must have the server's origin. It fails with ErrDiscovery
// (and ErrResponseTooLarge, ErrTimeout, ErrForbiddenRedirect or
// ErrForbiddenAddress when a response broke a bound), or ErrInvalidURL.
func (c *Client) Discover(ctx context.Context, serverURL string) (*Metadata, error) {
	ctx, rec := withRecorder(ctx)
	su, err := c.checkURL("the MCP server URL", serverURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDiscovery, err)
	}
	md := &Metadata{ServerURL: serverURL}

	challengeURL, scopes, err := c.challenge(ctx, serverURL)
	if b := rec.broken(); b != nil {
		return nil, discoveryFailure(rec, serverURL, "GET %s without a token", serverURL)
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		return nil, discoveryFailure(rec, serverURL, "GET %s without a token: %s", serverURL, quote(err.Error()))
	}
	md.Scopes = scopes

	type candidate struct{ url, resource string }
	var cands []candidate
	if challengeURL != "" {
		cu, err := c.checkURL("the challenge's resource_metadata", challengeURL)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrDiscovery, serverURL, err)
		}
		if origin(cu) != origin(su) {
			return nil, discoveryFailure(rec, serverURL, "the 401 challenge names resource_metadata %q at another origin; the metadata must be served by the MCP server itself", quote(challengeURL))
		}
		cands = append(cands, candidate{challengeURL, serverURL})
	}
	root := &url.URL{Scheme: su.Scheme, Host: su.Host}
	if p := strings.Trim(su.Path, "/"); p != "" {
		cands = append(cands, candidate{root.String() + "/.well-known/oauth-protected-resource/" + p, serverURL})
	}
	cands = append(cands, candidate{root.String() + "/.well-known/oauth-protected-resource", root.String()})

	var tried []string
	for _, cand := range cands {
		if slices.ContainsFunc(tried, func(s string) bool { return strings.HasPrefix(s, cand.url+" ") }) {
			continue
		}
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, cand.url, cand.resource, c.hc)
		if rec.broken() != nil {
			return nil, discoveryFailure(rec, serverURL, "protected resource metadata at %s", cand.url)
		}
		if err != nil {
			msg := err.Error()
			if _, rest, ok := strings.Cut(msg, "): "); ok && strings.HasPrefix(msg, "GetProtectedResourceMetadata(") {
				msg = rest
			}
			tried = append(tried, cand.url+" ("+quote(msg)+")")
			continue
		}
		md.Resource, md.ResourceMetadataURL = prm, cand.url
		break
	}
	if md.Resource == nil {
		return nil, discoveryFailure(rec, serverURL, "no usable protected resource metadata (RFC 9728): %s; the server must publish it", strings.Join(tried, ", "))
	}
	if len(md.Resource.AuthorizationServers) == 0 {
		return nil, discoveryFailure(rec, serverURL, "protected resource metadata at %s: authorization_servers is empty; it must name the authorization server", md.ResourceMetadataURL)
	}
	if len(md.Scopes) == 0 {
		md.Scopes = slices.Clone(md.Resource.ScopesSupported)
	}

	issuer := md.Resource.AuthorizationServers[0]
	if _, err := c.checkURL("authorization_servers[0]", issuer); err != nil {
		return nil, fmt.Errorf("%w: %s: protected resource metadata at %s: %w", ErrDiscovery, serverURL, md.ResourceMetadataURL, err)
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, c.hc)
	switch {
	case rec.broken() != nil:
		return nil, discoveryFailure(rec, serverURL, "authorization server metadata of %s", issuer)
	case err != nil:
		return nil, discoveryFailure(rec, serverURL, "authorization server metadata of %s: %s", issuer, quote(err.Error()))
	case asm == nil:
		return nil, discoveryFailure(rec, serverURL, "authorization server %s publishes no metadata at /.well-known/oauth-authorization-server or /.well-known/openid-configuration; it must (RFC 8414)", issuer)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, discoveryFailure(rec, serverURL, "authorization server %s: code_challenge_methods_supported lacks S256; OAuth 2.1 requires PKCE with S256", issuer)
	}
	for _, f := range []struct{ name, value string }{
		{"authorization_endpoint", asm.AuthorizationEndpoint},
		{"token_endpoint", asm.TokenEndpoint},
	} {
		if f.value == "" {
			return nil, discoveryFailure(rec, serverURL, "authorization server %s: %s is missing", issuer, f.name)
		}
	}
	for _, f := range []struct{ name, value string }{
		{"authorization_endpoint", asm.AuthorizationEndpoint},
		{"token_endpoint", asm.TokenEndpoint},
		{"registration_endpoint", asm.RegistrationEndpoint},
		{"revocation_endpoint", asm.RevocationEndpoint},
	} {
		if f.value == "" {
			continue
		}
		if _, err := c.checkURL(f.name, f.value); err != nil {
			return nil, fmt.Errorf("%w: %s: authorization server %s: %w", ErrDiscovery, serverURL, issuer, err)
		}
	}
	md.Server = asm
	return md, nil
}

// challenge asks the MCP server without a token and returns the
// resource_metadata URL and scopes of its Bearer challenge, if it answers
// 401 with one. Any other answer is not an error: discovery goes on with
// the well-known URLs.
func (c *Client) challenge(ctx context.Context, serverURL string) (metadataURL string, scopes []string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL, nil)
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	// The body is not read: only the status and the header matter, and a
	// server open to anyone may answer GET with an endless event stream.
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return "", nil, nil
	}
	// An unreadable challenge is no failure: discovery falls back to the
	// well-known URLs.
	cs, perr := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if perr != nil {
		cs = nil
	}
	for _, ch := range cs {
		if ch.Scheme != "bearer" {
			continue
		}
		return ch.Params["resource_metadata"], strings.Fields(ch.Params["scope"]), nil
	}
	return "", nil, nil
}

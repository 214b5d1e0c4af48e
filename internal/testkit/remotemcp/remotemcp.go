// Package remotemcp runs a remote MCP server for tests: streamable HTTP
// (the go-sdk's handler) behind the go-sdk's bearer-token middleware, as a
// service protected by OAuth 2.1 is. It verifies every token by
// introspection (RFC 7662) at an authorization server such as
// [oauthserver.Server], publishes protected resource metadata (RFC 9728)
// naming that server, answers a request without a valid token with 401
// and WWW-Authenticate: Bearer resource_metadata="...", and offers one
// tool, whoami, that reports which grant the call used.
//
//	as := oauthserver.New(t, nil)
//	rs := remotemcp.New(t, &remotemcp.Options{AuthServer: as})
//	// rs.URL is the MCP endpoint to discover, connect and call.
package remotemcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/zitadel/oidc/v3/pkg/client/rs"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/skillgate/skillgate/internal/testkit/oauthserver"
)

// Path is the MCP endpoint's path on the server.
const Path = "/mcp"

// MetadataPath is where the protected resource metadata is served: the
// well-known prefix with the endpoint's path inserted (RFC 9728 §3.1).
const MetadataPath = "/.well-known/oauth-protected-resource" + Path

// Options configure a [Server].
type Options struct {
	// AuthServer issues and introspects the tokens. Required.
	AuthServer *oauthserver.Server
	// Scopes are announced as scopes_supported and, when RequireScopes is
	// set, required of every token.
	Scopes []string
	// RequireScopes makes the middleware answer 403 to a token without
	// every one of Scopes.
	RequireScopes bool
}

// Stats counts what the server saw.
type Stats struct {
	// ToolCalls is every whoami call that ran.
	ToolCalls int64
	// Unauthorized is every request refused for a missing, expired or
	// revoked token.
	Unauthorized int64
}

// WhoamiInput is the whoami tool's input.
type WhoamiInput struct {
	// Note is echoed back in the result.
	Note string `json:"note,omitempty" jsonschema:"a note echoed back"`
}

// Whoami is the whoami tool's structured result: who the token was
// issued for, to which client, with which scopes, and the access token's
// id at the authorization server (it changes at every refresh).
type Whoami struct {
	Subject  string   `json:"subject"`
	ClientID string   `json:"client_id"`
	Scopes   []string `json:"scopes"`
	TokenID  string   `json:"token_id"`
	Note     string   `json:"note,omitempty"`
}

// Server is a running remote MCP server.
type Server struct {
	// URL is the MCP endpoint (http://127.0.0.1:PORT/mcp), also the
	// resource identifier in the metadata.
	URL string
	// MetadataURL is the protected resource metadata's URL.
	MetadataURL string

	toolCalls, unauthorized atomic.Int64
}

// New starts the server on 127.0.0.1 and closes it at tb's cleanup. It
// registers itself at the authorization server as a confidential client
// to introspect tokens.
func New(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	if opts == nil || opts.AuthServer == nil {
		tb.Fatal("remotemcp: Options.AuthServer is required")
	}
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	s := &Server{URL: base + Path, MetadataURL: base + MetadataPath}

	id, secret := opts.AuthServer.AddClient()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	introspector, err := rs.NewResourceServerClientCredentials(ctx, opts.AuthServer.URL, id, secret)
	if err != nil {
		tb.Fatalf("remotemcp: resource server: %v", err)
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "remotemcp", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "whoami",
		Description: "Report the subject, client and token id of the bearer token this call used.",
	}, func(_ context.Context, req *mcp.CallToolRequest, in WhoamiInput) (*mcp.CallToolResult, Whoami, error) {
		s.toolCalls.Add(1)
		ti := req.Extra.TokenInfo
		if ti == nil {
			return nil, Whoami{}, errors.New("no token info")
		}
		w := Whoami{Subject: ti.UserID, Scopes: ti.Scopes, Note: in.Note}
		w.ClientID, _ = ti.Extra["client_id"].(string)
		w.TokenID, _ = ti.Extra["token_id"].(string)
		return nil, w, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)

	mwOpts := &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.MetadataURL}
	if opts.RequireScopes {
		mwOpts.Scopes = opts.Scopes
	}
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		resp, err := rs.Introspect[*oidc.IntrospectionResponse](ctx, introspector, token)
		if err != nil {
			return nil, fmt.Errorf("introspection: %w", err)
		}
		if !resp.Active {
			s.unauthorized.Add(1)
			return nil, fmt.Errorf("%w: inactive, expired or revoked", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{
			Scopes:     resp.Scope,
			Expiration: resp.Expiration.AsTime(),
			UserID:     resp.Subject,
			Extra:      map[string]any{"client_id": resp.ClientID, "token_id": resp.JWTID},
		}, nil
	}
	protected := auth.RequireBearerToken(verify, mwOpts)(handler)

	mux := http.NewServeMux()
	mux.Handle(Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			s.unauthorized.Add(1)
		}
		protected.ServeHTTP(w, r)
	}))
	mux.Handle(MetadataPath, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               s.URL,
		AuthorizationServers:   []string{opts.AuthServer.URL},
		ScopesSupported:        opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "remotemcp",
	}))
	hs.Config.Handler = mux
	hs.Start()
	tb.Cleanup(hs.Close)
	return s
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{ToolCalls: s.toolCalls.Load(), Unauthorized: s.unauthorized.Load()}
}

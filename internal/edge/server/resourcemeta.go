package server

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceMetadataPath is where the server publishes its OAuth 2.0
// protected resource metadata (RFC 9728, section 3); the metadata of the
// MCP endpoint is at this path followed by "/mcp", as section 3.1 builds
// it from the resource identifier http://HOST/mcp.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// mcpPath is the MCP endpoint's path.
const mcpPath = "/mcp"

// mountResourceMetadata serves the protected resource metadata of the
// server (at ResourceMetadataPath) and of its MCP endpoint (at
// ResourceMetadataPath + "/mcp"), to anyone: it is what a standard MCP
// client reads, from the resource_metadata parameter of a 401's
// WWW-Authenticate, to learn how to authenticate. It names no
// authorization server: skillgate's tokens are bearer tokens an operator
// makes with `skillgate token add`, sent in the Authorization header, not
// tokens obtained through an OAuth flow. The go-sdk's handler writes the
// document (and answers CORS preflights, as RFC 9728 metadata is public).
func (s *Server) mountResourceMetadata() {
	for _, res := range []string{"", mcpPath} {
		s.handleNamed(ResourceMetadataPath+res, "GET "+ResourceMetadataPath+res+" (RFC 9728)", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth.ProtectedResourceMetadataHandler(s.resourceMetadata(r, res)).ServeHTTP(w, r)
		}))
	}
}

// resourceMetadata is the metadata of the resource at path res ("" for the
// server as a whole, "/mcp" for the MCP endpoint) as r reaches it.
func (s *Server) resourceMetadata(r *http.Request, res string) *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               s.baseURL(r) + res,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "skillgate",
	}
}

// baseURL is the scheme and authority r reached the server with, or
// Options.PublicURL when set (a server behind a proxy that terminates
// TLS sees http and its own address).
func (s *Server) baseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimSuffix(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourceMetadataURL is the URL of the metadata describing what r asked
// for: the MCP endpoint's for a request to /mcp, the server's otherwise.
func (s *Server) resourceMetadataURL(r *http.Request) string {
	u := s.baseURL(r) + ResourceMetadataPath
	if r.URL.Path == mcpPath || strings.HasPrefix(r.URL.Path, mcpPath+"/") {
		u += mcpPath
	}
	return u
}

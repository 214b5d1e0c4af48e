package server_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/edge/server"
)

// TestResourceMetadata: the server publishes its OAuth 2.0 protected
// resource metadata (RFC 9728) without a token, at the well-known path and
// at its /mcp suffix, naming the resource as the client reached it, bearer
// tokens in the header, and no authorization server; a standard client
// (the go-sdk's oauthex) reads it from the resource_metadata of a 401.
func TestResourceMetadata(t *testing.T) {
	f := newFixture(t)
	host := strings.TrimPrefix(f.url, "http://")
	tests := []struct {
		name, method, path string
		status             int
		want               string
	}{
		{"server", "GET", "/.well-known/oauth-protected-resource", 200,
			`{"resource":"http://` + host + `","bearer_methods_supported":["header"],"resource_name":"skillgate"}`},
		{"mcp endpoint", "GET", "/.well-known/oauth-protected-resource/mcp", 200,
			`{"resource":"http://` + host + `/mcp","bearer_methods_supported":["header"],"resource_name":"skillgate"}`},
		{"preflight", "OPTIONS", "/.well-known/oauth-protected-resource/mcp", 204, ``},
		{"post", "POST", "/.well-known/oauth-protected-resource", 405, `Method not allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.url+tc.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := strings.TrimSpace(string(body)); resp.StatusCode != tc.status || got != tc.want {
				t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.path, resp.StatusCode, got, tc.status, tc.want)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q, want *", got)
			}
			if tc.status == 200 {
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
		})
	}

	// What an MCP client does on a 401: read the challenge, fetch the
	// metadata it names, check that it describes the URL it asked for.
	resp, err := http.Post(f.url+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	chs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(chs) != 1 || chs[0].Scheme != "bearer" {
		t.Fatalf("challenges %+v, %v", chs, err)
	}
	metaURL := chs[0].Params["resource_metadata"]
	if metaURL != f.url+"/.well-known/oauth-protected-resource/mcp" {
		t.Fatalf("resource_metadata %q", metaURL)
	}
	md, err := oauthex.GetProtectedResourceMetadata(t.Context(), metaURL, f.url+"/mcp", http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	if md.Resource != f.url+"/mcp" || len(md.AuthorizationServers) != 0 {
		t.Errorf("metadata %+v", md)
	}
}

// TestResourceMetadataPublicURL: behind a proxy, Options.PublicURL names
// the resource and the metadata in challenges, whatever the request's Host;
// without it a TLS request gets https.
func TestResourceMetadataPublicURL(t *testing.T) {
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	tokens, err := server.OpenTokens(filepath.Join(t.TempDir(), server.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, public, host string
		tls                bool
		resource, meta     string
	}{
		{"public url", "https://gw.example.com/", "10.0.0.5:7777", false,
			"https://gw.example.com/mcp", "https://gw.example.com/.well-known/oauth-protected-resource/mcp"},
		{"tls", "", "gw.example.com", true,
			"https://gw.example.com/mcp", "https://gw.example.com/.well-known/oauth-protected-resource/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := server.New(server.Options{Gateway: env.Gateway, Tokens: tokens, PublicURL: tc.public})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp", nil)
			req.Host = tc.host
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if want := `{"resource":"` + tc.resource + `","bearer_methods_supported":["header"],"resource_name":"skillgate"}`; strings.TrimSpace(w.Body.String()) != want {
				t.Errorf("metadata %s, want %s", w.Body, want)
			}
			req = httptest.NewRequest("POST", "/mcp", strings.NewReader(`{}`))
			req.Host = tc.host
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			w = httptest.NewRecorder()
			srv.ServeHTTP(w, req)
			if want := `Bearer realm="skillgate", resource_metadata="` + tc.meta + `"`; w.Code != 401 || w.Header().Get("WWW-Authenticate") != want {
				t.Errorf("401 challenge %d %q, want %q", w.Code, w.Header().Get("WWW-Authenticate"), want)
			}
		})
	}
}

package mcpclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestNegotiatesNewestVersion: skillgate's client asks a Go SDK server
// for the newest protocol version both speak, and records it: 2026-07-28
// over stdio and over stateless streamable HTTP, 2025-11-25 over the
// SDK's stateful HTTP handler (which serves the stateless protocol only
// in stateless mode). Over the stateless handler the raw path (a relayed
// tools/call is the SDK's over HTTP; resources/read as bytes is skillgate's
// own) works, which takes params._meta and the Mcp-Method and Mcp-Name
// headers the modern protocol requires.
func TestNegotiatesNewestVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, err := mcpclient.Introspect(ctx, testDecl(t, "stdio", testserver.ModeNormal, nil), testOptions(testLimits()))
	if err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion != "2026-07-28" {
		t.Errorf("stdio: negotiated %s, want 2026-07-28", r.ProtocolVersion)
	}
	c, err := mcpclient.Dial(ctx, testDecl(t, "stdio", testserver.ModeNormal, nil), &mcpclient.ConnOptions{Options: *testOptions(testLimits())})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	if err != nil || res.IsError {
		t.Errorf("stdio raw tools/call at 2026-07-28: %+v %v", res, err)
	}
	c.Close()

	for _, tc := range []struct {
		name      string
		stateless bool
		want      string
	}{{"stateful", false, "2025-11-25"}, {"stateless", true, "2026-07-28"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
			srv.AddResource(&mcp.Resource{URI: "test://note", Name: "note", MIMEType: "text/plain"},
				func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "a note"}}}, nil
				})
			mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+httpToken {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			r, err := mcpclient.Introspect(ctx, httpDecl(ts.URL), httpOptions(testLimits()))
			if err != nil {
				t.Fatal(err)
			}
			if r.ProtocolVersion != tc.want {
				t.Errorf("negotiated %s, want %s", r.ProtocolVersion, tc.want)
			}
			c, err := mcpclient.Dial(ctx, httpDecl(ts.URL), &mcpclient.ConnOptions{Options: *httpOptions(testLimits())})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if b, err := c.ReadResource(ctx, "test://note"); err != nil || string(b) != "a note" {
				t.Errorf("raw resources/read: %q %v", b, err)
			}
			if res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "hi") {
				t.Errorf("tools/call: %+v %v", res, err)
			}
		})
	}
}

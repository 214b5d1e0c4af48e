package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

const httpToken = "tok-5e1f0c"

// serveHTTP serves a test server mode over streamable HTTP, refusing
// requests without the expected bearer token.
func serveHTTP(t *testing.T, mode string, opts *mcp.StreamableHTTPOptions) string {
	t.Helper()
	srv, err := testserver.New(mode, testserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+httpToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func httpDecl(url string) mcpclient.ServerDecl {
	return mcpclient.ServerDecl{
		ID:        "remote",
		Transport: capability.TransportHTTP,
		URL:       url,
		Headers:   map[string]string{"Authorization": "Bearer ${API_TOKEN}"},
	}
}

func httpOptions(limits mcpclient.Limits) *mcpclient.Options {
	return &mcpclient.Options{
		Limits: limits,
		Credentials: func(name string) (string, bool) {
			if name == "API_TOKEN" {
				return httpToken, true
			}
			return "", false
		},
	}
}

func TestHTTPIntrospect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts *mcp.StreamableHTTPOptions
	}{
		{"stateful, server-sent events", nil},
		{"stateless, JSON responses", &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := serveHTTP(t, testserver.ModeNormal, tc.opts)
			r, err := mcpclient.Introspect(context.Background(), httpDecl(url), httpOptions(testLimits()))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Capabilities) != 8 || len(r.RawToolsList) != 1 {
				t.Fatalf("%d capabilities, %d raw pages", len(r.Capabilities), len(r.RawToolsList))
			}
			var page struct {
				Tools []json.RawMessage `json:"tools"`
			}
			if err := json.Unmarshal(r.RawToolsList[0].Result, &page); err != nil || len(page.Tools) != 8 {
				t.Errorf("raw page: %v, %d tools", err, len(page.Tools))
			}
			web, _ := r.Capability("web_search")
			if web.Risk.DataEgress.Value != capability.EgressNetwork {
				t.Errorf("web_search egress = %+v", web.Risk.DataEgress)
			}
			report, _ := json.Marshal(r)
			if strings.Contains(string(report), httpToken) {
				t.Error("the report contains the token")
			}
			if got := r.Declaration.Headers["Authorization"]; got != "[redacted]${API_TOKEN}" {
				t.Errorf("redacted header = %q", got)
			}
		})
	}
}

func TestHTTPConnCallTool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := serveHTTP(t, testserver.ModeRugPull, nil)
	drifted := make(chan capability.Drift, 4)
	opts := &mcpclient.ConnOptions{Options: *httpOptions(testLimits()), OnDrift: func(d capability.Drift) { drifted <- d }}
	c, err := mcpclient.Dial(ctx, httpDecl(url), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "add", map[string]any{"a": 20, "b": 22})
	if err != nil {
		t.Fatal(err)
	}
	if got := structured(t, res); got != `{"sum":42}` {
		t.Errorf("add = %s", got)
	}
	if _, err := c.CallTool(ctx, "mutate", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-drifted:
		if len(d.Changed) != 1 || d.Changed[0].Name != "add" || d.Changed[0].Fields[0].After != testserver.PoisonedAddDescription {
			t.Errorf("drift = %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no drift reported over HTTP")
	}
	if _, err := c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 1}); !errors.Is(err, mcpclient.ErrToolBlocked) {
		t.Errorf("CallTool(add) = %v; want ErrToolBlocked", err)
	}
}

func TestHTTPBadServers(t *testing.T) {
	t.Parallel()
	// A port that was open a moment ago and is closed now.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + l.Addr().String() + "/mcp"
	l.Close()

	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // lets the server notice the client leaving
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) }) // runs before hang.Close

	short := testLimits()
	short.InitializeTimeout = 300 * time.Millisecond

	tests := []struct {
		name    string
		url     string
		lookup  bool              // provide API_TOKEN
		headers map[string]string // replaces the declared headers when set
		limits  mcpclient.Limits
		wantIs  error
		wantErr string
	}{
		{
			name: "unreachable", url: closedURL, lookup: true,
			wantIs:  mcpclient.ErrServerStart,
			wantErr: `mcpclient: server "remote": start: server did not start: cannot reach ` + closedURL + `: connect: connection refused`,
		},
		{
			name: "missing credential", url: closedURL,
			wantIs:  mcpclient.ErrMissingCredential,
			wantErr: `mcpclient: server "remote": credentials: missing credential: headers.Authorization references ${API_TOKEN}, which is not set`,
		},
		{
			name: "hangs at initialize", url: hang.URL, lookup: true, limits: short,
			wantIs:  mcpclient.ErrTimeout,
			wantErr: `mcpclient: server "remote": initialize: server did not answer in time (limit 300ms)`,
		},
		{
			name: "frame over the limit (SSE)", url: serveHTTP(t, testserver.ModeHugeFrame, nil), lookup: true,
			wantIs:  mcpclient.ErrResponseTooLarge,
			wantErr: `mcpclient: server "remote": tools/list: response too large: a server-sent event line exceeded 4194304 bytes`,
		},
		{
			name:   "frame over the limit (JSON)",
			url:    serveHTTP(t, testserver.ModeHugeFrame, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}),
			lookup: true,
			wantIs: mcpclient.ErrResponseTooLarge, wantErr: `mcpclient: server "remote": tools/list: response too large: an HTTP response body exceeded 4194304 bytes`,
		},
		{
			name: "wrong token", url: serveHTTP(t, testserver.ModeNormal, nil),
			headers: map[string]string{"Authorization": "Bearer wrong"},
			wantIs:  mcpclient.ErrUnauthorized, wantErr: `mcpclient: server "remote": initialize: unauthorized: the server answered HTTP status 401 Unauthorized; check the credential its Authorization header references`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			limits := tc.limits
			if limits == (mcpclient.Limits{}) {
				limits = testLimits()
			}
			opts := httpOptions(limits)
			decl := httpDecl(tc.url)
			if tc.headers != nil {
				decl.Headers = tc.headers
			}
			if !tc.lookup {
				opts.Credentials = nil
			}
			start := time.Now()
			_, err := mcpclient.Introspect(context.Background(), decl, opts)
			if err == nil {
				t.Fatal("Introspect succeeded")
			}
			if err.Error() != tc.wantErr {
				t.Errorf("error\n got %s\nwant %s", err, tc.wantErr)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("errors.Is(err, %v) = false", tc.wantIs)
			}
			// A bound on hanging, not a performance figure: generous for
			// the race detector on a busy two-core machine.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestHTTPRedirectKeepsCredentials: a server that redirects elsewhere must
// not receive the declared credentials there; redirects are not followed.
func TestHTTPRedirectKeepsCredentials(t *testing.T) {
	t.Parallel()
	leaked := make(chan string, 8)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked <- r.Header.Get("Authorization")
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	t.Cleanup(target.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	_, err := mcpclient.Introspect(context.Background(), httpDecl(redirect.URL+"/mcp"), httpOptions(testLimits()))
	if !errors.Is(err, mcpclient.ErrConnection) {
		t.Errorf("Introspect = %v; want ErrConnection", err)
	}
	select {
	case got := <-leaked:
		t.Errorf("the redirect target was called (Authorization %q)", got)
	default:
	}
}

package server_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/edge/server"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
)

// TestTraceREST: with tracing on, each REST request gets a server span
// named after its route, a child of its traceparent header, with the
// response's status, and an MCP request over streamable HTTP its MCP span,
// a child of its _meta, exported over OTLP/HTTP.
func TestTraceREST(t *testing.T) {
	var mu sync.Mutex
	var spans []*tracepb.Span
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		mu.Unlock()
	}))
	defer rcv.Close()
	t.Setenv(telemetry.EnvEndpoint, rcv.URL) // the exporter reads the process's environment
	tr, err := telemetry.Open(context.Background(), telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := mcpservertest.NewEnv(t, examples, nil, nil)
	tokens, err := server.OpenTokens(filepath.Join(t.TempDir(), server.TokensFile))
	if err != nil {
		t.Fatal(err)
	}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: env.Manager, Catalog: env.Registry, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Gateway: gw, Tokens: tokens, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	// An MCP request over streamable HTTP: its span is the MCP one (a
	// child of its _meta), with network.transport tcp.
	secret, _, err := server.AddToken(tokens.Path(), capability.Principal{Tenant: "acme", Agent: "a", Tier: skill.T3}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: headers{http.Header{"Authorization": {"Bearer " + secret}}, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	const parent = "00f067aa0ba902b7"
	for _, path := range []string{"/v1/health", "/v1/scan"} {
		req := httptest.NewRequest("GET", path, nil)
		if path == "/v1/scan" {
			req.Method = "POST"
		}
		req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-"+parent+"-01")
		srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := map[string]int64{}
	listed := false
	for _, s := range spans {
		if s.Name != "GET /v1/health" && s.Name != "POST /v1/scan" && s.Name != "tools/list" {
			continue // the MCP handshake's own requests
		}
		if hex.EncodeToString(s.ParentSpanId) != parent || s.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("span %q: parent %x kind %v", s.Name, s.ParentSpanId, s.Kind)
		}
		for _, kv := range s.Attributes {
			if kv.Key == "http.response.status_code" {
				got[s.Name] = kv.Value.GetIntValue()
			}
			if s.Name == "tools/list" && kv.Key == "network.transport" && kv.Value.GetStringValue() == "tcp" {
				listed = true
			}
		}
	}
	if !listed {
		t.Error("no tools/list span with network.transport tcp")
	}
	if want := map[string]int64{"GET /v1/health": 200, "POST /v1/scan": 401}; len(got) != len(want) || got["GET /v1/health"] != 200 || got["POST /v1/scan"] != 401 {
		t.Errorf("spans %v, want %v", got, want)
	}
}

package broker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/platform/telemetry"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes every
// ExportTraceServiceRequest posted to /v1/traces and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// attrs returns a span's attributes as strings.
func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		if _, ok := kv.Value.Value.(*commonpb.AnyValue_StringValue); ok {
			out[kv.Key] = kv.Value.GetStringValue()
			continue
		}
		b, _ := json.Marshal(kv.Value)
		out[kv.Key] = string(b)
	}
	return out
}

// TestTraceCapabilityCall: a capability call relayed over stdio (the raw
// relay) and one served by the SDK (the in-memory transport, as over HTTP)
// are each exported over OTLP/HTTP as a server span, a child of the
// traceparent the agent put in params._meta, with the MCP conventions'
// attributes and the decision's, and a client span, its child, whose
// context the upstream server received in its own params._meta. The
// arguments appear in no span unless the operator opted in.
func TestTraceCapabilityCall(t *testing.T) {
	for _, payloads := range []bool{false, true} {
		t.Run(map[bool]string{false: "no payloads", true: "payloads"}[payloads], func(t *testing.T) {
			rcv := &otlpReceiver{}
			ts := httptest.NewServer(rcv)
			defer ts.Close()
			t.Setenv(telemetry.EnvEndpoint, ts.URL)
			t.Setenv(telemetry.EnvPayloads, map[bool]string{false: "", true: "1"}[payloads])
			ctx := context.Background()
			tr, err := telemetry.Open(ctx, telemetry.Options{})
			if err != nil || !tr.Enabled() {
				t.Fatalf("Open: %v %v", tr, err)
			}
			gw, tool := traceGateway(t, tr)
			p := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T1"}
			const (
				relayTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
				sdkTrace   = "0af7651916cd43dd8448eb211c80319c"
				parentSpan = "00f067aa0ba902b7"
				secret     = "s3cr3t-argument-value"
			)

			// The raw relay: JSON-RPC lines over a pipe.
			send, read := relayConn(t, gw, p)
			send(`{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"` + secret + `"},"_meta":{"traceparent":"00-` + relayTrace + `-` + parentSpan + `-01","tracestate":"vendor=x"}}}`)
			relayed := read()

			// The SDK's path.
			conn2, err := gw.Connect(ctx, p, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn2.Close()
			st, ct := mcp.NewInMemoryTransports()
			if _, err := conn2.Server().Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": secret},
				Meta: mcp.Meta{"traceparent": "00-" + sdkTrace + "-" + parentSpan + "-01"}})
			if err != nil || res.IsError {
				t.Fatalf("SDK call: %+v %v", res, err)
			}
			sdkText := res.Content[0].(*mcp.TextContent).Text
			// A call the policy denies: its span says so and names the
			// policy; nothing goes upstream.
			const denyTrace = "11f7651916cd43dd8448eb211c80319c"
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "deny"},
				Meta: mcp.Meta{"traceparent": "00-" + denyTrace + "-" + parentSpan + "-01"}})
			if err != nil || !res.IsError {
				t.Fatalf("denied call: %+v %v", res, err)
			}

			sctx2, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := tr.Shutdown(sctx2); err != nil {
				t.Fatal(err)
			}

			for _, tc := range []struct {
				name, trace, text, requestID, transport, version string
			}{
				{"relay", relayTrace, relayed, "call-1", "pipe", "2025-11-25"},
				// The go-sdk's client speaks the newest protocol; the SDK
				// does not give a middleware the request's id.
				{"sdk", sdkTrace, sdkText, "", "pipe", "2026-07-28"},
			} {
				rcv.mu.Lock()
				var server, client *tracepb.Span
				for _, s := range rcv.spans {
					if hex.EncodeToString(s.TraceId) != tc.trace {
						continue
					}
					switch s.Kind {
					case tracepb.Span_SPAN_KIND_SERVER:
						server = s
					case tracepb.Span_SPAN_KIND_CLIENT:
						client = s
					default:
						t.Errorf("%s: span %q of kind %v", tc.name, s.Name, s.Kind)
					}
				}
				rcv.mu.Unlock()
				if server == nil || client == nil {
					t.Fatalf("%s: trace %s has server span %v and client span %v", tc.name, tc.trace, server, client)
				}
				if want := "tools/call " + tool; server.Name != want {
					t.Errorf("%s: server span %q, want %q", tc.name, server.Name, want)
				}
				if got := hex.EncodeToString(server.ParentSpanId); got != parentSpan {
					t.Errorf("%s: server span's parent %s, want the agent's %s", tc.name, got, parentSpan)
				}
				if string(client.ParentSpanId) != string(server.SpanId) || client.Name != "tools/call echo" {
					t.Errorf("%s: client span %q is not the server span's child", tc.name, client.Name)
				}
				// The upstream server saw the client span's context.
				wantTP := "00-" + tc.trace + "-" + hex.EncodeToString(client.SpanId) + "-01"
				if !strings.Contains(tc.text, "(traceparent "+wantTP+")") {
					t.Errorf("%s: the upstream server did not receive traceparent %s: %s", tc.name, wantTP, tc.text)
				}
				sa := attrs(server)
				want := map[string]string{
					"mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool",
					"mcp.session.id": sa["mcp.session.id"], "mcp.protocol.version": tc.version, "network.transport": tc.transport,
					"skillgate.decision": "allow", "skillgate.capability": "tools/alpha:srv/echo", "skillgate.skill": "tools/alpha",
					"skillgate.server": "srv", "skillgate.policy.ids": `{"Value":{"ArrayValue":{"values":[{"Value":{"StringValue":"echo-allowed"}}]}}}`,
				}
				if tc.requestID != "" {
					want["jsonrpc.request.id"] = tc.requestID
				}
				if payloads {
					want["gen_ai.tool.call.arguments"] = sa["gen_ai.tool.call.arguments"]
					want["gen_ai.tool.call.result"] = sa["gen_ai.tool.call.result"]
					if !strings.Contains(sa["gen_ai.tool.call.arguments"], secret) {
						t.Errorf("%s: opted in, but the arguments are not recorded: %q", tc.name, sa["gen_ai.tool.call.arguments"])
					}
				}
				if sa["mcp.session.id"] == "" || !mapsEqual(sa, want) {
					t.Errorf("%s: server span attributes\n got %v\nwant %v", tc.name, sa, want)
				}
				ca := attrs(client)
				if ca["mcp.method.name"] != "tools/call" || ca["gen_ai.tool.name"] != "echo" || ca["skillgate.server"] != "srv" {
					t.Errorf("%s: client span attributes %v", tc.name, ca)
				}
			}
			rcv.mu.Lock()
			var denied []*tracepb.Span
			for _, s := range rcv.spans {
				if hex.EncodeToString(s.TraceId) == denyTrace {
					denied = append(denied, s)
				}
			}
			rcv.mu.Unlock()
			if len(denied) != 1 {
				t.Fatalf("denied call: %d spans, want its server span only", len(denied))
			}
			da := attrs(denied[0])
			if da["skillgate.decision"] != "deny" || !strings.Contains(da["skillgate.policy.ids"], `"no-deny"`) || da["error.type"] != "tool_error" {
				t.Errorf("denied call's span: %v", da)
			}
			// No argument value in any span unless opted in; then in the
			// calls' spans only.
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			for _, s := range rcv.spans {
				b, _ := proto.Marshal(s)
				want := payloads && strings.HasPrefix(s.Name, "tools/call ") && hex.EncodeToString(s.TraceId) != denyTrace
				if strings.Contains(string(b), secret) != want {
					t.Errorf("span %q holds the argument value: %v, want %v", s.Name, !want, want)
				}
			}
		})
	}
}

// traceGateway is an agent gateway whose broker forwards to the test
// server, with a policy (id echo-allowed) that allows every call, traced by
// tr (nil: off). It returns the echo capability's tool name.
func traceGateway(tb testing.TB, tr *telemetry.Tracer) (*mcpserver.Gateway, string) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.cedar"), []byte(`@id("echo-allowed")
permit(principal, action, resource);

@id("no-deny")
forbid(principal, action, resource) when { context.args has text && context.args.text == "deny" };
`), 0o600); err != nil {
		tb.Fatal(err)
	}
	eng := policy.New(&policy.Options{PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	sk := skillFor(tb, "tools/alpha")
	sk.Tier, sk.InvokableBy = 2, []string{"T0", "T1", "T2", "T3"}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	tb.Cleanup(func() { pool.Close() })
	br, err := broker.New(broker.Options{
		Load:    func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider: broker.NewPolicyDecider(eng), Upstream: pool, Tracer: tr,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := br.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	tool := ""
	for _, c := range br.Capabilities() {
		if c.Capability.CapabilityID == "echo" {
			tool = c.Name
		}
	}
	ge := mcpservertest.NewEnv(tb, filepath.Join("..", "..", "..", "examples", "skills"), nil, nil)
	gw, err := mcpserver.New(mcpserver.Options{Sessions: ge.Manager, Catalog: ge.Registry, Capabilities: br, Tracer: tr})
	if err != nil {
		tb.Fatal(err)
	}
	return gw, tool
}

// relayConn connects p to gw over a newline-delimited stream, as `skillgate
// mcp` does on its stdin and stdout, and finishes the MCP handshake: send
// writes a line, read returns the next line the gateway wrote.
func relayConn(tb testing.TB, gw *mcpserver.Gateway, p capability.Principal) (send func(string), read func() string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := gw.Connect(ctx, p, "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, stop := context.WithCancel(ctx)
	tb.Cleanup(stop)
	go func() { _ = conn.Server().Run(sctx, conn.StdioTransport(inR, outW)) }()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 1<<20)
	send = func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			tb.Fatal(err)
		}
	}
	read = func() string {
		if !out.Scan() {
			tb.Fatalf("no response: %v", out.Err())
		}
		return out.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, read
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestTraceExecutorCall: a call to an executor's capability records on
// its server span the executor, the provider and the backend the resolver
// chose, beside the decision; its client span, the call to that backend's
// server, is the server span's child.
func TestTraceExecutorCall(t *testing.T) {
	rcv := &otlpReceiver{}
	ts := httptest.NewServer(rcv)
	defer ts.Close()
	t.Setenv(telemetry.EnvEndpoint, ts.URL)
	ctx := context.Background()
	tr, err := telemetry.Open(ctx, telemetry.Options{})
	if err != nil || !tr.Enabled() {
		t.Fatalf("Open: %v %v", tr, err)
	}
	env := newTracedRoutingEnv(t, permitAll, broker.ExecutorPreferences{}, tr)
	acme := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}
	sctx, span := tr.StartServer(ctx, nil, telemetry.Request{Method: "tools/call", Target: "create_issue"})
	res, err := call(env.b, sctx, capability.Caller{Principal: acme, SessionID: "s1"}, "create_issue",
		json.RawMessage(strings.TrimSuffix(issueArgs, "}")+`,"provider":"gitlab"}`))
	if err != nil || res.IsError {
		t.Fatalf("create_issue: %+v %v", res, err)
	}
	if err := env.b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	span.End()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var server, client *tracepb.Span
	for _, s := range rcv.spans {
		switch s.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			server = s
		case tracepb.Span_SPAN_KIND_CLIENT:
			client = s
		default: // no other kind is made here
		}
	}
	if server == nil || client == nil || len(rcv.spans) != 2 {
		t.Fatalf("spans: %v", rcv.spans)
	}
	sa := attrs(server)
	want := map[string]string{
		"skillgate.decision": "allow", "skillgate.executor": "create_issue",
		"skillgate.provider": "gitlab", "skillgate.backend": "providers/gitlab:gitlab/create_issue",
		"skillgate.server": "gitlab", "skillgate.skill": "providers/gitlab",
	}
	for k, v := range want {
		if sa[k] != v {
			t.Errorf("server span %s = %q, want %q (all: %v)", k, sa[k], v, sa)
		}
	}
	if !bytes.Equal(client.ParentSpanId, server.SpanId) || !bytes.Equal(client.TraceId, server.TraceId) {
		t.Errorf("client span %x/%x is not the server span's child (%x/%x)", client.TraceId, client.ParentSpanId, server.TraceId, server.SpanId)
	}
}

package telemetry_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/skillgate/skillgate/internal/platform/telemetry"
)

// TestOpen: tracing is on only with an OTLP endpoint, and off whatever the
// endpoint with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none; a
// protocol, an exporter or a payloads switch skillgate cannot use is an
// ErrConfig naming the variable.
func TestOpen(t *testing.T) {
	const ep = "http://127.0.0.1:4318"
	tests := []struct {
		name     string
		env      map[string]string
		on       bool
		payloads bool
		err      string
	}{
		{"nothing set", nil, false, false, ""},
		{"endpoint", map[string]string{telemetry.EnvEndpoint: ep}, true, false, ""},
		{"traces endpoint", map[string]string{telemetry.EnvTracesEndpoint: ep + "/v1/traces"}, true, false, ""},
		{"grpc", map[string]string{telemetry.EnvEndpoint: "http://127.0.0.1:4317", telemetry.EnvProtocol: "grpc"}, true, false, ""},
		{"traces protocol wins", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvProtocol: "grpc", telemetry.EnvTracesProtocol: "http/protobuf"}, true, false, ""},
		{"payloads", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvPayloads: "1"}, true, true, ""},
		{"sdk disabled", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvSDKDisabled: "true"}, false, false, ""},
		{"exporter none", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvTracesExporter: "none"}, false, false, ""},
		{"payloads without endpoint", map[string]string{telemetry.EnvPayloads: "1"}, false, false, ""},
		{"http/json", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvProtocol: "http/json"}, false, false,
			`telemetry: invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL="http/json": want http/protobuf or grpc`},
		{"zipkin", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvTracesExporter: "zipkin"}, false, false,
			`telemetry: invalid configuration: OTEL_TRACES_EXPORTER="zipkin": skillgate exports traces over OTLP only (otlp, or none)`},
		{"payloads yes", map[string]string{telemetry.EnvEndpoint: ep, telemetry.EnvPayloads: "yes"}, false, false,
			`telemetry: invalid configuration: SKILLGATE_TRACE_PAYLOADS="yes": want 1 or 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := telemetry.Open(context.Background(), telemetry.Options{Getenv: func(k string) string { return tc.env[k] }})
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || !errors.Is(err, telemetry.ErrConfig) {
					t.Fatalf("Open = %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			if tr.Enabled() != tc.on || tr.Payloads() != tc.payloads {
				t.Errorf("Enabled %v Payloads %v, want %v %v", tr.Enabled(), tr.Payloads(), tc.on, tc.payloads)
			}
		})
	}
}

// TestOff: with tracing off every hook is a no-op that allocates nothing,
// and no trace context is written into params._meta.
func TestOff(t *testing.T) {
	var tr *telemetry.Tracer
	ctx := context.Background()
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`)
	result := []byte(`{"isError":true}`)
	allocs := testing.AllocsPerRun(100, func() {
		c, s := tr.StartServerLine(ctx, line, telemetry.Request{Method: "tools/call"})
		c, u := tr.StartClient(c, telemetry.Request{Method: "tools/call"})
		if telemetry.MetaJSON(c) != nil || telemetry.InjectMeta(c, nil) != nil || tr.SpanFromContext(c) != nil {
			t.Fatal("trace context without tracing")
		}
		u.Fail("x", "y")
		u.End()
		s.ToolResult(result)
		s.End()
	})
	if allocs != 0 {
		t.Errorf("%v allocations with tracing off", allocs)
	}
	r := httptest.NewRequest("GET", "/v1/health", nil)
	if r2, s := tr.StartHTTP(r, "/v1/health"); r2 != r || s != nil {
		t.Error("StartHTTP did something with tracing off")
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

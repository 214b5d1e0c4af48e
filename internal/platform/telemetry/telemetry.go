// Package telemetry is skillgate's OpenTelemetry tracing: one [Tracer],
// configured only by the standard OTEL_* environment variables, that the
// MCP server, the REST API, the capability gateway and the upstream client
// start their spans with, following the OpenTelemetry semantic conventions
// for MCP (span names "{mcp.method.name} {target}", mcp.method.name,
// gen_ai.tool.name, jsonrpc.request.id, mcp.protocol.version,
// mcp.session.id) and propagating the W3C trace context in MCP's
// params._meta (keys traceparent and tracestate) both ways.
//
// Tracing is off unless an OTLP endpoint is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). Off,
// [Open] returns a nil *Tracer, whose methods do nothing and return nil
// *Span values whose methods do nothing: a hook on a hot path costs a nil
// check and allocates nothing. On, spans go to an OTLP exporter over
// HTTP (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, the default) or gRPC
// (grpc), batched; the exporters read the other OTEL_EXPORTER_OTLP_*
// variables (headers, timeouts, TLS), the SDK reads OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, OTEL_BSP_*, OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES (service.name is "skillgate" by default).
//
// Arguments and results of calls are never recorded unless the operator
// opts in with SKILLGATE_TRACE_PAYLOADS=1 ([EnvPayloads]); they then go
// into gen_ai.tool.call.arguments and gen_ai.tool.call.result, the
// attributes the conventions reserve for them.
//
// The package knows MCP and JSON-RPC, not skills: the gateway's own
// attributes (the decision, the policies, the grant, the executor) are
// keys of the skillgate.* namespace set by the packages that know them.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Environment variables the package reads itself; the exporters and the
// SDK read the other OTEL_* variables.
const (
	// EnvEndpoint and EnvTracesEndpoint turn tracing on: the OTLP
	// collector's URL (or host:port for gRPC).
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	// EnvProtocol and EnvTracesProtocol choose the exporter: http/protobuf
	// (the default) or grpc.
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	// EnvSDKDisabled=true and EnvTracesExporter=none turn tracing off
	// whatever the endpoint, as the specification says.
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	// EnvPayloads=1 (or true) records the arguments and results of calls
	// in spans; off by default, as they may hold secrets and personal data.
	EnvPayloads = "SKILLGATE_TRACE_PAYLOADS"
)

// ErrConfig is the kind of error [Open] returns for an OTEL_* or
// SKILLGATE_TRACE_* value it cannot use.
var ErrConfig = errors.New("telemetry: invalid configuration")

// Options configures [Open].
type Options struct {
	// Getenv reads the environment; nil means os.Getenv. The exporters
	// and the SDK read the process environment themselves.
	Getenv func(string) string
	// ServiceVersion is service.version; empty leaves it out.
	ServiceVersion string
	// Logger receives export errors; nil discards them.
	Logger *slog.Logger
}

// Tracer starts skillgate's spans. A nil *Tracer is tracing turned off: every
// method is safe to call and does nothing. A Tracer is safe for concurrent
// use.
type Tracer struct {
	tp       *sdktrace.TracerProvider
	tr       trace.Tracer
	prop     propagation.TraceContext
	payloads bool
}

// scope is the instrumentation scope of skillgate's spans.
const scope = "github.com/skillgate/skillgate"

// Open returns the tracer the environment configures: nil (off, with a nil
// error) when no OTLP endpoint is set, or when OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. Errors: [ErrConfig] for a protocol or an
// exporter other than OTLP, or an unreadable SKILLGATE_TRACE_PAYLOADS;
// the exporter's own for a malformed endpoint. Call [Tracer.Shutdown] at
// exit to flush the spans not yet exported.
func Open(ctx context.Context, opts Options) (*Tracer, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return nil, nil
	}
	switch exp := strings.TrimSpace(getenv(EnvTracesExporter)); exp {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: %s=%q: skillgate exports traces over OTLP only (otlp, or none)", ErrConfig, EnvTracesExporter, exp)
	}
	if strings.TrimSpace(getenv(EnvEndpoint)) == "" && strings.TrimSpace(getenv(EnvTracesEndpoint)) == "" {
		return nil, nil
	}
	payloads := false
	switch v := strings.TrimSpace(getenv(EnvPayloads)); strings.ToLower(v) {
	case "", "0", "false":
	case "1", "true":
		payloads = true
	default:
		return nil, fmt.Errorf("%w: %s=%q: want 1 or 0", ErrConfig, EnvPayloads, v)
	}
	proto := strings.TrimSpace(getenv(EnvTracesProtocol))
	if proto == "" {
		proto = strings.TrimSpace(getenv(EnvProtocol))
	}
	var exp sdktrace.SpanExporter
	var err error
	switch proto {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%w: %s=%q: want http/protobuf or grpc", ErrConfig, EnvProtocol, proto)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", "skillgate")}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opts.ServiceVersion))
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the defaults.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("%w: resource: %w", ErrConfig, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{tp: tp, tr: tp.Tracer(scope), payloads: payloads}, nil
}

// Enabled reports whether spans are recorded: false for a nil Tracer.
func (t *Tracer) Enabled() bool { return t != nil }

// Payloads reports whether the operator opted in to recording the
// arguments and results of calls ([EnvPayloads]).
func (t *Tracer) Payloads() bool { return t != nil && t.payloads }

// Shutdown exports the spans not yet exported and stops the exporter,
// within ctx. It is idempotent; a nil Tracer has nothing to flush.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: flushing spans: %w", err)
	}
	return nil
}

package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/skillgate/skillgate/internal/platform/jsonscan"
)

// Attribute keys of the OpenTelemetry semantic conventions for MCP and
// generative AI that skillgate sets.
const (
	AttrMethod          = "mcp.method.name"
	AttrProtocolVersion = "mcp.protocol.version"
	AttrSessionID       = "mcp.session.id"
	AttrResourceURI     = "mcp.resource.uri"
	AttrRequestID       = "jsonrpc.request.id"
	AttrToolName        = "gen_ai.tool.name"
	AttrPromptName      = "gen_ai.prompt.name"
	AttrOperation       = "gen_ai.operation.name"
	AttrArguments       = "gen_ai.tool.call.arguments"
	AttrResult          = "gen_ai.tool.call.result"
	AttrTransport       = "network.transport"
	AttrProtocolName    = "network.protocol.name"
	AttrErrorType       = "error.type"
)

// Values of network.transport: MCP over stdio is "pipe", over streamable
// HTTP "tcp".
const (
	TransportPipe = "pipe"
	TransportTCP  = "tcp"
)

// MetaTraceparent and MetaTracestate are the keys of the W3C trace context
// in an MCP request's params._meta.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
)

// errToolError is error.type for a tools/call whose result has isError.
const errToolError = "tool_error"

// Request describes one MCP request for its span.
type Request struct {
	// Method is mcp.method.name (tools/call, resources/read, …).
	Method string
	// Target is the tool's name for tools/call (gen_ai.tool.name) or the
	// prompt's for prompts/get (gen_ai.prompt.name): the span is named
	// "{Method} {Target}", or Method alone when Target is empty.
	Target string
	// URI is mcp.resource.uri, for resources/read and the like: recorded,
	// not in the span name (it is not of low cardinality).
	URI string
	// RequestID is jsonrpc.request.id as sent, a string's value without
	// quotes or a number as written; empty for a notification.
	RequestID string
	// ProtocolVersion is mcp.protocol.version, SessionID mcp.session.id,
	// Transport network.transport ([TransportPipe], [TransportTCP]).
	ProtocolVersion, SessionID, Transport string
}

func (r *Request) name() string {
	if r.Target == "" {
		return r.Method
	}
	return r.Method + " " + r.Target
}

func (r *Request) attributes() []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 8)
	kv = append(kv, attribute.String(AttrMethod, r.Method))
	switch {
	case r.Target == "":
	case r.Method == "tools/call":
		kv = append(kv, attribute.String(AttrToolName, r.Target), attribute.String(AttrOperation, "execute_tool"))
	case r.Method == "prompts/get":
		kv = append(kv, attribute.String(AttrPromptName, r.Target))
	}
	if r.URI != "" {
		kv = append(kv, attribute.String(AttrResourceURI, r.URI))
	}
	if r.RequestID != "" {
		kv = append(kv, attribute.String(AttrRequestID, r.RequestID))
	}
	if r.ProtocolVersion != "" {
		kv = append(kv, attribute.String(AttrProtocolVersion, r.ProtocolVersion))
	}
	if r.SessionID != "" {
		kv = append(kv, attribute.String(AttrSessionID, r.SessionID))
	}
	if r.Transport != "" {
		kv = append(kv, attribute.String(AttrTransport, r.Transport))
		if r.Transport == TransportTCP {
			kv = append(kv, attribute.String(AttrProtocolName, "http"))
		}
	}
	return kv
}

// Span is a span in flight. A nil *Span (tracing off, or no span) is safe
// to use: its methods do nothing.
type Span struct {
	s        trace.Span
	payloads bool
}

// StartServer starts the server span of an MCP request received, a child
// of the trace context in its params._meta (meta; nil or without
// traceparent: of ctx's span, if any), and returns ctx with the span.
func (t *Tracer) StartServer(ctx context.Context, meta map[string]any, r Request) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	if len(meta) > 0 {
		ctx = t.prop.Extract(ctx, metaCarrier(meta))
	}
	return t.start(ctx, trace.SpanKindServer, r)
}

// metaKeys and traceKeys are the members StartServerLine reads.
var (
	paramsKey = []string{"params"}
	metaKey   = []string{"_meta"}
	traceKeys = []string{MetaTraceparent, MetaTracestate}
)

// StartServerLine is [Tracer.StartServer] for a request read as raw
// JSON-RPC bytes (the stdio relay's): the trace context is read from
// line's params._meta without decoding the rest.
func (t *Tracer) StartServerLine(ctx context.Context, line []byte, r Request) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	var params, meta [1][]byte
	var tc [2][]byte
	if jsonscan.Object(line, paramsKey, params[:]) && params[0] != nil &&
		jsonscan.Object(params[0], metaKey, meta[:]) && meta[0] != nil &&
		jsonscan.Object(meta[0], traceKeys, tc[:]) {
		m := make(map[string]any, 2)
		for i, k := range traceKeys {
			if tc[i] == nil {
				continue
			}
			if s, ok := jsonscan.PlainString(tc[i]); ok {
				m[k] = s
			}
		}
		ctx = t.prop.Extract(ctx, metaCarrier(m))
	}
	return t.start(ctx, trace.SpanKindServer, r)
}

// StartClient starts the client span of an MCP request skillgate sends
// (a call forwarded to an upstream server), a child of ctx's span, and
// returns ctx with the span: the upstream client writes its context into
// the request's params._meta ([MetaJSON], [InjectMeta]).
func (t *Tracer) StartClient(ctx context.Context, r Request) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, trace.SpanKindClient, r)
}

func (t *Tracer) start(ctx context.Context, kind trace.SpanKind, r Request) (context.Context, *Span) {
	ctx, s := t.tr.Start(ctx, r.name(), trace.WithSpanKind(kind), trace.WithAttributes(r.attributes()...))
	return ctx, &Span{s: s, payloads: t.payloads}
}

// StartHTTP starts the server span of a REST request, named "METHOD
// route" (route the pattern it matched, such as /v1/installs/{op}), a
// child of the request's traceparent header, and returns the request with
// the span in its context.
func (t *Tracer) StartHTTP(r *http.Request, route string) (*http.Request, *Span) {
	if t == nil {
		return r, nil
	}
	ctx := t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, s := t.tr.Start(ctx, r.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("http.request.method", r.Method),
		attribute.String("http.route", route),
		attribute.String("url.path", r.URL.Path),
	))
	return r.WithContext(ctx), &Span{s: s, payloads: t.payloads}
}

// SpanFromContext returns the span ctx carries, to add attributes to: nil
// when tracing is off or ctx carries none that records.
func (t *Tracer) SpanFromContext(ctx context.Context) *Span {
	if t == nil {
		return nil
	}
	s := trace.SpanFromContext(ctx)
	if !s.IsRecording() {
		return nil
	}
	return &Span{s: s, payloads: t.payloads}
}

// SetString sets a string attribute.
func (s *Span) SetString(key, value string) {
	if s != nil {
		s.s.SetAttributes(attribute.String(key, value))
	}
}

// SetStrings sets a string array attribute.
func (s *Span) SetStrings(key string, values []string) {
	if s != nil {
		s.s.SetAttributes(attribute.StringSlice(key, values))
	}
}

// SetBool sets a boolean attribute.
func (s *Span) SetBool(key string, value bool) {
	if s != nil {
		s.s.SetAttributes(attribute.Bool(key, value))
	}
}

// SetInt sets an integer attribute.
func (s *Span) SetInt(key string, value int) {
	if s != nil {
		s.s.SetAttributes(attribute.Int(key, value))
	}
}

// Arguments records a call's arguments (gen_ai.tool.call.arguments), only
// when the operator opted in ([EnvPayloads]).
func (s *Span) Arguments(raw []byte) {
	if s != nil && s.payloads && len(raw) > 0 {
		s.s.SetAttributes(attribute.String(AttrArguments, string(raw)))
	}
}

// ToolResult ends a tools/call's span with its result: error.type
// tool_error and an error status when the result has isError set; the
// result itself (gen_ai.tool.call.result) only when the operator opted in.
func (s *Span) ToolResult(raw []byte) {
	if s == nil {
		return
	}
	var v [1][]byte
	if jsonscan.Object(raw, isErrorKey, v[:]) && string(v[0]) == "true" {
		s.s.SetAttributes(attribute.String(AttrErrorType, errToolError))
		s.s.SetStatus(codes.Error, errToolError)
	}
	if s.payloads && len(raw) > 0 {
		s.s.SetAttributes(attribute.String(AttrResult, string(raw)))
	}
}

var isErrorKey = []string{"isError"}

// Fail marks the span failed: error.type is kind (a JSON-RPC error code,
// an error's type, a short class), the status an error with msg.
func (s *Span) Fail(kind, msg string) {
	if s != nil {
		s.s.SetAttributes(attribute.String(AttrErrorType, kind))
		s.s.SetStatus(codes.Error, msg)
	}
}

// End ends the span.
func (s *Span) End() {
	if s != nil {
		s.s.End()
	}
}

// MetaJSON returns ctx's trace context as a member of params, the bytes
// `"_meta":{"traceparent":"…"}` (with tracestate when there is one), for
// a request written as raw JSON; nil when ctx carries no valid span
// context (tracing off, or no span). It allocates nothing then.
func MetaJSON(ctx context.Context) []byte {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	var c propagation.MapCarrier = make(map[string]string, 2)
	propagation.TraceContext{}.Inject(ctx, c)
	b := make([]byte, 0, 96)
	b = append(b, `"_meta":{"traceparent":`...)
	b = append(b, jsonscan.Quote(c[MetaTraceparent])...)
	if ts := c[MetaTracestate]; ts != "" {
		b = append(b, `,"tracestate":`...)
		b = append(b, jsonscan.Quote(ts)...)
	}
	return append(b, '}')
}

// InjectMeta writes ctx's trace context into meta (a request's
// params._meta), making it when nil, and returns it; meta as it was when
// ctx carries no valid span context.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	if meta == nil {
		meta = make(map[string]any, 2)
	}
	propagation.TraceContext{}.Inject(ctx, metaCarrier(meta))
	return meta
}

// metaCarrier adapts a params._meta map to the propagator: string values
// only.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

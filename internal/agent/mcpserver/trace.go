package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/platform/telemetry"
)

// traceRequest is the receiving middleware of a traced connection: a
// server span per request the SDK serves, named and described as the
// OpenTelemetry conventions for MCP say, a child of the trace context in
// the request's params._meta. A capability call's span gets the gateway's
// decision from the capability source (see package broker). The stdio
// relay's calls, which the SDK does not see, get theirs from traceRelay.
// Notifications are not traced.
func (c *Conn) traceRequest(next mcp.MethodHandler) mcp.MethodHandler {
	t := c.g.opts.Tracer
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if len(method) > 14 && method[:14] == "notifications/" {
			return next(ctx, method, req)
		}
		r := telemetry.Request{Method: method, SessionID: c.sess.ID(), Transport: telemetry.TransportPipe}
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			r.Transport = telemetry.TransportTCP
		}
		if pv, ok := req.(interface{ ProtocolVersion() string }); ok {
			r.ProtocolVersion = pv.ProtocolVersion()
		}
		var meta map[string]any
		var args json.RawMessage
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
			meta = p.GetMeta()
			switch p := p.(type) {
			case *mcp.CallToolParamsRaw:
				r.Target, args = p.Name, p.Arguments
			case *mcp.GetPromptParams:
				r.Target = p.Name
			case *mcp.ReadResourceParams:
				r.URI = p.URI
			}
		}
		ctx, span := t.StartServer(ctx, meta, r)
		defer span.End()
		span.Arguments(args)
		res, err := next(ctx, method, req)
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			span.Fail(strconv.FormatInt(werr.Code, 10), werr.Message)
		case err != nil:
			span.Fail("_OTHER", err.Error())
		case method == "tools/call":
			if res, ok := res.(*mcp.CallToolResult); ok {
				if res.IsError {
					span.Fail("tool_error", "tool_error")
				}
				if t.Payloads() {
					b, _ := json.Marshal(res)
					span.ToolResult(b)
				}
			}
		}
		return res, err
	}
}

// traceRelay starts the server span of a capability call the stdio relay
// takes (id is its JSON-RPC id as sent), a child of the trace context in
// its params._meta. It returns ctx and nil when tracing is off, at the
// cost of a nil check.
func (c *Conn) traceRelay(ctx context.Context, line []byte, id, tool string, args json.RawMessage) (context.Context, *telemetry.Span) {
	t := c.g.opts.Tracer
	if !t.Enabled() {
		return ctx, nil
	}
	if s, err := strconv.Unquote(id); err == nil {
		id = s
	}
	r := telemetry.Request{Method: "tools/call", Target: tool, RequestID: id, SessionID: c.sess.ID(), Transport: telemetry.TransportPipe}
	for ss := range c.server.Sessions() {
		if ip := ss.InitializeParams(); ip != nil {
			r.ProtocolVersion = ip.ProtocolVersion
		}
	}
	ctx, span := t.StartServerLine(ctx, line, r)
	span.Arguments(args)
	return ctx, span
}

// endRelayed ends a relayed call's span with its result.
func endRelayed(span *telemetry.Span, result json.RawMessage) {
	if span == nil {
		return
	}
	span.ToolResult(result)
	span.End()
}

package mcpserver

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What leaves for an agent. Every answer the SDK serves passes through the
// receiving middleware agentBound; the answers skillgate writes itself (the
// stdio relay of capability calls, the MCP Skills extension's methods) pass
// through agentJSON and agentError. Two guarantees hold there, whatever the
// request held:
//
//   - every error is a JSON-RPC error that encodes: a *jsonrpc.Error whose
//     data is not JSON (the go-sdk builds its resource-not-found data with
//     Go's %q, which writes a control character as \x00, so that encoding
//     the response failed and the SDK closed the connection) gets its data
//     rebuilt, or dropped;
//   - no host path (the data directory, the sandbox state directories in
//     it, the scanned roots, mounted directories: Options.HostPaths) is in
//     an error, a tool result with isError, or an upstream server's result:
//     [hostpath.Scrubber.String] replaces each with "[host path]".

// agentBound is the receiving middleware through which every request the
// SDK serves is answered.
func (c *Conn) agentBound(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return nil, c.g.agentError(req, err)
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			c.g.scrubContent(r.Content)
		}
		return res, nil
	}
}

// agentError is err as an agent may receive it: a JSON-RPC error with a
// message and data free of host paths, and data that is JSON. A plain
// error keeps the code of a *jsonrpc.Error it wraps, as the SDK would give
// it. req (nil when unknown) is the request err answers.
func (g *Gateway) agentError(req mcp.Request, err error) error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err // the SDK answers nothing to a cancelled request
		}
		msg := g.scrub.String(err.Error())
		if msg == err.Error() {
			return err
		}
		return &jsonrpc.Error{Message: msg}
	}
	out := &jsonrpc.Error{Code: je.Code, Message: g.scrub.String(je.Message), Data: je.Data}
	if je != err {
		out.Message = g.scrub.String(err.Error()) // the outer message, as the SDK sends it
	}
	if len(out.Data) > 0 && !json.Valid(out.Data) {
		out.Data = nil
		if je.Code == mcp.CodeResourceNotFound {
			if uri, ok := requestURI(req); ok {
				out.Data, _ = json.Marshal(struct {
					URI string `json:"uri"`
				}{uri})
			}
		}
	}
	out.Data = g.scrub.JSON(out.Data)
	if out.Code == je.Code && out.Message == je.Message && string(out.Data) == string(je.Data) && je == err {
		return err
	}
	return out
}

// requestURI is the URI a resources/read or resources/(un)subscribe request
// names.
func requestURI(req mcp.Request) (string, bool) {
	if req == nil {
		return "", false
	}
	switch p := req.GetParams().(type) {
	case *mcp.ReadResourceParams:
		if p != nil {
			return p.URI, true
		}
	case *mcp.SubscribeParams:
		if p != nil {
			return p.URI, true
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			return p.URI, true
		}
	}
	return "", false
}

// scrubContent removes host paths from the text of content, in place.
func (g *Gateway) scrubContent(content []mcp.Content) {
	for _, ct := range content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			tc.Text = g.scrub.String(tc.Text)
		}
	}
}

// agentJSON is a result (an upstream server's tools/call result, a Skills
// extension answer) as an agent may receive it: raw itself unless it holds
// a host path.
func (g *Gateway) agentJSON(raw json.RawMessage) json.RawMessage { return g.scrub.JSON(raw) }

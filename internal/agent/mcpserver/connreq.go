package mcpserver

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// ConnectionRequirer is the optional ability of a [CapabilitySource] to
// tell that a tool it does not list for a principal is withheld only for
// a connection the principal lacks (docs/connections.md). A call of such a
// tool goes to the source, whose answer says which connection a human
// must make, rather than being refused as an unknown tool.
type ConnectionRequirer interface {
	// ConnectionRequired reports whether the tool name, not listed for p,
	// lacks only a connection of p's. It must not do I/O.
	ConnectionRequired(p capability.Principal, name string) bool
}

// connectionRequired is the receiving middleware that relays a tools/call
// of a tool the connection does not list, when the source says it lacks
// only a connection, to the source; any other call goes on to the SDK.
func (c *Conn) connectionRequired(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		r, ok := req.(*mcp.CallToolRequest)
		src, can := c.g.opts.Capabilities.(ConnectionRequirer)
		if !ok || !can || r.Params == nil || slices.Contains(capability.ReservedNames, r.Params.Name) {
			return next(ctx, method, req)
		}
		name := r.Params.Name
		c.mu.Lock()
		_, listed := c.capTools[name]
		c.mu.Unlock()
		if listed || !src.ConnectionRequired(c.sess.Principal(), name) {
			return next(ctx, method, req)
		}
		return c.g.callDecoded(ctx, c.g.opts.Capabilities, capability.Caller{Principal: c.sess.Principal(), SessionID: c.sess.ID()}, name, r.Params.Arguments)
	}
}

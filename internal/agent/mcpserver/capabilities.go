package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// CapabilitySource gives connections the upstream capabilities their
// principal may call: the tools of installed skills' MCP servers, inside
// the principal's capability scope. The gateway only lists and relays; the
// source decides every call (see package broker).
type CapabilitySource interface {
	// Tools returns the MCP tools principal p may call now, with names
	// unique among themselves and distinct from [capability.ReservedNames]. A tool
	// outside p's scope is not returned: it is invisible.
	Tools(ctx context.Context, p capability.Principal) ([]*mcp.Tool, error)
	// Call decides and, when allowed, forwards a call to the tool named
	// name, without holding a goroutine while the upstream server works.
	// done receives the JSON of the tools/call result exactly once,
	// possibly before Call returns: a refusal is a result with isError set
	// whose text says why and what a human must do. args are read only
	// before Call returns; result is only valid while done runs (see
	// mcpclient.ResultFunc), and done must not block for long. Connections
	// served over stdio ([Conn.StdioTransport]) relay the result as bytes;
	// others decode it for the SDK.
	Call(ctx context.Context, c capability.Caller, name string, args json.RawMessage, done func(result json.RawMessage))
}

// syncCapabilities makes the connection's capability tools match the
// source: new ones are added, changed ones replaced, ones that left the
// scope removed. Any change sends notifications/tools/list_changed.
func (c *Conn) syncCapabilities(ctx context.Context) error {
	src := c.g.opts.Capabilities
	if src == nil {
		return nil
	}
	tools, err := src.Tools(ctx, c.sess.Principal())
	if err != nil {
		return err
	}
	next := make(map[string]string, len(tools))
	for _, t := range tools {
		if slices.Contains(capability.ReservedNames, t.Name) {
			continue
		}
		b, _ := json.Marshal(t)
		next[t.Name] = string(b)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	prev := c.capTools
	c.capTools = next
	c.mu.Unlock()

	var gone []string
	for name := range prev {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		c.server.RemoveTools(gone...)
	}
	for _, t := range tools {
		def, ok := next[t.Name]
		if !ok || prev[t.Name] == def {
			continue
		}
		name := t.Name
		c.server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return c.g.callDecoded(ctx, src, capability.Caller{Principal: c.sess.Principal(), SessionID: c.sess.ID()}, name, req.Params.Arguments)
		})
	}
	return nil
}

// callDecoded makes a capability call for the SDK's tool handler: it waits
// for the result and decodes it. A result that does not decode is a tool
// error, as a refusal is.
func (g *Gateway) callDecoded(ctx context.Context, src CapabilitySource, who capability.Caller, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	ch := make(chan []byte, 1)
	src.Call(ctx, who, name, args, func(result json.RawMessage) { ch <- bytes.Clone(g.agentJSON(result)) })
	var res mcp.CallToolResult
	if err := json.Unmarshal(<-ch, &res); err != nil {
		msg := fmt.Sprintf("skillgate: the result of %s cannot be read: %v", name, err)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
	}
	return &res, nil
}

// CapabilitiesChanged brings every open connection's capability tools up
// to date, after an install state, a policy or a grant changed.
func (g *Gateway) CapabilitiesChanged(ctx context.Context) error {
	var first error
	for _, c := range g.connsOf("") {
		if err := c.syncCapabilities(ctx); err != nil && first == nil {
			first = err
			g.log.ErrorContext(ctx, "capability tools could not be refreshed", "session", c.sess.ID(), "err", err)
		}
	}
	return first
}

package gateway

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/capability"
)

// CapabilitySource gives connections the upstream capabilities their
// principal may call: the tools of installed skills' MCP servers, inside
// the principal's capability scope. The gateway only lists and relays; the
// source decides every call (see package broker).
type CapabilitySource interface {
	// Tools returns the MCP tools principal p may call now, with names
	// unique among themselves and distinct from [ReservedToolNames]. A tool
	// outside p's scope is not returned: it is invisible.
	Tools(ctx context.Context, p capability.Principal) ([]*mcp.Tool, error)
	// Call decides and, when allowed, forwards a call to the tool named
	// name. A refusal is a result with IsError set whose text says why and
	// what a human must do; an error is reserved for failures of skillgate
	// itself.
	Call(ctx context.Context, c Caller, name string, args json.RawMessage) (*mcp.CallToolResult, error)
}

// Caller identifies who makes a capability call.
type Caller struct {
	Principal capability.Principal
	SessionID string
}

// ReservedToolNames are the gateway's own tools; a capability never takes
// one of these names.
var ReservedToolNames = []string{
	ToolSkillList, ToolLoadSkill, ToolUnloadSkill,
	ToolLs, ToolReadFile, ToolGrep, ToolGlob, ToolWriteFile, ToolEditFile,
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
		if slices.Contains(ReservedToolNames, t.Name) {
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
			return src.Call(ctx, Caller{Principal: c.sess.Principal(), SessionID: c.sess.ID()}, name, req.Params.Arguments)
		})
	}
	return nil
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

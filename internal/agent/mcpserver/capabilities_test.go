package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// fixedSource answers each capability tool with a fixed result.
type fixedSource map[string]string

func (s fixedSource) Tools(context.Context, capability.Principal) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for name := range s {
		out = append(out, &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return out, nil
}

func (s fixedSource) Call(_ context.Context, _ capability.Caller, name string, _ json.RawMessage, done func(json.RawMessage)) {
	done(json.RawMessage(s[name]))
}

// TestSDKServedCapabilityCall: on a connection the SDK serves (in memory
// here, HTTP in `skillgate serve`), a capability call takes the same raw
// path and the gateway decodes its result for the SDK; a result that does
// not decode reaches the agent as a tool error naming the tool.
func TestSDKServedCapabilityCall(t *testing.T) {
	e := newEnv(t, storages[0])
	src := fixedSource{
		"echo":    `{"content":[{"type":"text","text":"relayed"}]}`,
		"garbled": `{"content":[{"type":"hologram"}]}`,
	}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: src})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := gw.Connect(ctx, principal("sdk", skill.T1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &client{cs: cs, conn: conn}
	tests := []struct {
		tool, want string
		isError    bool
	}{
		{"echo", "relayed", false},
		{"garbled", `skillgate: the result of garbled cannot be read: unrecognized content type "hologram"`, true},
	}
	for _, tt := range tests {
		got, isErr := c.call(t, tt.tool, map[string]any{})
		if got != tt.want || isErr != tt.isError {
			t.Errorf("%s: %q (error %v), want %q (error %v)", tt.tool, got, isErr, tt.want, tt.isError)
		}
	}
}

package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// plantedSource is a capability source whose one tool, leaky, fails with an
// upstream error naming a file in the data directory's sandbox state (what
// server-filesystem says of a path outside its allowed directories).
type plantedSource struct{ data string }

func (plantedSource) Tools(context.Context, capability.Principal) ([]*mcp.Tool, error) {
	return []*mcp.Tool{{Name: "leaky", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (s plantedSource) Call(_ context.Context, _ capability.Caller, _ string, _ json.RawMessage, done func(json.RawMessage)) {
	text, _ := json.Marshal("Access denied: file://" + s.data + "/sandbox/github/v1/notes.txt is outside " + s.data + "/sandbox/github/v1/allowed")
	done(json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}],"isError":true}`))
}

// TestHostPathsScrubbed: a data directory path planted in an upstream
// server's error, and in a JSON-RPC error's data, reaches the agent as
// "[host path]", over the SDK's path and over the stdio relay.
func TestHostPathsScrubbed(t *testing.T) {
	e := newEnv(t, storages[0])
	data := filepath.Join(t.TempDir(), ".skillgate")
	gw, err := mcpserver.New(mcpserver.Options{Sessions: e.mgr, Catalog: e.Registry, Capabilities: plantedSource{data}, HostPaths: []string{data, e.root}})
	if err != nil {
		t.Fatal(err)
	}
	const want = "Access denied: [host path]/sandbox/github/v1/notes.txt is outside [host path]/sandbox/github/v1/allowed"

	// The SDK's path (streamable HTTP serves every call this way).
	conn, err := gw.Connect(context.Background(), principal("scrub", skill.T1), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{conn: conn}
	st, ct := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	if c.cs, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil).Connect(context.Background(), ct, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cs.Close(); conn.Close() })
	if got, isErr := c.call(t, "leaky", map[string]any{}); !isErr || got != want {
		t.Errorf("SDK path: %q (isError %v), want %q", got, isErr, want)
	}
	_, err = c.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file://" + data + "/credentials.key"})
	if err == nil || strings.Contains(err.Error(), data) {
		t.Errorf("resources/read of a data directory file: %v", err)
	}
	if werr := (*jsonrpc.Error)(nil); !errors.As(err, &werr) || string(werr.Data) != `{"uri":"[host path]/credentials.key"}` {
		t.Errorf("resources/read error data: %#v", err)
	}

	// The stdio relay.
	a := newStdioAgent(t, gw)
	r := a.request(t, `"method":"tools/call","params":{"name":"leaky","arguments":{}}`)
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != want || !res.IsError {
		t.Errorf("stdio relay: %s", r.Result)
	}
}

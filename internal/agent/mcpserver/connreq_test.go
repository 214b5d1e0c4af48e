package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
)

// connSource lists echo; whoami it withholds for a connection the
// principal lacks, and answers its call with the refusal.
type connSource struct{ fixedSource }

func (connSource) ConnectionRequired(_ capability.Principal, name string) bool {
	return name == "whoami"
}

func (s connSource) Call(ctx context.Context, c capability.Caller, name string, args json.RawMessage, done func(json.RawMessage)) {
	if name == "whoami" {
		done(json.RawMessage(`{"content":[{"type":"text","text":"skillgate: connection required: remote for tenant acme (no account is connected)"}],"isError":true}`))
		return
	}
	s.fixedSource.Call(ctx, c, name, args, done)
}

// TestConnectionRequiredCall: a tool the connection does not list because
// it lacks only a connection is relayed to the source, whose answer says
// which; a tool the source does not know stays an unknown tool.
func TestConnectionRequiredCall(t *testing.T) {
	e := newEnv(t, storages[0])
	src := connSource{fixedSource{"echo": `{"content":[{"type":"text","text":"relayed"}]}`}}
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
	tests := []struct {
		tool, want string
		isError    bool
	}{
		{"echo", "relayed", false},
		{"whoami", "skillgate: connection required: remote for tenant acme (no account is connected)", true},
		{"nope", `calling "tools/call": unknown tool "nope"`, true},
	}
	for _, tt := range tests {
		var got string
		var isErr bool
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: map[string]any{}})
		if err != nil {
			got, isErr = err.Error(), true
		} else {
			var b strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			got, isErr = b.String(), res.IsError
		}
		if got != tt.want || isErr != tt.isError {
			t.Errorf("%s: %q (error %v), want %q (error %v)", tt.tool, got, isErr, tt.want, tt.isError)
		}
	}
}

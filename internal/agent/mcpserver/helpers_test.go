package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/model/skill"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
)

// storage is one way of storing skill trees and workspaces that the suite
// runs over: the skill's own directory plus a local blob directory, or an
// S3 bucket (when SKILLGATE_TEST_S3_ENDPOINT is set, see
// scripts/setup-s3.sh).
type storage struct {
	name string
	open func(t testing.TB) (session.Source, blob.Store)
}

var storages = []storage{
	{"local", func(t testing.TB) (session.Source, blob.Store) {
		st, err := local.Open(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return session.LocalSource{}, st
	}},
	{"s3", func(t testing.TB) (session.Source, blob.Store) {
		st := newS3(t)
		return &session.BlobSource{Store: st}, st
	}},
}

// newS3 returns a store over a fresh prefix of the test bucket, emptied when
// the test ends.
func newS3(t testing.TB) blob.Store {
	t.Helper()
	return blobtest.S3(t, "gateway")
}

// forEachStorage runs fn as a parallel subtest per storage; S3 skips,
// saying why, when no server is configured.
func forEachStorage(t *testing.T, fn func(t *testing.T, sg storage)) {
	t.Helper()
	for _, sg := range storages {
		t.Run(sg.name, func(t *testing.T) {
			if sg.name == "s3" && os.Getenv("SKILLGATE_TEST_S3_ENDPOINT") == "" {
				t.Skip("SKILLGATE_TEST_S3_ENDPOINT is unset; run `eval \"$(scripts/setup-s3.sh)\"` to test against a real S3 server")
			}
			t.Parallel()
			fn(t, sg)
		})
	}
}

// env wraps mcpservertest.Env with the names the tests use.
type env struct {
	*mcpservertest.Env
	root string
	mgr  *session.Manager
	gw   *mcpserver.Gateway
}

func newEnv(t testing.TB, sg storage) *env {
	t.Helper()
	src, ws := sg.open(t)
	e := mcpservertest.NewEnv(t, examples, src, ws)
	return &env{Env: e, root: e.Root, mgr: e.Manager, gw: e.Gateway}
}

func (e *env) scan(t testing.TB) { e.Scan(t) }

// principal returns a principal of tier t in tenant acme.
func principal(agent string, tier skill.AgentTier) capability.Principal {
	return capability.Principal{Tenant: "acme", Agent: agent, Tier: tier}
}

// client is an MCP client session connected in memory to a gateway
// connection, with counters for the notifications it received.
type client struct {
	cs    *mcp.ClientSession
	conn  *mcpserver.Conn
	tools chan struct{}
	res   chan string
}

func (e *env) connect(t testing.TB, p capability.Principal, sessionID string) *client {
	t.Helper()
	ctx := context.Background()
	conn, err := e.gw.Connect(ctx, p, sessionID, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{conn: conn, tools: make(chan struct{}, 16), res: make(chan string, 16)}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.tools <- struct{}{}:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case c.res <- req.Params.URI:
			default:
			}
		},
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c.cs, err = cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.cs.Close()
		conn.Close()
	})
	return c
}

// call calls a tool and returns its text and whether it is an error.
func (c *client) call(t testing.TB, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// structured returns a tool result's structured content decoded into v.
func (c *client) structured(t testing.TB, tool string, args map[string]any, v any) {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s %v: %v %+v", tool, args, err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

package broker_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/mcpserver/mcpservertest"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestExecutorListChanged: an agent connected over MCP sees one
// create_issue; disabling one provider skill keeps it under the same name
// (its provider enum changes, and the agent is told the list changed);
// disabling both makes it dormant: gone from tools/list, with
// notifications/tools/list_changed.
func TestExecutorListChanged(t *testing.T) {
	env := newRoutingEnv(t, permitAll, broker.ExecutorPreferences{})
	all := slices.Clone(env.skills)
	ge := mcpservertest.NewEnv(t, filepath.Join("..", "..", "..", "examples", "skills"), nil, nil)
	gw, err := mcpserver.New(mcpserver.Options{Sessions: ge.Manager, Catalog: ge.Registry, Capabilities: env.b})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := gw.Connect(ctx, capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T2"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	changed := make(chan struct{}, 16)
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	issue := func() (listed bool, enum string) {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "create_issue" {
				s := tl.InputSchema.(map[string]any)["properties"].(map[string]any)["provider"].(map[string]any)["enum"].([]any)
				for i, p := range s {
					if i > 0 {
						enum += ","
					}
					enum += p.(string)
				}
				return true, enum
			}
		}
		return false, ""
	}
	drain := func() {
		for {
			select {
			case <-changed:
			default:
				return
			}
		}
	}
	waitChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	if ok, enum := issue(); !ok || enum != "github,gitlab" {
		t.Fatalf("create_issue listed %v with providers %q", ok, enum)
	}
	drain()
	env.only(t, all, "providers/github")
	if err := gw.CapabilitiesChanged(ctx); err != nil {
		t.Fatal(err)
	}
	waitChanged("disabling gitlab")
	if ok, enum := issue(); !ok || enum != "github" {
		t.Fatalf("after disabling gitlab: create_issue listed %v with providers %q", ok, enum)
	}
	drain()
	env.only(t, all)
	if err := gw.CapabilitiesChanged(ctx); err != nil {
		t.Fatal(err)
	}
	waitChanged("disabling both")
	if ok, _ := issue(); ok {
		t.Fatal("create_issue is listed with no live backend")
	}
	drain()
	env.only(t, all, "providers/github", "providers/gitlab")
	if err := gw.CapabilitiesChanged(ctx); err != nil {
		t.Fatal(err)
	}
	waitChanged("enabling both")
	if ok, enum := issue(); !ok || enum != "github,gitlab" {
		t.Fatalf("after enabling both: create_issue listed %v with providers %q", ok, enum)
	}
}

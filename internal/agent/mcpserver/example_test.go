package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/mcpserver"
	"github.com/skillgate/skillgate/internal/agent/session"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// An agent connected to the MCP server sees a catalog first, and a skill's
// files only once it has loaded that skill: progressive disclosure.
func ExampleGateway_Connect() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "skillgate-example")
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "skills")
	for path, text := range map[string]string{
		"pdf/SKILL.md":        "---\nname: pdf\ndescription: Fill and merge PDF forms.\n---\nRun scripts/fill.py.\n",
		"pdf/scripts/fill.py": "print('filled')\n",
	} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755)
		_ = os.WriteFile(filepath.Join(root, path), []byte(text), 0o644)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "skillgate.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	reg := registry.New(db, registry.Options{})
	if _, err := reg.Scan(ctx, []discover.Root{{Path: root, Scope: discover.ScopeProject}}, nil); err != nil {
		fmt.Println(err)
		return
	}
	workspaces, _ := local.Open(filepath.Join(dir, "workspaces"), nil)
	defer workspaces.Close()
	sessions, err := session.NewManager(session.Options{
		Catalog: reg, Versions: db, Store: db, Source: session.LocalSource{}, Workspace: workspaces,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, err := mcpserver.New(mcpserver.Options{Sessions: sessions, Catalog: reg})
	if err != nil {
		fmt.Println(err)
		return
	}

	// One connection is one principal's session; here the agent's MCP
	// client is connected in memory (stdio and streamable HTTP carry the
	// same server).
	conn, err := gw.Connect(ctx, capability.Principal{Tenant: "acme", Agent: "bot", Tier: "T2"}, "", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	if _, err := conn.Server().Connect(ctx, serverSide, nil); err != nil {
		fmt.Println(err)
		return
	}
	agent, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agent.Close()

	call := func(tool string, args map[string]any) {
		res, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			fmt.Println(err)
			return
		}
		text := res.Content[0].(*mcp.TextContent).Text
		fmt.Printf("%s → error=%v %s\n", tool, res.IsError, strings.SplitN(text, "\n", 2)[0])
	}
	// The catalog holds names and descriptions; a skill's files appear
	// once it is loaded.
	call("skill_list", nil)
	call("read_file", map[string]any{"file_path": "/skills/pdf/scripts/fill.py"})
	call("load_skill", map[string]any{"skill": "pdf"})
	call("read_file", map[string]any{"file_path": "/skills/pdf/scripts/fill.py"})
	// Output:
	// skill_list → error=false 1 skills match; this page has 1, the last.
	// read_file → error=true Error: File '/skills/pdf/scripts/fill.py' not found
	// load_skill → error=false Loaded pdf at /skills/pdf
	// read_file → error=false      1	print('filled')
}

package install_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// A third-party skill is installed through deterministic checks against
// the MCP server it declares, never on a model's word: its tools are
// introspected, their risk comes from the server's annotations or an
// operator, and nothing is callable before a human approves. Here the
// skill's server is skillgate's test server (built by TestMain); a user's
// would be, say, `npx -y @modelcontextprotocol/server-memory`.
func ExampleService_Install() {
	ctx := context.Background()
	data, _ := os.MkdirTemp("", "skillgate-example")
	defer os.RemoveAll(data)

	// The skill as its author ships it: SKILL.md and mcp.json.
	src := filepath.Join(data, "src", "notes")
	_ = os.MkdirAll(src, 0o755)
	_ = os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: Keep notes with the notes server.\n---\nUse the tools.\n"), 0o644)
	decl, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"notes": map[string]any{"command": testServer, "env": map[string]string{"SKILLGATE_TESTSERVER": "normal"}},
	}})
	_ = os.WriteFile(filepath.Join(src, "mcp.json"), decl, 0o644)

	db, err := sqlite.Open(ctx, filepath.Join(data, "skillgate.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	opts := install.Options{Store: db, Root: filepath.Join(data, "imported")}
	opts.MCP.Limits = testLimits()
	svc, err := install.New(opts)
	if err != nil {
		fmt.Println(err)
		return
	}

	r, err := svc.Install(ctx, src, "operator:ana")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Capabilities {
		if c.Risk.RiskLevel.Source == "" {
			fmt.Printf("%-18s missing: the server states no risk\n", c.Name)
			continue
		}
		fmt.Printf("%-18s %-11s from %s\n", c.Name, c.Risk.RiskLevel.Value, c.Risk.RiskLevel.Source)
	}
	fmt.Println(r.State, "-", r.Reason)

	// Two tools state no risk: an operator completes them, with a reason
	// kept in the report and the audit log.
	for _, c := range []install.Completion{
		{Capability: "notes/bare", RiskLevel: "read", SideEffects: "none", DataEgress: "none", Why: "bare only returns ok; read its source"},
		{Capability: "notes/titled", RiskLevel: "write", SideEffects: "internal", DataEgress: "none", Why: "titled writes to the local notes store"},
	} {
		if r, err = svc.Complete(ctx, "notes", c, "operator:ana"); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(r.State)

	// Approving a subset leaves the other tools uncallable.
	if r, err = svc.Approve(ctx, "notes", []string{"notes/echo", "notes/add_note"}, "operator:ana"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, len(r.Approved.Capabilities), "capabilities approved by", r.Approved.Approval.By)
	if r, err = svc.Enable(ctx, "notes", "operator:ana"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State)
	// Output:
	// notes/add_note     write       from annotations
	// notes/bare         missing: the server states no risk
	// notes/delete_notes destructive from annotations
	// notes/echo         read        from annotations
	// notes/read_env     read        from annotations
	// notes/send_email   write       from server_meta
	// notes/titled       missing: the server states no risk
	// notes/web_search   read        from annotations
	// blocked - blocked: 2 capabilities lack risk metadata (notes/bare, notes/titled); run skillgate complete notes CAPABILITY --risk … --side-effects … --egress … --why "…"
	// awaiting_approval
	// installed 2 capabilities approved by operator:ana
	// enabled
}

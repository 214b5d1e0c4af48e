package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

func ExampleParseConfig() {
	cfg, err := mcpclient.ParseConfig([]byte(`{"mcpServers": {
		"github": {"url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
		"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
	}}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range cfg.Servers {
		fmt.Println(d.ID, d.Transport, d.Credentials())
	}
	gh, _ := cfg.Server("github")
	fmt.Println(gh)

	_, err = mcpclient.ParseConfig([]byte(`{"mcpServers": {"x": {"cmd": "srv"}}}`))
	fmt.Println(err)
	// Output:
	// github http [GITHUB_TOKEN]
	// memory stdio []
	// ServerDecl{"id":"github","transport":"http","url":"https://api.example.com/mcp","headers":{"Authorization":"[redacted]${GITHUB_TOKEN}"},"credentials":["GITHUB_TOKEN"]}
	// invalid mcp.json: mcpServers.x: unknown field "cmd"; a server has "command", "args", "env" (stdio) or "url", "headers" (streamable HTTP), and an optional "type"
}

func ExampleDeriveRisk() {
	tool := json.RawMessage(`{"name": "write_file", "inputSchema": {"type": "object"},
		"annotations": {"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false}}`)
	m, problems := mcpclient.DeriveRisk(tool)
	fmt.Println(m.RiskLevel.Value, m.SideEffects.Value, m.DataEgress.Value, len(problems))
	fmt.Println(m.RiskLevel.Basis)

	bare := json.RawMessage(`{"name": "mystery", "inputSchema": {"type": "object"}}`)
	m, _ = mcpclient.DeriveRisk(bare)
	fmt.Println(m.Unknown())
	// Output:
	// destructive internal none 0
	// annotations: readOnlyHint=false, destructiveHint=true
	// [riskLevel sideEffects dataEgress]
}

// ExampleIntrospect shows install-time introspection of a declared server.
func ExampleIntrospect() {
	cfg, err := mcpclient.ParseConfig([]byte(`{"mcpServers": {"memory": {"command": "mcp-server-memory"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	decl, _ := cfg.Server("memory")
	report, err := mcpclient.Introspect(context.Background(), decl, &mcpclient.Options{
		Credentials: func(name string) (string, bool) { return "", false },
	})
	if err != nil {
		log.Fatal(err) // a *mcpclient.ServerError naming the phase and cause
	}
	for _, c := range report.Capabilities {
		fmt.Println(c.CapabilityID, c.Risk.RiskLevel.Value, c.Risk.Unknown(), c.Err())
	}
}

// ExampleDial shows a run-time connection that enforces approved pins.
func ExampleDial() {
	var (
		decl     mcpclient.ServerDecl // from ParseConfig
		approved capability.PinSet    // from the install report
	)
	conn, err := mcpclient.Dial(context.Background(), decl, &mcpclient.ConnOptions{
		Pins:    &approved,
		OnDrift: func(d capability.Drift) { log.Printf("blocking %v:\n%s", d.Affected(), d) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	res, err := conn.CallTool(context.Background(), "read_graph", map[string]any{})
	if err != nil {
		log.Fatal(err) // ErrToolBlocked if read_graph drifted
	}
	fmt.Println(res.IsError)
}

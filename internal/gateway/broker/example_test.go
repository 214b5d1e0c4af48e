package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// An installed skill's tools reach an agent through the broker: it lists
// what the principal's scope holds, and decides each call against the
// policy before it is forwarded to the upstream server. Here the upstream
// server is this test binary (see TestMain); a user's would be, say,
// `npx -y @modelcontextprotocol/server-filesystem /srv/docs`.
func ExampleBroker_Call() {
	ctx := context.Background()
	exe, _ := os.Executable()
	decl := mcpclient.ServerDecl{ID: "srv", Transport: capability.TransportStdio, Command: exe, Env: serverEnv()}
	limits := mcpclient.Limits{InitializeTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, CallTimeout: 10 * time.Second}

	// What an install records: the server's tools as introspected (their
	// pins), and the risk an operator completed for each.
	rep, err := mcpclient.Introspect(ctx, decl, &mcpclient.Options{Limits: limits})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := &manifest.Manifest{SkillID: "notes", Version: "sha256:1"}
	for _, c := range rep.Capabilities {
		risk := c.Risk.Risk
		level, effects := capability.RiskRead, capability.SideEffectsNone
		if c.CapabilityID == "write_file" {
			level, effects = capability.RiskWrite, capability.SideEffectsInternal
		}
		risk.RiskLevel = capability.RiskField[capability.RiskLevel]{Value: level, Source: capability.SourceOperator, Basis: "reviewed"}
		risk.SideEffects = capability.RiskField[capability.SideEffects]{Value: effects, Source: capability.SourceOperator, Basis: "reviewed"}
		risk.DataEgress = capability.RiskField[capability.DataEgress]{Value: capability.EgressNone, Source: capability.SourceOperator, Basis: "reviewed"}
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: "srv", CapabilityID: c.CapabilityID, Risk: risk})
	}
	skills := []broker.Skill{{Key: "notes", Digest: "sha256:1", Manifest: m, Tier: 2, InvokableBy: []string{"T1", "T2", "T3"},
		Servers: map[string]mcpclient.ServerDecl{"srv": decl}, Pins: map[string]capability.PinSet{"srv": rep.Pins}}}

	// The policy: agents may invoke what their scope holds, but never write
	// outside /notes.
	engine := policy.New(nil)
	set, err := policy.ParsePolicies([]policy.Source{{Name: "base.cedar", Text: []byte(`
@id("invoke") permit (principal, action == Action::"invoke", resource);
@id("notes-only") forbid (principal, action, resource)
  when { resource.riskLevel == "write" && context.args has path && !(context.args.path like "/notes/*") };
`)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = engine.SetPolicies(set)

	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits})
	defer pool.Close()
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return skills, nil },
		Decider:  broker.NewPolicyDecider(engine),
		Upstream: pool,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := b.Reload(ctx); err != nil {
		fmt.Println(err)
		return
	}

	agent := capability.Caller{Principal: capability.Principal{Tenant: "acme", Agent: "bot", Tier: "T2"}, SessionID: "s1"}
	tools, _ := b.Tools(ctx, agent.Principal)
	for _, t := range tools {
		fmt.Println("tool:", t.Name)
	}
	for _, c := range []struct{ tool, args string }{
		{"echo", `{"text":"hello"}`},
		{"notes__write_file", `{"path":"/notes/todo"}`},
		{"notes__write_file", `{"path":"/etc/passwd"}`},
		{"delete_repo", `{}`},
	} {
		done := make(chan []byte, 1)
		b.Call(ctx, agent, c.tool, json.RawMessage(c.args), func(res json.RawMessage) { done <- bytes.Clone(res) })
		var res mcp.CallToolResult
		_ = json.Unmarshal(<-done, &res)
		fmt.Printf("%s → error=%v %s\n", c.tool, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// tool: echo
	// tool: notes__read_file
	// tool: notes__write_file
	// echo → error=false echo: hello
	// notes__write_file → error=false wrote /notes/todo
	// notes__write_file → error=true skillgate: call to notes__write_file denied: forbidden by notes-only [policy notes-only].
	// delete_repo → error=true skillgate: unknown tool "delete_repo": it is not among the capabilities you may call
}

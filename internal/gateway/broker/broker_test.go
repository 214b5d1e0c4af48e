package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
	"github.com/skillgate/skillgate/internal/testkit/testserver"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestMain doubles as the upstream server, the shared test server in its
// files mode (echo, and read_file and write_file, whose names clash with
// the gateway's): the tests start this binary again with
// testserver.EnvMode set.
func TestMain(m *testing.M) {
	if os.Getenv(testserver.EnvMode) != "" {
		os.Exit(testserver.Main())
	}
	os.Exit(m.Run())
}

// serverEnv is the environment of a declaration of the test server.
func serverEnv() map[string]string {
	return map[string]string{testserver.EnvMode: testserver.ModeFiles}
}

// openStore opens a fresh SQLite store, closed when the test ends.
func openStore(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func limits() mcpclient.Limits {
	return mcpclient.Limits{InitializeTimeout: 10 * time.Second, ListTimeout: 10 * time.Second, CallTimeout: 10 * time.Second, TerminateTimeout: 200 * time.Millisecond}
}

// skillFor introspects the test server and approves every tool, as an
// install would.
func skillFor(t testing.TB, key string) broker.Skill {
	t.Helper()
	exe, _ := os.Executable()
	decl := mcpclient.ServerDecl{ID: "srv", Transport: capability.TransportStdio, Command: exe, Env: serverEnv()}
	rep, err := mcpclient.Introspect(context.Background(), decl, &mcpclient.Options{Limits: limits()})
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{SkillID: key, Version: "sha256:1"}
	for _, c := range rep.Capabilities {
		risk := c.Risk.Risk
		// The test server states no risk; an operator would complete it.
		risk.RiskLevel = capability.RiskField[capability.RiskLevel]{Value: capability.RiskRead, Source: capability.SourceOperator, Basis: "echoes its input"}
		risk.SideEffects = capability.RiskField[capability.SideEffects]{Value: capability.SideEffectsNone, Source: capability.SourceOperator, Basis: "echoes its input"}
		risk.DataEgress = capability.RiskField[capability.DataEgress]{Value: capability.EgressNone, Source: capability.SourceOperator, Basis: "echoes its input"}
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: "srv", CapabilityID: c.CapabilityID, Risk: risk})
	}
	return broker.Skill{Key: key, Digest: "sha256:1", Servers: map[string]mcpclient.ServerDecl{"srv": decl},
		Pins: map[string]capability.PinSet{"srv": rep.Pins}, Manifest: m}
}

// listDecider lets tier T0 call everything and refuses echo with "deny" in
// its text; it stands in for the policy engine, tested on its own.
type listDecider struct {
	mu   sync.Mutex
	caps []*broker.Capability
}

func (d *listDecider) SetCapabilities(caps []*broker.Capability) {
	d.mu.Lock()
	d.caps = caps
	d.mu.Unlock()
}

func (d *listDecider) Scope(p capability.Principal) []*broker.Capability {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.Tier != "T0" {
		return nil
	}
	return d.caps
}

func (d *listDecider) Find(p capability.Principal, name string) *broker.Capability {
	for _, c := range d.Scope(p) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (d *listDecider) Decide(_ context.Context, _ capability.Principal, _ string, c *broker.Capability, args map[string]any) broker.Decision {
	if s, _ := args["text"].(string); strings.Contains(s, "deny") {
		return broker.Decision{Effect: capability.Deny, Reasons: []string{"policy no-deny (test.cedar:1)"}}
	}
	if strings.Contains(c.Skill, "approval") {
		return broker.Decision{Effect: capability.RequireApproval, Reasons: []string{"destructive capability"}, Approve: "skillgate grant add …"}
	}
	return broker.Decision{Effect: capability.Allow, Reasons: []string{"policy allow-all"}}
}

func TestBrokerNamesDecidesForwardsAudits(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	skills := []broker.Skill{skillFor(t, "tools/alpha"), skillFor(t, "beta")}
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return skills, nil },
		Decider:  &listDecider{},
		Upstream: pool,
		Audit:    w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	admin := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}
	tools, _ := b.Tools(ctx, admin)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	// echo is offered by two skills and read_file is a gateway tool: all
	// are namespaced by skill.
	if got := strings.Join(names, " "); got != "beta__echo beta__read_file beta__write_file tools--alpha__echo tools--alpha__read_file tools--alpha__write_file" {
		t.Fatalf("names: %s", got)
	}
	if tools[0].Description != "Echo the text." {
		t.Fatalf("definition not from the pin: %+v", tools[0])
	}
	// Outside the scope nothing is visible, and calling is the same as
	// calling a tool that does not exist.
	if other, _ := b.Tools(ctx, capability.Principal{Tenant: "acme", Agent: "a2", Tier: "T3"}); len(other) != 0 {
		t.Fatalf("T3 sees %d tools", len(other))
	}
	call := func(p capability.Principal, name, args string) (string, bool) {
		t.Helper()
		res, err := call(b, ctx, gatewayCaller(p), name, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	tests := []struct {
		p       capability.Principal
		name    string
		args    string
		want    string
		isError bool
	}{
		{admin, "beta__echo", `{"text":"hi"}`, "echo: hi", false},
		{admin, "tools--alpha__read_file", `{"path":"/x"}`, "contents of /x", false},
		{admin, "beta__echo", `{"text":"please deny"}`, "skillgate: call to beta__echo denied: policy no-deny (test.cedar:1).", true},
		{admin, "beta__echo", `{"text":5}`, "skillgate: invalid arguments for beta__echo: jsonschema validation failed", true},
		{admin, "beta__echo", `[1]`, "skillgate: invalid arguments for beta__echo: they must be a JSON object", true},
		// The empty object is validated once per capability, at load.
		{admin, "beta__echo", `{}`, "skillgate: invalid arguments for beta__echo: jsonschema validation failed", true},
		{admin, "beta__echo", `{}`, "skillgate: invalid arguments for beta__echo: jsonschema validation failed", true},
		{admin, "beta__echo", ` { } `, "skillgate: invalid arguments for beta__echo: jsonschema validation failed", true},
		{admin, "beta__echo", `null`, "skillgate: invalid arguments for beta__echo: jsonschema validation failed", true},
		{admin, "nope", `{}`, `skillgate: unknown tool "nope": it is not among the capabilities you may call`, true},
		{capability.Principal{Tenant: "acme", Agent: "a2", Tier: "T3"}, "beta__echo", `{"text":"hi"}`, `skillgate: unknown tool "beta__echo"`, true},
	}
	for _, tt := range tests {
		got, isErr := call(tt.p, tt.name, tt.args)
		if !strings.HasPrefix(got, tt.want) || isErr != tt.isError {
			t.Errorf("%s %s: got %q (error %v), want prefix %q", tt.name, tt.args, got, isErr, tt.want)
		}
	}
	// The records of answered calls are queued after their results are
	// passed on.
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rs, _ := audit.NewLog(db).Query(ctx, audit.Filter{Action: "capability.invoke"})
	if len(rs) != len(tests) {
		t.Fatalf("%d audit records for %d calls", len(rs), len(tests))
	}
	if r := rs[0]; r.Subject != "beta:srv/echo" || r.Decision != capability.Allow || r.Actor != "agent:acme/a1" || !strings.HasPrefix(r.ArgsHash, "sha256:") || r.LatencyNS <= 0 {
		t.Fatalf("first record %+v", r)
	}
	if r := rs[2]; r.Decision != capability.Deny || r.Reasons[0] != "policy no-deny (test.cedar:1)" {
		t.Fatalf("deny record %+v", r)
	}
	if _, err := audit.Verify(ctx, audit.NewLog(db), audit.Head{}); err != nil {
		t.Fatal(err)
	}

	// A skill that leaves takes its tools and its connection with it.
	skills = skills[1:]
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	tools, _ = b.Tools(ctx, admin)
	if len(tools) != 3 || tools[0].Name != "echo" || tools[1].Name != "tools--alpha__read_file" || tools[2].Name != "tools--alpha__write_file" {
		t.Fatalf("after reload: %v %v", tools[0].Name, tools[1].Name)
	}
	for _, st := range pool.Stats() {
		if strings.HasPrefix(st.Target, "beta@") {
			t.Fatalf("connection of the removed skill kept: %+v", st)
		}
	}
}

func gatewayCaller(p capability.Principal) capability.Caller {
	return capability.Caller{Principal: p, SessionID: "s1"}
}

// call makes a call through b and decodes its result, as the gateway does
// for a connection whose calls it does not relay.
func call(b *broker.Broker, ctx context.Context, who capability.Caller, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	ch := make(chan []byte, 1)
	b.Call(ctx, who, name, args, func(res json.RawMessage) { ch <- bytes.Clone(res) })
	var res mcp.CallToolResult
	if err := json.Unmarshal(<-ch, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/manifest"
	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// fsSkill is a skill whose mcp.json names the test server "fs", as many
// imported skills name their filesystem server; write_file is approved as
// destructive (every call needs a grant), the other tools as reads.
func fsSkill(t testing.TB, key string) broker.Skill {
	t.Helper()
	exe, _ := os.Executable()
	decl := mcpclient.ServerDecl{ID: "fs", Transport: capability.TransportStdio, Command: exe, Env: serverEnv()}
	rep, err := mcpclient.Introspect(context.Background(), decl, &mcpclient.Options{Limits: limits()})
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest.Manifest{SkillID: key, Version: "sha256:" + key}
	for _, c := range rep.Capabilities {
		level := capability.RiskRead
		if c.CapabilityID == "write_file" {
			level = capability.RiskDestructive
		}
		risk := capability.Risk{
			RiskLevel:   capability.RiskField[capability.RiskLevel]{Value: level, Source: capability.SourceOperator, Basis: "test"},
			SideEffects: capability.RiskField[capability.SideEffects]{Value: capability.SideEffectsInternal, Source: capability.SourceOperator, Basis: "test"},
			DataEgress:  capability.RiskField[capability.DataEgress]{Value: capability.EgressNone, Source: capability.SourceOperator, Basis: "test"},
		}
		m.Capabilities = append(m.Capabilities, manifest.Capability{ExtensionID: "fs", CapabilityID: c.CapabilityID, Risk: risk})
	}
	return broker.Skill{Key: key, Digest: "sha256:" + key, Servers: map[string]mcpclient.ServerDecl{"fs": decl},
		Pins: map[string]capability.PinSet{"fs": rep.Pins}, Manifest: m, Tier: 2, InvokableBy: []string{"T0", "T1", "T2", "T3"}}
}

// capabilityOf returns the broker's capability tool of skill key.
func capabilityOf(t testing.TB, b *broker.Broker, key, tool string) *broker.Capability {
	t.Helper()
	for _, c := range b.Capabilities() {
		if c.Skill == key && c.Capability.CapabilityID == tool {
			return c
		}
	}
	t.Fatalf("no capability %s of %s", tool, key)
	return nil
}

// TestGrantIsScopedBySkill: two imported skills both name their server
// "fs" and both offer write_file. A human's grant for one skill's
// write_file must not let an agent call the other's.
func TestGrantIsScopedBySkill(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	eng := policy.New(&policy.Options{Store: db})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	defer pool.Close()
	skills := []broker.Skill{fsSkill(t, "alpha"), fsSkill(t, "beta")}
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	var logs bytes.Buffer
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return skills, nil },
		Decider:  broker.NewPolicyDecider(eng),
		Upstream: pool,
		Audit:    w,
		Logger:   slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	// The grant names the capability as the gateway identifies it.
	granted := capabilityOf(t, b, "alpha", "write_file")
	if _, err := eng.AddGrant(ctx, policy.Grant{Principal: "acme/a1", Capability: granted.ID(), Level: capability.RiskDestructive, CreatedBy: "test"}); err != nil {
		t.Fatal(err)
	}
	agent := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	tests := []struct {
		name    string
		want    string
		isError bool
	}{
		{"alpha__write_file", "wrote /x", false},
		{"beta__write_file", "skillgate: beta__write_file needs a human's approval before you may call it: permitted by skillgate-default-permit [policy skillgate-default-permit]; beta:fs/write_file is destructive: a human must approve it. Ask a human operator to approve it; the request is recorded for them.", true},
	}
	for _, tt := range tests {
		res, err := call(b, ctx, gatewayCaller(agent), tt.name, json.RawMessage(`{"path":"/x"}`))
		if err != nil {
			t.Fatal(err)
		}
		got := res.Content[0].(*mcp.TextContent).Text
		if got != tt.want || res.IsError != tt.isError {
			t.Errorf("%s:\n got %q (error %v)\nwant %q (error %v)", tt.name, got, res.IsError, tt.want, tt.isError)
		}
	}
	// The agent is told a human must approve, never how: the command is
	// for operators, in the audit record, the log and ApprovalRequests.
	// The records of answered calls are queued after their results are
	// passed on.
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	const approve = "skillgate grant add acme/a1 beta:fs/write_file --level destructive --uses 1 --reason '…'"
	rs, _ := audit.NewLog(db).Query(ctx, audit.Filter{Action: "capability.invoke"})
	// An answered call is recorded once its result is passed on, so a
	// refusal right after it may be queued first: compare in call order.
	slices.SortFunc(rs, func(a, b audit.Record) int { return a.Time.Compare(b.Time) })
	if len(rs) != 2 || rs[0].Subject != "alpha:fs/write_file" || rs[0].Decision != capability.Allow ||
		rs[1].Subject != "beta:fs/write_file" || rs[1].Decision != capability.RequireApproval || string(rs[1].Data) != `{"approve":"skillgate grant add acme/a1 beta:fs/write_file --level destructive --uses 1 --reason '…'"}` {
		t.Fatalf("audit records %+v", rs)
	}
	if !strings.Contains(logs.String(), "approve=\""+strings.ReplaceAll(approve, "'", "'")+"\"") {
		t.Fatalf("the log does not give operators the command:\n%s", logs.String())
	}
	reqs, err := broker.ApprovalRequests(ctx, audit.NewLog(db), time.Time{})
	if err != nil || len(reqs) != 1 || reqs[0].Agent != "agent:acme/a1" || reqs[0].Capability != "beta:fs/write_file" || reqs[0].Times != 1 || reqs[0].Approve != approve {
		t.Fatalf("approval requests %+v %v", reqs, err)
	}
	// Once the operator grants it and the call goes through, it no longer waits.
	if _, err := eng.AddGrant(ctx, policy.Grant{Principal: "acme/a1", Capability: "beta:fs/write_file", Level: capability.RiskDestructive, Uses: 1}); err != nil {
		t.Fatal(err)
	}
	w = audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	b2, _ := broker.New(broker.Options{Load: func(context.Context) ([]broker.Skill, error) { return skills, nil }, Decider: broker.NewPolicyDecider(eng), Upstream: pool, Audit: w})
	if err := b2.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if res, _ := call(b2, ctx, gatewayCaller(agent), "beta__write_file", json.RawMessage(`{"path":"/y"}`)); res.IsError {
		t.Fatalf("granted call refused: %+v", res.Content[0])
	}
	if err := b2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if reqs, err := broker.ApprovalRequests(ctx, audit.NewLog(db), time.Time{}); err != nil || len(reqs) != 0 {
		t.Fatalf("answered request still listed: %+v %v", reqs, err)
	}
}

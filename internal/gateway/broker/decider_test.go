package broker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// deciderBroker serves skills through a PolicyDecider over eng, with a real
// pool of the shared test server.
func deciderBroker(t *testing.T, eng *policy.Engine, skills ...broker.Skill) (*broker.Broker, *broker.PolicyDecider) {
	t.Helper()
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits()})
	t.Cleanup(func() { pool.Close() })
	d := broker.NewPolicyDecider(eng)
	b, err := broker.New(broker.Options{
		Load:    func(context.Context) ([]broker.Skill, error) { return skills, nil },
		Decider: d, Upstream: pool,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b, d
}

// names lists the tool names of caps.
func names(caps []*broker.Capability) []string {
	var out []string
	for _, c := range caps {
		out = append(out, c.Name)
	}
	return out
}

// TestPolicyDeciderScope: a principal's scope is the policy engine's, as
// the broker's capabilities: tiers the skill does not admit see nothing, a
// tool outside the scope is not found, and a sub-agent sees only what its
// parent forwarded.
func TestPolicyDeciderScope(t *testing.T) {
	eng := policy.New(&policy.Options{})
	if err := eng.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, d := deciderBroker(t, eng, fsSkill(t, "alpha"), fsSkill(t, "beta"))
	lead := capability.Principal{Tenant: "acme", Agent: "lead", Tier: "T2"}
	small := capability.Principal{Tenant: "acme", Agent: "small", Tier: "T4"}
	all := []string{"alpha__echo", "alpha__read_file", "alpha__write_file", "beta__echo", "beta__read_file", "beta__write_file"}
	if got := names(d.Scope(lead)); !slices.Equal(got, all) {
		t.Fatalf("lead's scope %v, want %v", got, all)
	}
	if got := d.Scope(small); len(got) != 0 {
		t.Fatalf("T4's scope %v, want none (the skills are tier 2)", names(got))
	}
	if c := d.Find(lead, "beta__echo"); c == nil || c.ID() != "beta:fs/echo" {
		t.Fatalf("Find(lead, beta__echo) = %v", c)
	}
	for _, n := range []string{"echo", "nope"} {
		if c := d.Find(lead, n); c != nil {
			t.Fatalf("Find(lead, %s) = %s, want none", n, c.ID())
		}
	}
	if c := d.Find(small, "beta__echo"); c != nil {
		t.Fatalf("Find(T4, beta__echo) = %s, want none", c.ID())
	}

	kid := capability.Principal{Tenant: "acme", Agent: "kid", Tier: "T3"}
	scope, err := d.Delegate(lead, kid, []string{"alpha:fs/read_file", "beta:fs/echo", "gamma:fs/echo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(scope.Entries) != 2 {
		t.Fatalf("delegated scope %+v, want two entries", scope.Entries)
	}
	if got, want := names(d.Scope(kid)), []string{"alpha__read_file", "beta__echo"}; !slices.Equal(got, want) {
		t.Fatalf("sub-agent's scope %v, want %v", got, want)
	}
	if c := d.Find(kid, "alpha__write_file"); c != nil {
		t.Fatalf("the sub-agent found %s, which was not forwarded", c.ID())
	}
	const ambiguous = "invalid capability: fs/echo is offered by 2 skills (alpha:fs/echo, beta:fs/echo); name one of them"
	if _, err := d.Delegate(lead, kid, []string{"fs/echo"}); err == nil || err.Error() != ambiguous {
		t.Fatalf("short form two skills offer: %v, want %s", err, ambiguous)
	}
	const above = "sub-agent tier above its parent's: acme/kid cannot delegate to acme/lead at T2, above its own T3; give the sub-agent T3 or lower"
	if _, err := d.Delegate(kid, lead, nil); err == nil || err.Error() != above {
		t.Fatalf("delegation upwards: %v, want %s", err, above)
	}
}

// TestPolicyDeciderDecide: decisions as the broker sees them: allowed with
// the deciding policy, require_approval with the operator's command (not
// told to the agent), denied with the policy named by file and line but no
// host directory; a grant added by another process is seen on the
// require_approval path, and its use can be given back.
func TestPolicyDeciderDecide(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	dir := t.TempDir()
	cedar := "@id(\"permit-all\")\npermit (principal, action, resource);\n\nforbid (principal, action, resource) when { principal.agent == \"mallory\" };\n"
	if err := os.WriteFile(filepath.Join(dir, "base.cedar"), []byte(cedar), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := policy.New(&policy.Options{Store: db, PolicyDir: dir})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	b, d := deciderBroker(t, eng, fsSkill(t, "alpha"))
	d.Reload = eng.Reload
	agent := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	mallory := capability.Principal{Tenant: "acme", Agent: "mallory", Tier: "T3"}
	read := capabilityOf(t, b, "alpha", "read_file")
	write := capabilityOf(t, b, "alpha", "write_file")
	args := map[string]any{"path": "/x"}

	got := d.Decide(ctx, agent, "s1", read, args)
	if got.Effect != capability.Allow || strings.Join(got.Reasons, "; ") != "permitted by permit-all [policy permit-all, "+filepath.Join(dir, "base.cedar")+":1]" || got.Release != nil {
		t.Fatalf("read: %+v", got)
	}
	got = d.Decide(ctx, agent, "s1", write, args)
	const approve = "skillgate grant add acme/a1 alpha:fs/write_file --level destructive --uses 1 --reason '…'"
	if got.Effect != capability.RequireApproval || got.Approve != approve || strings.Contains(strings.Join(got.Told, " "), "grant add") {
		t.Fatalf("write: %+v", got)
	}
	got = d.Decide(ctx, mallory, "s1", read, args)
	told := strings.Join(got.Told, "; ")
	if got.Effect != capability.Deny || !strings.Contains(told, "base.cedar:4") || strings.Contains(told, dir) || !strings.Contains(strings.Join(got.Reasons, "; "), dir) {
		t.Fatalf("mallory: %+v", got)
	}

	// Another process (the CLI) grants the call: another engine over the
	// same store.
	other := policy.New(&policy.Options{Store: db, PolicyDir: dir})
	if err := other.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	// The CLI loads the installed capabilities before it grants: a grant
	// must name one that a skill offers.
	if err := other.SetCapabilities([]policy.Capability{{SkillKey: "alpha", SkillTrust: policy.TrustImported, SkillTier: 2, SkillState: policy.SkillEnabled,
		ExtensionID: "fs", CapabilityID: "write_file", Enabled: true, RiskLevel: capability.RiskDestructive,
		SideEffects: capability.SideEffectsInternal, DataEgress: capability.EgressNone}}); err != nil {
		t.Fatal(err)
	}
	g, err := other.AddGrant(ctx, policy.Grant{Principal: "acme/a1", Capability: "alpha:fs/write_file", Level: capability.RiskDestructive, Uses: 1, CreatedBy: "test"})
	if err != nil {
		t.Fatal(err)
	}
	got = d.Decide(ctx, agent, "s1", write, args)
	if got.Effect != capability.Allow || got.Release == nil || !strings.Contains(strings.Join(got.Reasons, "; "), g.ID) {
		t.Fatalf("write after the grant: %+v", got)
	}
	if err := got.Release(ctx); err != nil {
		t.Fatalf("giving the grant's use back: %v", err)
	}
	if got = d.Decide(ctx, agent, "s1", write, args); got.Effect != capability.Allow {
		t.Fatalf("write with the use given back: %+v", got)
	}
	if got = d.Decide(ctx, agent, "s1", write, args); got.Effect != capability.RequireApproval {
		t.Fatalf("write with the grant used up: %+v", got)
	}
}

// TestCallRelaysServerBytes: an allowed call's result is the server's own
// bytes, handed to done once; a refusal is answered before Call returns,
// and a server that cannot start is a tool error that says the call never
// reached it.
func TestCallRelaysServerBytes(t *testing.T) {
	ctx := context.Background()
	eng := policy.New(&policy.Options{})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	broken := fsSkill(t, "broken")
	decl := broken.Servers["fs"]
	decl.Command = filepath.Join(t.TempDir(), "no-such-server")
	broken.Servers["fs"] = decl
	b, _ := deciderBroker(t, eng, fsSkill(t, "alpha"), broken)
	agent := gatewayCaller(capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"})

	callOnce := func(name, args string) (string, bool) {
		t.Helper()
		results := make(chan string, 2)
		var returned, answeredFirst atomic.Bool
		b.Call(ctx, agent, name, json.RawMessage(args), func(res json.RawMessage) {
			answeredFirst.Store(!returned.Load())
			results <- string(res) // res is valid only while done runs
		})
		returned.Store(true)
		got := <-results
		select {
		case extra := <-results:
			t.Fatalf("%s: done called twice: %s, then %s", name, got, extra)
		default:
		}
		return got, answeredFirst.Load()
	}
	// Byte for byte what the go-sdk server wrote (at 2026-07-28, with its
	// identity in _meta).
	if got, _ := callOnce("alpha__echo", `{"text":"hi"}`); got != `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"skillgate-testserver","version":"1.0.0"}},"content":[{"type":"text","text":"echo: hi"}],"resultType":"complete"}` {
		t.Fatalf("allowed call: %s", got)
	}
	got, sync := callOnce("alpha__echo", `{"text":7}`)
	if !sync || !strings.HasPrefix(got, `{"content":[{"type":"text","text":"skillgate: invalid arguments for alpha__echo: `) || !strings.HasSuffix(got, `"}],"isError":true}`) {
		t.Fatalf("refusal (answered before Call returned: %v): %s", sync, got)
	}
	got, _ = callOnce("broken__echo", `{"text":"hi"}`)
	if !strings.HasPrefix(got, `{"content":[{"type":"text","text":"skillgate: broken__echo was allowed but never reached its server: `) {
		t.Fatalf("server that does not start: %s", got)
	}
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

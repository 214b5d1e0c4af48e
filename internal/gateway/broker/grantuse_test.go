package broker_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/decision/policy"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/storage/audit"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// TestOneUseGrantKeptWhenCallNotRelayed: a call whose server cannot be
// started (its credential is missing) never reached the server, so the
// one-use grant that allowed it keeps its use; the call that does reach
// the server consumes it.
func TestOneUseGrantKeptWhenCallNotRelayed(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	eng := policy.New(&policy.Options{Store: db})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	var haveToken atomic.Bool
	pool := mcpclient.NewPool(mcpclient.PoolOptions{Limits: limits(), RetryAfter: time.Nanosecond,
		Credentials: func(name string) (string, bool) { return "secret", name == "FS_TOKEN" && haveToken.Load() }})
	defer pool.Close()
	sk := fsSkill(t, "alpha")
	decl := sk.Servers["fs"]
	decl.Env = serverEnv()
	decl.Env["FS_TOKEN"] = "${FS_TOKEN}"
	sk.Servers["fs"] = decl
	w := audit.NewWriter(audit.NewLog(db), audit.WriterOptions{})
	b, err := broker.New(broker.Options{
		Load:     func(context.Context) ([]broker.Skill, error) { return []broker.Skill{sk}, nil },
		Decider:  broker.NewPolicyDecider(eng),
		Upstream: pool,
		Audit:    w,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := eng.AddGrant(ctx, policy.Grant{Principal: "acme/a1", Capability: "alpha:fs/write_file", Level: capability.RiskDestructive, Uses: 1, CreatedBy: "test"})
	if err != nil {
		t.Fatal(err)
	}
	agent := capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T3"}
	call := func() (string, bool) {
		t.Helper()
		res, err := call(b, ctx, gatewayCaller(agent), "alpha__write_file", json.RawMessage(`{"path":"/x"}`))
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	used := func() int {
		t.Helper()
		gs, err := db.Grants(ctx)
		if err != nil || len(gs) != 1 {
			t.Fatalf("%+v %v", gs, err)
		}
		if mem := eng.Grants()[0].Used; mem != gs[0].Used {
			t.Fatalf("engine counts %d uses, store %d", mem, gs[0].Used)
		}
		return gs[0].Used
	}
	for range 2 {
		got, isErr := call()
		if !isErr || !strings.HasPrefix(got, "skillgate: alpha__write_file was allowed but never reached its server: ") || !strings.Contains(got, "missing credential") {
			t.Fatalf("without the credential: %q (error %v)", got, isErr)
		}
		if n := used(); n != 0 {
			t.Fatalf("a call that never reached the server consumed the grant: used %d", n)
		}
	}
	haveToken.Store(true)
	if got, isErr := call(); isErr || got != "wrote /x" {
		t.Fatalf("with the credential: %q (error %v)", got, isErr)
	}
	if n := used(); n != 1 {
		t.Fatalf("used %d after the relayed call", n)
	}
	if got, isErr := call(); !isErr || !strings.Contains(got, "needs a human's approval") {
		t.Fatalf("after the grant's one use: %q (error %v)", got, isErr)
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
	if len(rs) != 4 || string(rs[0].Data) == "" || !strings.Contains(string(rs[0].Data), `"grantReleased":true`) || rs[2].Decision != capability.Allow {
		t.Fatalf("audit %+v", rs)
	}
	if !strings.Contains(strings.Join(rs[0].Reasons, " "), "grant "+g.ID) {
		t.Fatalf("the record does not name the grant: %+v", rs[0])
	}
}

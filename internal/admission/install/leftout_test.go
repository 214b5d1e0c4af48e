package install_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/admission/install"
	"github.com/skillgate/skillgate/internal/gateway/broker"
	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// allowAll is a decider that lets every principal call every capability;
// the policy engine is tested on its own.
type allowAll struct {
	mu   sync.Mutex
	caps []*broker.Capability
}

var _ broker.Decider = (*allowAll)(nil)

func (d *allowAll) SetCapabilities(caps []*broker.Capability) {
	d.mu.Lock()
	d.caps = caps
	d.mu.Unlock()
}

func (d *allowAll) Scope(capability.Principal) []*broker.Capability {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.caps
}

func (d *allowAll) Find(p capability.Principal, name string) *broker.Capability {
	for _, c := range d.Scope(p) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (d *allowAll) Decide(context.Context, capability.Principal, string, *broker.Capability, map[string]any) broker.Decision {
	return broker.Decision{Effect: capability.Allow, Reasons: []string{"test allows all"}}
}

// syncBuffer is a log sink safe for the pool's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLeftOutToolsAreNotDrift: the test server offers eight tools and the
// approval keeps two. The gateway's connection to the server, made with the
// approved pins, must not warn "pinned tools drifted" nor report drift for
// the six tools an operator deliberately left out; they stay uncallable.
func TestLeftOutToolsAreNotDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, install.Options{})
	src := writeSkill(t, t.TempDir(), "echoer", "allowed-tools: notes/echo notes/web_search\n---\nEchoes.\n", map[string]any{"notes": testServerDecl("normal", nil)})
	if _, err := e.svc.Install(ctx, src, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Approve(ctx, "echoer", nil, "operator:ana"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Enable(ctx, "echoer", "operator:ana"); err != nil {
		t.Fatal(err)
	}

	logs := &syncBuffer{}
	var mu sync.Mutex
	var drifts []string
	pool := mcpclient.NewPool(mcpclient.PoolOptions{
		Limits: testLimits(),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnDrift: func(_ mcpclient.Target, d capability.Drift) {
			mu.Lock()
			drifts = append(drifts, d.String())
			mu.Unlock()
		},
	})
	defer pool.Close()
	b, err := broker.New(broker.Options{Load: broker.LoadInstalled(e.svc), Decider: &allowAll{}, Upstream: pool})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	caller := capability.Caller{Principal: capability.Principal{Tenant: "acme", Agent: "a1", Tier: "T0"}, SessionID: "s1"}
	res, err := call(b, ctx, caller, "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || res.IsError {
		t.Fatalf("echo: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(drifts) != 0 {
		t.Errorf("drift reported for tools left out of the approval:\n%s", strings.Join(drifts, "\n"))
	}
	if got := logs.String(); strings.Contains(got, "drifted") {
		t.Errorf("log warns of drift:\n%s", got)
	}
	// A left-out tool is still refused by the connection.
	en, err := e.svc.Enabled(ctx)
	if err != nil || len(en) != 1 {
		t.Fatalf("enabled: %v %v", en, err)
	}
	if got := strings.Join(en[0].LeftOut["notes"], ","); got != "add_note,bare,delete_notes,read_env,send_email,titled" {
		t.Errorf("left out %q", got)
	}
	tg := mcpclient.Target{Skill: en[0].Key, Digest: en[0].Digest, Pins: en[0].Pins["notes"], LeftOut: en[0].LeftOut["notes"], Dir: en[0].Dir}
	tg.Server, _ = en[0].Config.Server("notes")
	const want = `mcpclient: server "notes": tools/call: tool blocked: tool "read_env": it was left out of the approval`
	errc := make(chan error, 1)
	pool.Call(ctx, capability.Principal{Tenant: "acme", Agent: "drafter", Tier: "T3"}, tg, "read_env", json.RawMessage(`{"name":"HOME"}`), func(_ json.RawMessage, err error) { errc <- err })
	if err := <-errc; err == nil || err.Error() != want {
		t.Errorf("read_env: %v, want %s", err, want)
	}
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
